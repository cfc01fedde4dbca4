/*
 * predict_stream.c - a host-trained predictor (Bonsai; ProtoNN next) on an AVR, over the UART,
 * with the input streamed one feature at a time (docs/uart-protocol.md, "Predictor firmware").
 *
 *     update   start index u16, codes[1..KB_FW_CHUNK]  -> count u16 (features taken so far)
 *     predict                                          -> the prediction and its fields
 *     info                                             -> version, type, dims, in_bits, chunk,
 *                                                         field sizes, CRC-32 of the model
 *     stop                                             -> an acknowledgement, then sleep
 *
 * The model (its device payload: kilobit.predict_fw) is one array in flash; RAM holds the
 * parsed offsets, the projection's d accumulators, P and the scores, one frame of at most
 * KB_FW_CHUNK codes and the stack: nothing grows with the input dimension. A frame is applied
 * only when it is entirely right (checksum, length, indices above the previous ones of this
 * input, codes < 2^B); anything else gets an error reply and changes nothing.
 *
 * Cycle markers on GPIOR1: 5 before and 6 after the updates of one frame, 3 before and 4 after
 * a prediction; the UART is outside them.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/pgmspace.h>
#include <avr/sleep.h>
#include <stdint.h>

#ifndef KB_FW_MODEL_TYPE
#error "build with -include of a model header (kilobit.predict_fw)"
#endif
#ifndef KB_FW_CHUNK
#define KB_FW_CHUNK 16
#endif

#if KB_FW_MODEL_TYPE == 3
#include "../kb_bonsai.h"
typedef kb_bonsai_t kb_fw_model_t;
#define KB_FW_INIT(m) kb_bonsai_init((m), kb_fw_payload, KB_FW_PAYLOAD_LEN, 0)
#define KB_FW_UPDATE_RUN(m, j, c, n) kb_bonsai_update_run((m), (j), (c), (n))
#define KB_FW_PREDICT(m) kb_bonsai_predict(m)
#define KB_FW_DIMS(m) ((m)->proj.dims)
#define KB_FW_TOP(m) ((m)->proj.top)
#define KB_FW_NEXT(m) ((m)->proj.next)
#else
#error "unknown KB_FW_MODEL_TYPE"
#endif
#include "../kb_crc32.h"

#ifndef F_CPU
#error "F_CPU must be defined"
#endif
#ifndef BAUD
#define BAUD 250000UL
#endif
#include <util/setbaud.h>

#define K_UDR UDR0
#define K_UCSRA UCSR0A
#define K_UCSRB UCSR0B
#define K_UCSRC UCSR0C
#define K_UBRRH UBRR0H
#define K_UBRRL UBRR0L

#define KB_PROTO_VERSION 1
#define KB_SYNC_REQ 0xA5
#define KB_SYNC_REP 0x5A
#define KB_OP_UPDATE 'U'
#define KB_OP_PREDICT 'P'
#define KB_OP_INFO 'I'
#define KB_OP_STOP 'S'
#define KB_REP_ERROR 'E'
#define KB_ERR_FRAME_CRC 1
#define KB_ERR_FRAME_LEN 2
#define KB_ERR_FRAME_CODE 3
#define KB_ERR_FRAME_OP 5
#define KB_ERR_FRAME_INDEX 6

#define MARK(v) (GPIOR1 = (uint8_t)(v))
#define KB_CRC GPIOR0
#define KB_BARRIER() __asm__ __volatile__("" ::: "memory")

static kb_fw_model_t model;
static uint8_t frame[KB_FW_CHUNK]; /* the codes of the update frame being read */

static void crc_add(uint8_t b)
{
    uint8_t c = (uint8_t)(KB_CRC ^ b), i;
    for (i = 8; i != 0; i--)
        c = (c & 0x80u) ? (uint8_t)((uint8_t)(c << 1) ^ 0x07u) : (uint8_t)(c << 1);
    KB_CRC = c;
}

static uint8_t rx(void)
{
    while (!(K_UCSRA & (1 << RXC0)))
        ;
    return K_UDR;
}

static uint8_t rx_crc(void)
{
    const uint8_t b = rx();
    crc_add(b);
    return b;
}

static void tx(uint8_t b)
{
    while (!(K_UCSRA & (1 << UDRE0)))
        ;
    K_UDR = b;
}

static void tx_crc(uint8_t b)
{
    crc_add(b);
    tx(b);
}

static void tx16(uint16_t v)
{
    tx_crc((uint8_t)v);
    tx_crc((uint8_t)(v >> 8));
}

static void tx32(uint32_t v)
{
    tx16((uint16_t)v);
    tx16((uint16_t)(v >> 16));
}

static void reply_begin(uint8_t code, uint16_t len)
{
    tx(KB_SYNC_REP);
    KB_CRC = 0;
    tx_crc(code);
    tx16(len);
}

