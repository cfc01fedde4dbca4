/*
 * kb_uart.h - the UART side of kilobit's frame protocol on an AVR (docs/uart-protocol.md), for
 * the streaming firmwares: line set-up, blocking byte I/O, the CRC-8 of every frame, replies.
 *
 *     request  A5 | op | len (u16 LE) | payload[len] | crc8(op, len, payload)
 *     reply    5A | code | len (u16 LE) | payload[len] | crc8(code, len, payload)
 *
 * CRC-8 is polynomial 0x07, initial value 0, no reflection (CRC-8/SMBUS):
 * kilobit.runtimes.avr.protocol.crc8
 * on the host. The running CRC lives in the general-purpose I/O register GPIOR0 (no RAM).
 * Include once per firmware, after <avr/io.h>, with F_CPU (and optionally BAUD) defined.
 */
#ifndef KB_UART_H
#define KB_UART_H

#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <stdint.h>

#ifndef F_CPU
#error "F_CPU must be defined"
#endif
#ifndef BAUD
#define BAUD 250000UL /* exact with U2X at 4 MHz (UBRR 1) and 16 MHz (UBRR 7) */
#endif
#include <util/setbaud.h>

#if defined(UCSR0A) /* ATmega328P */
#define K_UDR UDR0
#define K_UCSRA UCSR0A
#define K_UCSRB UCSR0B
#define K_UCSRC UCSR0C
#define K_UBRRH UBRR0H
#define K_UBRRL UBRR0L
#define K_RXC RXC0
#define K_UDRE UDRE0
#define K_U2X U2X0
#define K_RXEN RXEN0
#define K_TXEN TXEN0
#define K_UCSZ0 UCSZ00
#define K_UCSZ1 UCSZ01
#else /* ATtiny2313 / ATtiny4313 */
#define K_UDR UDR
#define K_UCSRA UCSRA
#define K_UCSRB UCSRB
#define K_UCSRC UCSRC
#define K_UBRRH UBRRH
#define K_UBRRL UBRRL
#define K_RXC RXC
#define K_UDRE UDRE
#define K_U2X U2X
#define K_RXEN RXEN
#define K_TXEN TXEN
#define K_UCSZ0 UCSZ0
#define K_UCSZ1 UCSZ1
#endif

#define KB_PROTO_VERSION 1
#define KB_SYNC_REQ 0xA5
#define KB_SYNC_REP 0x5A
#define KB_REP_ERROR 'E'
#define KB_ERR_FRAME_CRC 1
#define KB_ERR_FRAME_LEN 2
#define KB_ERR_FRAME_CODE 3
#define KB_ERR_FRAME_LABEL 4
#define KB_ERR_FRAME_OP 5

#define KB_CRC GPIOR0 /* CRC-8 accumulator of the frame being read or written */
#define KB_DIRTY GPIOR2 /* 1: the memory changed since the last dump (a learner sets it) */
#define MARK(v) (GPIOR1 = (uint8_t)(v)) /* a cycle marker for the simulator (kb_sim) */
#define KB_BARRIER() __asm__ __volatile__("" ::: "memory") /* keeps work between markers */

static inline void kb_uart_init(void)
{
    K_UBRRH = UBRRH_VALUE;
    K_UBRRL = UBRRL_VALUE;
#if USE_2X
    K_UCSRA = (uint8_t)(1 << K_U2X);
#else
    K_UCSRA = 0;
#endif
    K_UCSRC = (uint8_t)((1 << K_UCSZ1) | (1 << K_UCSZ0)); /* 8N1 */
    K_UCSRB = (uint8_t)((1 << K_RXEN) | (1 << K_TXEN));
}

static void kb_crc_add(uint8_t b)
{
    uint8_t c = (uint8_t)(KB_CRC ^ b), i;
    for (i = 8; i != 0; i--)
        c = (c & 0x80u) ? (uint8_t)((uint8_t)(c << 1) ^ 0x07u) : (uint8_t)(c << 1);
    KB_CRC = c;
}

static uint8_t kb_rx(void)
{
    while (!(K_UCSRA & (1 << K_RXC)))
        ;
    return K_UDR;
}

static uint8_t kb_rx_crc(void)
{
    const uint8_t b = kb_rx();
    kb_crc_add(b);
    return b;
}

