/*
 * rkp_check.c - instantiate kb_rkp.h for an AVR with compile-time parameters, so that
 * `make avr-check` can show what the runtime costs in flash and RAM and prove that it links
 * without floating-point support code.
 *
 * The volatile buffers stand in for the serial port of a real firmware: they keep the
 * compiler from evaluating the learner at compile time or discarding it.
 */
#include <stdint.h>

#include "rkp_check_config.h"
#include "../kb_rkp.h"

volatile uint8_t kb_check_in[KB_RKP_CONST_DIMS + 1]; /* codes, then the label */
volatile int16_t kb_check_out;

int main(void)
{
    static kb_rkp_t model = KB_RKP_INIT(1); /* kb_rng_seed(0) */
    uint8_t u[KB_RKP_CONST_DIMS];
    for (;;) {
        uint8_t j, mistake;
        for (j = 0; j < KB_RKP_CONST_DIMS; j++)
            u[j] = kb_check_in[j];
        kb_check_out = (int16_t)kb_rkp_learn(&model, u, kb_check_in[KB_RKP_CONST_DIMS], &mistake);
        kb_check_out = (int16_t)(kb_rkp_predict(&model, u) + mistake);
    }
}
