// The start-up every image for the emulated Pico shares (the MicroPython port's main.c, the
// bare-C floor in floor/): the vector table at the start of flash, where rp2040js, started
// without a bootrom (VTOR = 0x10000000), takes SP and PC from; .data copied, .bss cleared, then
// main(). What main returns (the floor's programs return; the port never does) becomes KbEmu's
// exit code. An image overrides the interrupt handlers it enables (kb_isr_timer0, kb_isr_uart0)
// and may say its last words in kb_fault; any other exception ends the emulation with code 4.
// Written so that it also builds with -std=c99 -pedantic (no range designators, no object
// pointer cast to a function pointer).
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kbemu.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
int main(void);
void kb_reset(void);
void kb_fault(void);
void kb_isr_timer0(void);
void kb_isr_uart0(void);

__attribute__((weak)) void kb_fault(void)
{
}

static void kb_isr_default(void)
{
    kb_fault();
    KBEMU->exit = 4;
    for (;;) {
        __asm volatile ("wfi");
    }
}

void kb_isr_timer0(void) __attribute__((weak, alias("kb_isr_default")));
void kb_isr_uart0(void) __attribute__((weak, alias("kb_isr_default")));

void kb_reset(void)
{
    memcpy(&_sdata, &_sidata, (size_t)((char *)&_edata - (char *)&_sdata));
    memset(&_sbss, 0, (size_t)((char *)&_ebss - (char *)&_sbss));
    KBEMU->exit = (uint32_t)main();
    for (;;) {
        __asm volatile ("wfi");
    }
}

// The initial SP, then 15 system vectors (reset first) and the RP2040's 26 interrupts.
#define D kb_isr_default
#define D5 D, D, D, D, D
__attribute__((section(".vectors"), used))
static const struct {
    uint32_t *sp;
    void (*handler[15 + 26])(void);
} kb_vectors = {
    &_estack,
    {
        kb_reset, D5, D5, D, D, D, D,  // reset; NMI .. SysTick
        kb_isr_timer0,                 // IRQ 0 TIMER_IRQ_0
        D5, D5, D5, D, D, D, D,        // IRQs 1-19
        kb_isr_uart0,                  // IRQ 20 UART0_IRQ
        D5,                            // IRQs 21-25
    },
};
