/*
 * floor.c - start-up glue, UART output, the input slot and the step-line tokens for the
 * programs of tools/pico/floor (floor.h says what goes where).
 */
#include "floor.h"

#define REG(addr) (*(volatile uint32_t *)(addr))
#define RESETS_CLR REG(0x4000f000u) /* RESETS_RESET, atomic-clear alias */
#define UART0 0x40034000u
#define UART1 0x40038000u
#define UART_DR 0x00u
#define UART_FR 0x18u /* bit 5: TXFF */
#define UART_IBRD 0x24u
#define UART_FBRD 0x28u
#define UART_LCR_H 0x2cu
#define UART_CR 0x30u

static void uart_init(uint32_t base)
{
    REG(base + UART_IBRD) = 67; /* 115200 baud from clk_peri = 125 MHz; rp2040js keeps no */
    REG(base + UART_FBRD) = 52; /* baud timing, so output costs only the register writes */
    REG(base + UART_LCR_H) = 0x70u; /* 8N1, FIFOs on */
    REG(base + UART_CR) = 0x301u;   /* UARTEN, TXE, RXE */
}

static void uart_putc(uint32_t base, char c)
{
    while (REG(base + UART_FR) & (1u << 5)) {
    }
    REG(base + UART_DR) = (uint8_t)c;
}

void floor_putc(char c)
{
    uart_putc(UART0, c);
}

void floor_puts(const char *s)
{
    while (*s)
        uart_putc(UART0, *s++);
}

/* Decimal digits into the end of buf; returns where they start. Divides by 10 through
 * divider.S (the SIO divider), as pico-sdk's printf would. */
static char *utoa10(unsigned long v, char *end)
{
    *--end = '\0';
    do {
        *--end = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    return end;
}

void floor_put_long(long v)
{
    char buf[16];
    unsigned long u = (unsigned long)v;
    if (v < 0) {
        floor_putc('-');
        u = 0ul - u;
    }
    floor_puts(utoa10(u, buf + sizeof buf));
}

void floor_put_hex(const uint8_t *p, uint32_t n)
{
    static const char hex[] = "0123456789abcdef";
    uint32_t i;
    for (i = 0; i < n; i++) {
        floor_putc(hex[p[i] >> 4]);
        floor_putc(hex[p[i] & 15u]);
    }
}

static void err_puts(const char *s)
{
    while (*s)
        KBEMU->err = (uint8_t)*s++;
}

void floor_die(int status, const char *what, unsigned long step)
{
    char buf[16];
    err_puts("error: ");
    if (step) {
        err_puts("step ");
        err_puts(utoa10(step, buf + sizeof buf));
        err_puts(": ");
    }
    err_puts(what);
    err_puts("\n");
    KBEMU->exit = (uint32_t)status;
    for (;;) {
        __asm volatile("wfi");
    }
}

void floor_start(void)
{
    RESETS_CLR = (1u << 22) | (1u << 23); /* UART0 and UART1 out of reset */
    uart_init(UART0);
    uart_init(UART1);
}

void floor_init(floor_input_t *in)
{
    const uint32_t *h = FLOOR_SLOT;
    floor_start();
    if (KBEMU->id != KBEMU_ID)
        floor_die(2, "not on the emulator (no KbEmu at 0x40070000)", 0);
    if (h[0] != FLOOR_MAGIC)
        floor_die(2, "no input in the slot (run the program with tools/pico/floor/run.mjs)", 0);
    in->model = (const uint8_t *)(h + 3);
    in->model_len = h[1];
    in->next = (const char *)(h + 3) + ((h[1] + 3u) & ~3u);
    in->end = in->next + h[2];
    in->step = 0;
}

int floor_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

const char *floor_skip_space(const char *s)
{
    while (floor_is_space(*s))
        s++;
    return s;
}

/* The next non-blank step line into buf (FLOOR_LINE_MAX bytes, NUL-terminated, its '\n'
 * dropped); 0 at the end of the steps. */
int floor_next_line(floor_input_t *in, char *buf)
{
    while (in->next < in->end) {
        uint32_t n = 0;
        while (in->next < in->end && *in->next != '\n') {
            if (n + 1u >= FLOOR_LINE_MAX)
                floor_die(3, "line too long", in->step + 1u);
            buf[n++] = *in->next++;
        }
        if (in->next < in->end)
            in->next++;
        buf[n] = '\0';
        if (*floor_skip_space(buf) != '\0') {
            in->step++;
            return 1;
        }
    }
    return 0;
}

/* An unsigned decimal token of at most `max` at *s, followed by a space or the end: the rules of
 * firmware_c/host/kb_tool.h's kb_parse_uint (no sign, no other base). */
int floor_parse_uint(const char **s, unsigned long max, unsigned long *value)
{
    const char *p = *s;
    unsigned long v = 0;
    if (*p < '0' || *p > '9')
        return 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10u + (unsigned long)(*p - '0');
        if (v > max)
            return 0;
        p++;
    }
    if (*p != '\0' && !floor_is_space(*p))
        return 0;
    *s = p;
    *value = v;
    return 1;
}

/* A decimal integer in lo..hi with an optional '-' (kb_assoc_replay's values and labels). */
int floor_parse_int(const char **s, long lo, long hi, long *value)
{
    const char *p = *s;
    unsigned long v;
    long x;
    const int neg = *p == '-';
    if (neg)
        p++;
    if (!floor_parse_uint(&p, 1000ul, &v))
        return 0;
    x = neg ? -(long)v : (long)v;
    if (x < lo || x > hi)
        return 0;
    *s = p;
    *value = x;
    return 1;
}

/* The counter's own cost: the least of a few back-to-back read pairs (always the first LDR's
 * cycles under rp2040js; the loop only guards against a future emulator's jitter). */
uint32_t floor_overhead(void)
{
    uint32_t best = 0xffffffffu;
    int i;
    for (i = 0; i < 8; i++) {
        uint32_t t0 = floor_cycles();
        uint32_t t1 = floor_cycles();
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    return best;
}

static void times_puts(const char *s)
{
    while (*s)
        uart_putc(UART1, *s++);
}

void floor_times_begin(void)
{
    char buf[16];
    times_puts("overhead ");
    times_puts(utoa10(floor_overhead(), buf + sizeof buf));
    times_puts("\n");
}

void floor_time(uint32_t cycles)
{
    char buf[16];
    times_puts(utoa10(cycles, buf + sizeof buf));
    times_puts("\n");
}

void *memcpy(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    while (n--)
        *d++ = *s++;
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    uint8_t *d = dst;
    while (n--)
        *d++ = (uint8_t)c;
    return dst;
}