static void reply_end(void)
{
    tx(KB_CRC);
}

/* CRC-32 (as zlib.crc32) of the model in flash, a byte at a time through RAM. */
static uint32_t model_crc(void)
{
    uint32_t c = 0;
    uint16_t i;
    for (i = 0; i < KB_FW_PAYLOAD_LEN; i++) {
        const uint8_t b = pgm_read_byte(&kb_fw_payload[i]);
        c = kb_crc32_update(c, &b, 1);
    }
    return c;
}

int main(void)
{
    K_UBRRH = UBRRH_VALUE;
    K_UBRRL = UBRRL_VALUE;
#if USE_2X
    K_UCSRA = (uint8_t)(1 << U2X0);
#else
    K_UCSRA = 0;
#endif
    K_UCSRC = (uint8_t)((1 << UCSZ01) | (1 << UCSZ00));
    K_UCSRB = (uint8_t)((1 << RXEN0) | (1 << TXEN0));
    if (KB_FW_INIT(&model) != KB_OK) {
        for (;;) /* a model the host checked cannot fail here; stay silent if it does */
            ;
    }

    for (;;) {
        uint8_t op, err = 0, lo = 0, hi = 0;
        uint16_t len, i, start = 0;

        while (rx() != KB_SYNC_REQ)
            ;
        KB_CRC = 0;
        op = rx_crc();
        len = rx_crc();
        len = (uint16_t)(len | (uint16_t)rx_crc() << 8);
        for (i = 0; i < len; i++) { /* read to the end whatever it holds */
            const uint8_t b = rx_crc();
            if (i == 0)
                lo = b;
            else if (i == 1)
                hi = b;
            else if (i - 2u < KB_FW_CHUNK)
                frame[i - 2u] = b;
        }
        crc_add(rx());
        start = (uint16_t)(lo | (uint16_t)hi << 8);

        if (KB_CRC != 0)
            err = KB_ERR_FRAME_CRC;
        else if (op != KB_OP_UPDATE && op != KB_OP_PREDICT && op != KB_OP_INFO &&
                 op != KB_OP_STOP)
            err = KB_ERR_FRAME_OP;
        else if (op == KB_OP_UPDATE ? (len < 3u || len > 2u + KB_FW_CHUNK) : len != 0)
            err = KB_ERR_FRAME_LEN;
        else if (op == KB_OP_UPDATE) {
            const uint16_t n = (uint16_t)(len - 2u);
            if (start < KB_FW_NEXT(&model) || start > KB_FW_DIMS(&model) ||
                n > (uint16_t)(KB_FW_DIMS(&model) - start))
                err = KB_ERR_FRAME_INDEX;
            else
                for (i = 0; i < n; i++)
                    if (frame[i] > KB_FW_TOP(&model))
                        err = KB_ERR_FRAME_CODE;
        }
        if (err != 0) {
            reply_begin(KB_REP_ERROR, 2);
            tx_crc(err);
            tx_crc(op);
            reply_end();
            continue;
        }

        if (op == KB_OP_UPDATE) {
            const uint8_t n = (uint8_t)(len - 2u);
            MARK(5);
            KB_BARRIER();
            /* the frame was checked above: indices and codes in range */
            KB_FW_UPDATE_RUN(&model, start, frame, n);
            KB_BARRIER();
            MARK(6);
            reply_begin(op, 2);
            tx16(KB_FW_NEXT(&model));
            reply_end();
        } else if (op == KB_OP_PREDICT) {
            uint8_t pred;
            MARK(3);
            KB_BARRIER();
            pred = KB_FW_PREDICT(&model);
            KB_BARRIER();
            MARK(4);
#if KB_FW_MODEL_TYPE == 3
            {
                uint8_t r;
                reply_begin(op, (uint16_t)(2u + 2u * model.proj.d + 4u * model.L));
                tx_crc(pred);
                tx_crc(model.leaf);
                for (r = 0; r < model.proj.d; r++)
                    tx16((uint16_t)model.P[r]);
                for (r = 0; r < model.L; r++)
                    tx32((uint32_t)model.scores[r]);
                reply_end();
            }
#endif
        } else if (op == KB_OP_INFO) {
            reply_begin(op, 11);
            tx_crc(KB_PROTO_VERSION);
            tx_crc(KB_FW_MODEL_TYPE);
            tx16(KB_FW_DIMS(&model));
            tx_crc((uint8_t)(KB_FW_TOP(&model)));
            tx_crc(KB_FW_CHUNK);
            tx_crc((uint8_t)sizeof(model));
            tx32(model_crc());
            reply_end();
        } else { /* KB_OP_STOP */
            reply_begin(op, 0);
            reply_end();
            while (!(K_UCSRA & (1 << UDRE0)))
                ;
            cli();
            sleep_enable();
            sleep_cpu();
            for (;;)
                ;
        }
    }
}
