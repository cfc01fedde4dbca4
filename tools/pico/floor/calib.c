/*
 * calib.c - how rp2040js counts cycles, against the Cortex-M0+ manual: loops of known
 * instruction cost (calib.S), each run for a few counts. Prints on UART0 one line per run,
 *
 *     overhead C                  two counter reads back to back (the first LDR's cost)
 *     NAME N C                    the loop NAME run N rounds: C cycles, the overhead taken off
 *
 * NAME: loop (SUBS + BNE), call (BL to a PUSH {r4, lr} / POP {r4, pc} leaf, SUBS, BNE), div
 * (MOVS, MOVS, BL __aeabi_uidiv through the SIO divider, SUBS, BNE). What the manual expects of
 * each is kilobit.runtimes.c.rp2040_floor.calibrate's to say. Needs no input.
 */
#include "floor.h"

uint32_t calib_empty(void);
uint32_t calib_loop(uint32_t n);
uint32_t calib_call(uint32_t n);
uint32_t calib_div(uint32_t n);

static void put_row(const char *name, uint32_t n, uint32_t cycles, uint32_t overhead)
{
    floor_puts(name);
    floor_putc(' ');
    floor_put_long((long)n);
    floor_putc(' ');
    floor_put_long((long)(cycles - overhead));
    floor_putc('\n');
}

int main(void)
{
    static const uint32_t counts[] = {1, 10, 1000, 100000};
    uint32_t overhead = 0xffffffffu, i, c;

    floor_start(); /* no input */
    for (i = 0; i < 8; i++) {
        c = calib_empty();
        if (c < overhead)
            overhead = c;
    }
    floor_puts("overhead ");
    floor_put_long((long)overhead);
    floor_putc('\n');
    for (i = 0; i < sizeof counts / sizeof counts[0]; i++)
        put_row("loop", counts[i], calib_loop(counts[i]), overhead);
    for (i = 0; i < sizeof counts / sizeof counts[0]; i++)
        put_row("call", counts[i], calib_call(counts[i]), overhead);
    for (i = 0; i < sizeof counts / sizeof counts[0]; i++)
        put_row("div", counts[i], calib_div(counts[i]), overhead);
    return 0;
}