static void kb_tx(uint8_t b)
{
    while (!(K_UCSRA & (1 << K_UDRE)))
        ;
    K_UDR = b;
}

static void kb_tx_crc(uint8_t b)
{
    kb_crc_add(b);
    kb_tx(b);
}

static void kb_tx16(uint16_t v)
{
    kb_tx_crc((uint8_t)v);
    kb_tx_crc((uint8_t)(v >> 8));
}

/* static inline: a firmware that sends no 32-bit field (all but predict_stream.c) neither
 * links it nor trips -Wunused-function. */
static inline void kb_tx32(uint32_t v)
{
    kb_tx16((uint16_t)v);
    kb_tx16((uint16_t)(v >> 16));
}

static void kb_reply_begin(uint8_t code, uint16_t len)
{
    kb_tx(KB_SYNC_REP);
    KB_CRC = 0;
    kb_tx_crc(code);
    kb_tx16(len);
}

static void kb_reply_end(void)
{
    kb_tx(KB_CRC);
}

static void kb_reply_error(uint8_t err, uint8_t op)
{
    kb_reply_begin(KB_REP_ERROR, 2);
    kb_tx_crc(err);
    kb_tx_crc(op);
    kb_reply_end();
}

/* The head of a request frame: skip to the sync byte, start the CRC, read op and length.
 * Returns the payload length; the caller reads that many bytes with kb_rx_crc, then calls
 * kb_read_end. Split from kb_read_frame so a firmware that files the payload its own way
 * (rkp_stream.c keeps a learn frame's label out of its code buffer: one byte of the
 * ATtiny2313's 128) still shares the framing. */
static inline uint16_t kb_read_head(uint8_t *op)
{
    uint16_t len;
    while (kb_rx() != KB_SYNC_REQ)
        ;
    KB_CRC = 0;
    *op = kb_rx_crc();
    len = kb_rx_crc();
    return (uint16_t)(len | (uint16_t)kb_rx_crc() << 8);
}

/* The check byte: the CRC over op, length, payload and check byte is 0 for a good frame.
 * Returns 1 then, else 0. */
static inline uint8_t kb_read_end(void)
{
    kb_crc_add(kb_rx());
    return (uint8_t)(KB_CRC == 0);
}

/* Read one request frame: its head, every payload byte (checksummed; the first `cap` kept in
 * buf) and the check byte. Returns the payload length; *ok is 1 when the CRC checks. Reading
 * the whole frame whatever it holds keeps the stream in step after a bad frame. static inline
 * so that a firmware using the split form above does not trip -Wunused-function. */
static inline uint16_t kb_read_frame(uint8_t *op, uint8_t *buf, uint16_t cap, uint8_t *ok)
{
    const uint16_t len = kb_read_head(op);
    uint16_t i;
    for (i = 0; i < len; i++) {
        const uint8_t b = kb_rx_crc();
        if (i < cap)
            buf[i] = b;
    }
    *ok = kb_read_end();
    return len;
}

/* The bytes of memory a dump reply carries: all `nbytes`, or none when the request's payload
 * byte (`len` 1, `first`) asks "only if changed" and no learning step changed the memory since
 * the last dump (docs/uart-protocol.md). */
static inline uint16_t kb_dump_bytes(uint16_t len, uint8_t first, uint16_t nbytes)
{
    return (uint16_t)((len != 0 && first != 0 && KB_DIRTY == 0) ? 0u : nbytes);
}

/* The memory part of a dump reply; the memory then counts as unchanged. */
static inline void kb_tx_dump(const uint8_t *mem, uint16_t n)
{
    uint16_t i;
    for (i = 0; i < n; i++)
        kb_tx_crc(mem[i]);
    KB_DIRTY = 0;
}

/* The end of a stop request, after its reply: wait until the last byte has left UDR (the
 * simulator ends the run at the sleep, docs/uart-protocol.md), then sleep with interrupts off
 * for good. */
static inline void kb_stop(void)
{
    while (!(K_UCSRA & (1 << K_UDRE)))
        ;
    cli();
    sleep_enable();
    sleep_cpu();
    for (;;)
        ;
}

#endif /* KB_UART_H */
