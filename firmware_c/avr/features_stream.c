/*
 * features_stream.c - the features of windows of raw readings on an AVR (kb_features_extract,
 * docs/contract.md 12, 12.1, 13), a window a frame over the UART (docs/uart-protocol.md's
 * framing, kb_uart.h): what the uno-sim runtime replays a features golden file with.
 *
 *     extract 'X'  axes u8, n u16, mask u8, p u8, bands u8, axes*n int16 readings (all LE)
 *                  -> 'X': kb_features_extract's error code u8, then (code 0) axes*F int32
 *     stop 'S'     -> 'S', then sleep
 *
 * The buffers are sized at compile time by the host (kilobit.runtimes.avr.fw_features) for the
 * file being replayed, so one image fits the Uno's 2 KB whenever the window does:
 * KB_FW_WINDOW readings, the FFT scratch of KB_FW_P points, KB_FW_OUT features. A frame whose
 * length is not its header's, or whose window outgrows the buffers, is read to its end and
 * answered with a length error, so the stream stays in step.
 *
 * Cycle markers on GPIOR1: 1 before and 2 after kb_features_extract; the UART is outside them.
 */
#include <avr/io.h>
#include <stdint.h>

#include "../kb_features.h"

#include "kb_uart.h"

#ifndef KB_FW_WINDOW
#error "build with -DKB_FW_WINDOW=readings -DKB_FW_P=points -DKB_FW_OUT=features"
#endif

#define KB_OP_EXTRACT 'X'
#define KB_OP_STOP 'S'
#define HEAD 6u /* axes, n (2), mask, p, bands */

static int16_t window[KB_FW_WINDOW];
/* p == 0 needs no scratch, but C has no empty arrays */
static int16_t scratch[KB_FW_P > 0 ? 2 * KB_FW_P : 1];
static int32_t out[KB_FW_OUT];

int main(void)
{
    kb_uart_init();
    for (;;) {
        uint8_t op, head[HEAD], ok, err = 0, k;
        uint16_t i, n, count = 0, per_axis;
        const uint16_t len = kb_read_head(&op);

        for (i = 0; i < len; i++) {
            const uint8_t b = kb_rx_crc();
            if (i < HEAD)
                head[i] = b;
            else if (((i - HEAD) >> 1) < KB_FW_WINDOW) {
                /* little-endian: the low byte first, the high byte completes the reading */
                const uint16_t j = (uint16_t)((i - HEAD) >> 1);
                if (((i - HEAD) & 1u) == 0)
                    window[j] = (int16_t)b;
                else
                    window[j] = (int16_t)((uint16_t)(uint8_t)window[j] | (uint16_t)b << 8);
            }
        }
        ok = kb_read_end();
        n = len >= HEAD ? (uint16_t)(head[1] | (uint16_t)head[2] << 8) : 0u;
        if (len >= HEAD && n <= 256u)
            count = (uint16_t)(head[0] * n);

        if (!ok)
            err = KB_ERR_FRAME_CRC;
        else if (op != KB_OP_EXTRACT && op != KB_OP_STOP)
            err = KB_ERR_FRAME_OP;
        else if (op == KB_OP_STOP ? len != 0
                                  : (len < HEAD || n > 256u || count > KB_FW_WINDOW ||
                                     len != HEAD + 2u * count))
            err = KB_ERR_FRAME_LEN;
        if (err != 0) {
            kb_reply_error(err, op);
            continue;
        }
        if (op == KB_OP_STOP) {
            kb_reply_begin(op, 0);
            kb_reply_end();
            kb_stop();
        }

        per_axis = head[5];
        for (k = 0; k < 8; k++)
            per_axis = (uint16_t)(per_axis + (((unsigned)head[3] >> k) & 1u));
        /* p above 8 is kb_features_extract's to refuse (1 << p would overflow an AVR int) */
        if ((uint16_t)(head[0] * per_axis) > KB_FW_OUT ||
            (head[4] != 0 && head[4] <= 8 && (1u << head[4]) > KB_FW_P))
            err = (uint8_t)KB_ERR_LIMIT; /* valid, perhaps, but beyond this build's buffers */
        else {
            MARK(1);
            KB_BARRIER();
            err = (uint8_t)kb_features_extract(window, n, head[0], head[3], head[4], head[5],
                                               scratch, out);
            KB_BARRIER();
            MARK(2);
        }
        count = err == KB_OK ? (uint16_t)(head[0] * per_axis) : 0u;
        kb_reply_begin(op, (uint16_t)(1u + 4u * count));
        kb_tx_crc(err);
        for (i = 0; i < count; i++)
            kb_tx32((uint32_t)out[i]);
        kb_reply_end();
    }
}
