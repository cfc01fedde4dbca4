/*
 * predict_stream.c - a host-trained predictor (Bonsai, ProtoNN) on an AVR, over the UART,
 * with the input streamed one feature at a time (docs/uart-protocol.md, "Predictor firmware").
 *
 *     update   start index u16, codes[1..KB_FW_CHUNK]  -> count u16 (features taken so far)
 *     predict                                          -> the prediction and its fields
 *     info                                             -> version, type, dims, in_bits, chunk,
 *                                                         field sizes, CRC-32 of the model
 *     stop                                             -> an acknowledgement, then sleep
 *
 * The model (its device payload: kilobit.models.predictor) is one array in flash; RAM holds the
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
#error "build with -include of a model header (kilobit.models.predictor.header)"
#endif
#ifndef KB_FW_CHUNK
#define KB_FW_CHUNK 16
#endif

#include "../kb_predictor_fw.h"
#include "../kb_crc32.h"

#include "kb_uart.h" /* line, frames, CRC-8 and error replies (docs/uart-protocol.md) */

#define KB_OP_UPDATE 'U'
#define KB_OP_PREDICT 'P'
#define KB_OP_INFO 'I'
#define KB_OP_STOP 'S'
#define KB_ERR_FRAME_INDEX 6 /* the predictor's own error: an update out of index order */


static kb_fw_model_t model;
static uint8_t frame[2 + KB_FW_CHUNK]; /* an update's start index u16, then its codes */

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
    kb_uart_init();
    if (KB_FW_INIT(&model) != KB_OK) {
        for (;;) /* a model the host checked cannot fail here; stay silent if it does */
            ;
    }

    for (;;) {
        uint8_t op, ok, err = 0;
        uint16_t i, start;
        /* read to the end whatever it holds; only the first 2 + chunk bytes are kept */
        const uint16_t len = kb_read_frame(&op, frame, (uint16_t)sizeof frame, &ok);
        const uint8_t *codes = frame + 2;
        start = (uint16_t)(frame[0] | (uint16_t)frame[1] << 8);

        if (!ok)
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
                    if (codes[i] > KB_FW_TOP(&model))
                        err = KB_ERR_FRAME_CODE;
        }
        if (err != 0) {
            kb_reply_error(err, op);
            continue;
        }

        if (op == KB_OP_UPDATE) {
            const uint8_t n = (uint8_t)(len - 2u);
            MARK(5);
            KB_BARRIER();
            /* the frame was checked above: indices and codes in range */
            KB_FW_UPDATE_RUN(&model, start, codes, n);
            KB_BARRIER();
            MARK(6);
            kb_reply_begin(op, 2);
            kb_tx16(KB_FW_NEXT(&model));
            kb_reply_end();
        } else if (op == KB_OP_PREDICT) {
            uint32_t pred; /* Bonsai: a class; ProtoNN: a class or a multilabel bit mask */
            MARK(3);
            KB_BARRIER();
            pred = KB_FW_PREDICT(&model);
            KB_BARRIER();
            MARK(4);
#if KB_FW_MODEL_TYPE == 3
            {
                uint8_t r;
                kb_reply_begin(op, (uint16_t)(2u + 2u * model.proj.d + 4u * model.L));
                kb_tx_crc((uint8_t)pred);
                kb_tx_crc(model.leaf);
                for (r = 0; r < model.proj.d; r++)
                    kb_tx16((uint16_t)model.P[r]);
                for (r = 0; r < model.L; r++)
                    kb_tx32((uint32_t)model.scores[r]);
                kb_reply_end();
            }
#elif KB_FW_MODEL_TYPE == 4
            {
                uint8_t r;
                kb_reply_begin(op, (uint16_t)(4u + 2u * model.proj.d + 4u * model.L));
                kb_tx32(pred);
                for (r = 0; r < model.proj.d; r++)
                    kb_tx16((uint16_t)model.P[r]);
                for (r = 0; r < model.L; r++)
                    kb_tx32((uint32_t)model.scores[r]);
                kb_reply_end();
            }
#endif
        } else if (op == KB_OP_INFO) {
            kb_reply_begin(op, 11);
            kb_tx_crc(KB_PROTO_VERSION);
            kb_tx_crc(KB_FW_MODEL_TYPE);
            kb_tx16(KB_FW_DIMS(&model));
            kb_tx_crc((uint8_t)(KB_FW_TOP(&model)));
            kb_tx_crc(KB_FW_CHUNK);
            kb_tx_crc((uint8_t)sizeof(model));
            kb_tx32(model_crc());
            kb_reply_end();
        } else { /* KB_OP_STOP */
            kb_reply_begin(op, 0);
            kb_reply_end();
            kb_stop();
        }
    }
}
