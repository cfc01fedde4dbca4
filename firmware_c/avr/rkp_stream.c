/*
 * rkp_stream.c - the Random Kernel Perceptron as an online learner on an AVR, over the UART.
 *
 * One source for the ATtiny2313 (4 MHz, 128 B RAM, no multiplier), the ATtiny4313 and the
 * ATmega328P of an Arduino Uno (16 MHz). The host sends frames (docs/uart-protocol.md):
 *
 *     learn  label + M codes   -> flags (prediction before learning, mistake), count, score
 *     query  M codes           -> flags, count, score
 *     dump                     -> generator state, count, support-vector memory
 *     info                     -> protocol version, parameters, power table
 *     stop                     -> an acknowledgement, then cli(); sleep_cpu()
 *
 * Every frame carries a CRC-8. A frame that is not exactly right (checksum, length, a code
 * >= 2^B, a label other than 0/1 (0 .. K-1 with K classes: kb_ovr_fw.h), an unknown op) is
 * answered with an error reply and changes nothing: the learner only ever sees validated input.
 *
 * The model's parameters, its power table (in flash) and its initial state (generator, count,
 * memory: a model trained on the host continues learning here) come from a header the host
 * generates from a model file (kilobit.models.rkp.firmware.header) and passes with `-include`.
 * firmware_c/avr/rkp_check_config.h also works, as a fresh model.
 *
 * Cycle markers on GPIOR1 (read by firmware_c/sim/kb_sim.c) bracket the compute only, never a
 * UART wait: 1 before and 2 after a learning step, 3 before and 4 after a query.
 *
 * RAM on the ATtiny2313: the support-vector memory, the model's generator state and count, a
 * frame buffer of M codes and the stack; nothing else. The CRC accumulator and the "memory
 * changed since the last dump" flag live in the general-purpose I/O registers GPIOR0/GPIOR2.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/pgmspace.h>
#include <avr/sleep.h>
#include <stdint.h>

#ifndef KB_RKP_CONST
#error "build with -include of a model header (kilobit.models.rkp.firmware.header)"
#endif
#ifndef KB_TABLE_PROGMEM
#define KB_TABLE_PROGMEM
#endif
#ifndef KB_FW_RNG
#define KB_FW_RNG 1 /* kb_rng_seed(0) */
#endif
#ifndef KB_FW_COUNT
#define KB_FW_COUNT 0
#endif
#ifndef KB_FW_WIDTH
#define KB_FW_WIDTH 0 /* only reported by the info frame; the table is what counts */
#endif
#if KB_RKP_CONST_DIMS > 255
#error "the UART firmware takes at most 255 codes per frame"
#endif

/* One pass with 2^J accumulators on the stack, or two passes: with 128 B or 256 B of RAM, at
 * most 4 accumulators (8 bytes of stack). */
#if !defined(KB_RKP_ACC_LOG2) && RAMEND < 0x200
#define KB_RKP_ACC_LOG2 2
#endif

#ifdef KB_FW_CLASSES /* K learners: the step reads the memory of the learner stepping */
#define kb_rkp_mem (*kb_fw_mem)
#endif
#include "../kb_rkp.h"

#include "kb_uart.h" /* line, frames, CRC-8 and error replies (docs/uart-protocol.md) */

#define KB_OP_LEARN 'L'
#define KB_OP_QUERY 'Q'
#define KB_OP_DUMP 'D'
#define KB_OP_INFO 'I'
#define KB_OP_STOP 'S'

#define KB_DIMS KB_RKP_CONST_DIMS
#define KB_MEM_BYTES KB_RKP_CONST_MEM_BYTES
#if KB_MEM_BYTES > 65531L
#error "a dump reply carries at most 65535 bytes"
#endif


/* The parameters as the info frame reports them, followed by the power table. */
static const uint8_t kb_info[] PROGMEM = {
    KB_PROTO_VERSION,
    1, /* model type: rkp, as in the model file */
    KB_RKP_CONST_KERNEL,
    KB_RKP_CONST_BITS,
    (uint8_t)(KB_RKP_CONST_DIMS & 0xFF), (uint8_t)(KB_RKP_CONST_DIMS >> 8),
    (uint8_t)(KB_RKP_CONST_BUDGET & 0xFF), (uint8_t)(KB_RKP_CONST_BUDGET >> 8),
    (uint8_t)(KB_FW_WIDTH & 0xFF),
    KB_RKP_CONST_C,
    KB_RKP_CONST_NTAB,
    (uint8_t)sizeof(kb_score_t),
    (uint8_t)(KB_MEM_BYTES & 0xFF), (uint8_t)(KB_MEM_BYTES >> 8),
};

static uint8_t u[KB_DIMS]; /* the frame buffer: the codes of the current frame */

