/*
 * floor.h - what the bare-C programs of tools/pico/floor share: firmware_c's kernels on the
 * emulated RP2040 without MicroPython (the floor the native modules are measured against).
 *
 * Input: run.mjs writes it into flash at 2 MiB (emu.mjs's run slot, past the Pico's own 2 MiB,
 * emulator only) before boot: the words 'KBFL', the model file's length, the steps' length, then
 * the model file, then the steps as text (the host replay tools' stdin), NUL-terminated.
 * Output: UART0 carries the host tool's stdout; UART1 the cycles of every step ("overhead N",
 * then a number a line, kilobit.runtimes.kinds' times format); errors go to stderr through
 * KbEmu as "error: [step N: ]what", and main's return value is the exit status.
 */
#ifndef FLOOR_H
#define FLOOR_H

#include <stddef.h>
#include <stdint.h>

#include "kbemu.h"

#define FLOOR_SLOT ((const uint32_t *)0x10200000u)
#define FLOOR_MAGIC 0x4c46424bu /* 'KBFL' */
#define FLOOR_LINE_MAX 16384u

typedef struct {
    const uint8_t *model;
    uint32_t model_len;
    const char *next; /* the steps not read yet */
    const char *end;
    unsigned long step; /* steps read so far (blank lines do not count) */
} floor_input_t;

/* The core's cycle counter (rp2040js's core.cycles, read through KbEmu). A read is sampled at
 * the start of its LDR, so two reads back to back differ by that LDR's cost: the overhead. */
static inline uint32_t floor_cycles(void)
{
    return KBEMU->cycles;
}

/* Keeps the compiler from moving memory accesses across a counter read. */
#define FLOOR_BARRIER() __asm volatile("" ::: "memory")

void floor_start(void);               /* the UARTs */
void floor_init(floor_input_t *in);  /* the UARTs and the input */
int floor_next_line(floor_input_t *in, char *buf);
__attribute__((noreturn)) void floor_die(int status, const char *what, unsigned long step);

void floor_putc(char c);
void floor_puts(const char *s);
void floor_put_long(long v);
void floor_put_hex(const uint8_t *p, uint32_t n);

uint32_t floor_overhead(void);
void floor_times_begin(void);
void floor_time(uint32_t cycles);

int floor_is_space(char c);
const char *floor_skip_space(const char *s);
int floor_parse_uint(const char **s, unsigned long max, unsigned long *value);
int floor_parse_int(const char **s, long lo, long hi, long *value);

/* the C library pieces the compiler may call (no libc here) */
void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);

#endif /* FLOOR_H */
