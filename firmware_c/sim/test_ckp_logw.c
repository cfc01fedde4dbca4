/*
 * test_ckp_logw: the CKP kernel weight w(k) (docs/contract.md 3.2) for every k in 0..65535,
 * one byte each on the UART in order of k, then stop (cli; sleep). tests/test_ckp_weights.py
 * compares the 65536 bytes with kilobit.core.kernel's weights for the same power table and C.
 *
 * Built like ckp_stream.c: -include of a ckp model header (kilobit.models.ckp.firmware.header;
 * only its
 * table, C and the parameters that select the step matter here), linked with
 * firmware_c/avr/kb_ckp_step.S. On a core without a multiplier (kb_ckp.h's KB_CKP_ASM) it
 * calls the assembly's own logw, which -DKB_CKP_LOGW_ENTRY exports as kb_ckp_logw: a wrong
 * rounding there changes only a few k, which no learning stream is sure to reach. Elsewhere
 * (the Uno) and with -DKB_CKP_NO_ASM it calls kb_ckp.h's kb_ckp_log_weight, the C the step
 * uses there, with the same narrow key type.
 */
#include <avr/io.h>
#include <stdint.h>

#ifndef KB_CKP_CONST
#error "build with -include of a model header (kilobit.models.ckp.firmware.header)"
#endif

/* The headers carry a whole firmware's statics; this one uses the weight and the UART only. */
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-variable"
#include "../kb_ckp.h"
#include "../avr/kb_uart.h"

#ifdef KB_CKP_ASM
#ifndef KB_CKP_LOGW_ENTRY
#error "build with -DKB_CKP_LOGW_ENTRY: the assembly exports logw only then"
#endif
/* kb_ckp_step.S reads the model by name (its step is linked too, though never called) */
kb_ckp_t kb_ckp_model;

/* logw is outside the C ABI: key in r25:r24, weight in r22, and it names what it changes */
static uint8_t kb_weight(uint16_t k)
{
    register uint16_t key __asm__("r24") = k;
    register uint8_t w __asm__("r22");
    __asm__ __volatile__("%~call kb_ckp_logw"
                         : "=r"(w), "+r"(key)
                         :
                         : "r0", "r18", "r20", "r21", "r23", "r30", "r31");
    return w;
}
#else
static uint8_t kb_weight(uint16_t k)
{
    return kb_ckp_log_weight(kb_ckp_table, KB_CKP_CONST_NTAB, KB_CKP_CONST_C,
                             (kb_ckp_dist_t)k);
}
#endif

int main(void)
{
    uint16_t k = 0;
    kb_uart_init();
    do
        kb_tx(kb_weight(k));
    while (++k != 0);
    kb_stop();
    return 0;
}