#define KB_FW_STATE_T kb_rkp_t
#define KB_FW_SCORE_T kb_score_t
#define KB_FW_LEARN(m, u, y, mistake) kb_rkp_learn(m, u, y, mistake)
#define KB_FW_SCORE(m, u) kb_rkp_score(m, u)
#define KB_FW_MEM kb_rkp_mem
#define KB_FW_MEM_BYTES KB_MEM_BYTES
#define KB_FW_MEM_ALLOC KB_RKP_CONST_MEM_ALLOC
#ifndef KB_FW_CLASSES
static kb_rkp_t model = {KB_FW_RNG, KB_FW_COUNT};
#endif
#include "kb_ovr_fw.h" /* one learner or K (one-vs-rest); the state kb_persist.h saves */
#ifndef KB_FW_CLASSES
/* a mistake changes the generator, the count and the bytes one support vector spans */
#define KB_STATE_STEP_BYTES \
    (sizeof model + (KB_RKP_CONST_DIMS * KB_RKP_CONST_BITS + 1L + 7L + 7L) / 8L)
#else
#define KB_STATE_STEP_BYTES (sizeof kb_fw_states + sizeof kb_fw_mems) /* K learners may store */
#endif
#include "kb_persist.h"
#define KB_FW_NTAB KB_RKP_CONST_NTAB
#define KB_FW_TABLE kb_rkp_table
#include "kb_learner_fw.h" /* dump, checkpoint, info, stop */

/* flags (bit 0: prediction s > 0, bit 1: mistake), count, score (little-endian, signed). */
static void reply_step(uint8_t op, kb_score_t s, uint8_t flags)
{
    uint8_t i;
    kb_reply_begin(op, (uint16_t)(3u + sizeof s + KB_FW_CLASS_BYTES));
    kb_tx_crc((uint8_t)(flags | (s > 0)));
    kb_tx16(KB_FW_COUNT_ALL());
    for (i = 0; i < sizeof s; i++) {
        kb_tx_crc((uint8_t)s);
        s = (kb_score_t)(s >> 8); /* arithmetic shift of a negative score: the byte pattern */
    }
    KB_FW_TX_CLASS();
    kb_reply_end();
}

int main(void)
{
    kb_uart_init();
    (void)KB_PERSIST_RESTORE();
    KB_DIRTY = 1;

    for (;;) {
        uint8_t op, y = 0, err = 0, first = 0, ok;
        uint16_t len, i, need;

        /* The payload is filed here rather than by kb_read_frame: a learn frame's label goes
         * to y, not into u, which saves the ATtiny2313 a byte of its 128. Every payload byte
         * is read (and checksummed) whatever the length, so the next frame starts where the
         * host put it; only the first M codes are kept. */
        len = kb_read_head(&op);
        for (i = 0; i < len; i++) {
            const uint8_t b = kb_rx_crc();
            uint16_t k = i;
            if (i == 0)
                first = b;
            if (op == KB_OP_LEARN) {
                if (i == 0) {
                    y = b;
                    continue;
                }
                k--;
            }
            if (k < KB_DIMS)
                u[k] = b;
        }
        ok = kb_read_end();

        switch (op) {
        case KB_OP_LEARN: need = KB_DIMS + 1u; break;
        case KB_OP_QUERY: need = KB_DIMS; break;
        case KB_OP_DUMP: need = len > 1u ? 0u : len; break;
        case KB_OP_INFO:
#ifdef KB_PERSIST_EVERY
        case KB_OP_CHECKPOINT:
#endif
        case KB_OP_STOP: need = 0; break;
        default: need = len; err = KB_ERR_FRAME_OP; break;
        }
        if (!ok)
            err = KB_ERR_FRAME_CRC;
        else if (err == 0 && len != need)
            err = KB_ERR_FRAME_LEN;
        else if (err == 0 && op == KB_OP_LEARN && y >= KB_FW_NCLASS)
            err = KB_ERR_FRAME_LABEL;
        else if (err == 0 && (op == KB_OP_LEARN || op == KB_OP_QUERY)) {
            uint8_t j;
            for (j = 0; j < KB_DIMS; j++)
                if ((u[j] >> KB_RKP_CONST_BITS) != 0)
                    err = KB_ERR_FRAME_CODE;
        }
        if (err != 0) {
            kb_reply_error(err, op);
            continue;
        }

        if (op == KB_OP_LEARN) {
            kb_score_t s;
            uint8_t mistake;
            MARK(1);
            KB_BARRIER();
            s = KB_FW_LEARN_ALL(u, y, &mistake);
            KB_BARRIER();
            MARK(2);
            if (mistake)
                KB_DIRTY = 1;
            reply_step(op, s, KB_LEARN_FLAGS(mistake));
        } else if (op == KB_OP_QUERY) {
            kb_score_t s;
            MARK(3);
            KB_BARRIER();
            s = KB_FW_SCORE_ALL(u);
            KB_BARRIER();
            MARK(4);
            reply_step(op, s, 0);
        } else
            KB_FW_REPLY_OTHER(op, len, first)
    }
}
