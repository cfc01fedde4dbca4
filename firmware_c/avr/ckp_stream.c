/*
 * ckp_stream.c - the Compressed Kernel Perceptron (kb_ckp.h) as an online learner on an AVR,
 * over the UART, with the frames of the RKP firmware (docs/uart-protocol.md; the line, frames
 * and CRC-8 are firmware_c/avr/kb_uart.h's):
 *
 *     learn  label + M codes   -> flags (prediction before learning, mistake), count, score
 *     query  M codes           -> flags, count, score
 *     dump   [] or [1]         -> generator state, count, memory (ceil(L/8) bytes)
 *     info                     -> version, type 2, kernel 1 (rbf), P, M, L, width 0, C, J,
 *                                 score bytes, memory bytes, power table
 *     stop                     -> an acknowledgement, then cli(); sleep_cpu()
 *
 * A frame that is not exactly right (checksum, length, a code >= 2^P, a label other than 0/1,
 * an unknown op) gets an error reply and changes nothing.
 *
 * The parameters, the power table and the loss table (in flash) and the initial state
 * (generator, count, norm, memory: a model trained on the host continues here) come from a
 * header the host generates from a model file (kilobit.models.ckp.firmware.header), passed with
 * -include.
 *
 * RAM: the bit budget's memory, the model state (generator 2, count, norm 4, schedule), one
 * frame (label + M codes), 2M bytes of scratch (the point's centres and a decoded support
 * vector's), and the stack. On cores without a multiplier the step is kb_ckp_step.S (linked
 * by kilobit.runtimes.avr.firmware.build), which keeps its state in registers: the Banana build of
 * the issue
 * (L = 560, P = 6, M = 2) is then ~2 KB of flash and ~105 B of RAM with the stack.
 * Cycle markers on GPIOR1 bracket the compute only: 1 before and 2 after a learning step, 3
 * before and 4 after a query.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/pgmspace.h>
#include <avr/sleep.h>
#include <stdint.h>

#ifndef KB_CKP_CONST
#error "build with -include of a model header (kilobit.models.ckp.firmware.header)"
#endif
#ifndef KB_TABLE_PROGMEM
#define KB_TABLE_PROGMEM
#endif
#if KB_CKP_CONST_DIMS > 254
#error "the UART firmware takes at most 254 codes per frame"
#endif

#ifdef KB_FW_CLASSES /* K learners: the step reads the memory of the learner stepping */
#define kb_ckp_mem (*kb_fw_mem)
#endif
#include "../kb_ckp.h"
#include "kb_uart.h"
#if defined(KB_FW_CLASSES) && defined(KB_CKP_ASM)
#error "the assembly step (no multiplier) holds one learner: several classes need the C step"
#endif

#define KB_OP_LEARN 'L'
#define KB_OP_QUERY 'Q'
#define KB_OP_DUMP 'D'
#define KB_OP_INFO 'I'
#define KB_OP_STOP 'S'
#define KB_DIMS KB_CKP_CONST_DIMS
/* The score travels as 2 or 4 bytes (docs/uart-protocol.md): a 24-bit score is sign-extended. */
#define KB_SCORE_BYTES (sizeof(kb_ckp_score_t) == 2 ? 2u : 4u)


/* The parameters as the info frame reports them (the RKP layout: budget is L in bits, the
 * width is in the tables), followed by the power table. */
static const uint8_t kb_info[] PROGMEM = {
    KB_PROTO_VERSION,
    2, /* model type: ckp, as in the model file */
    1, /* kernel: rbf */
    KB_CKP_CONST_BITS,
    (uint8_t)(KB_CKP_CONST_DIMS & 0xFF), (uint8_t)(KB_CKP_CONST_DIMS >> 8),
    (uint8_t)(KB_CKP_CONST_L & 0xFF), (uint8_t)(KB_CKP_CONST_L >> 8),
    0,
    KB_CKP_CONST_C,
    KB_CKP_CONST_NTAB,
    KB_SCORE_BYTES,
    (uint8_t)(KB_CKP_CONST_MEM_BYTES & 0xFF), (uint8_t)(KB_CKP_CONST_MEM_BYTES >> 8),
};

static uint8_t frame[1 + KB_DIMS]; /* the label (learn), then the codes */

#define KB_FW_STATE_T kb_ckp_t
#define KB_FW_SCORE_T kb_ckp_score_t
#define KB_FW_STEP(m, u, y, mistake) kb_ckp_step(m, u, y, mistake)
#define KB_FW_MEM kb_ckp_mem
#define KB_FW_MEM_BYTES KB_CKP_CONST_MEM_BYTES
#define KB_FW_MEM_ALLOC KB_CKP_CONST_MEM_BYTES
#ifndef KB_FW_CLASSES
/* not static when the step is kb_ckp_step.S, which reads it by name */
KB_CKP_LINK kb_ckp_t kb_ckp_model = {KB_FW_RNG, KB_FW_COUNT, KB_FW_NORM, KB_FW_B, KB_FW_N1};
#define model kb_ckp_model
#endif
#include "kb_ovr_fw.h" /* one learner or K (one-vs-rest); the state kb_persist.h saves */
/* a mistake can move every stored vector (a new schedule recompresses them all, 6.2) */
#define KB_STATE_STEP_BYTES (sizeof KB_FW_STATE + KB_FW_MEMS_BYTES)
#include "kb_persist.h"
#define KB_FW_NTAB KB_CKP_CONST_NTAB
#define KB_FW_TABLE kb_ckp_table
#include "kb_learner_fw.h" /* dump, checkpoint, info, stop */

/* flags (bit 0: prediction s > 0, bit 1: mistake), count, score (little-endian, signed). */
static void reply_step(uint8_t op, kb_ckp_score_t s, uint8_t flags)
{
    uint8_t i;
    kb_reply_begin(op, (uint16_t)(3u + KB_SCORE_BYTES + KB_FW_CLASS_BYTES));
    kb_tx_crc((uint8_t)(flags | (s > 0)));
    kb_tx16(KB_FW_COUNT_ALL());
    for (i = 0; i < KB_SCORE_BYTES; i++) {
        kb_tx_crc((uint8_t)s);
        s = (kb_ckp_score_t)(s >> 8); /* arithmetic shift of a negative score: the bytes */
    }
    KB_FW_TX_CLASS();
    kb_reply_end();
}

/* OS_main: main never returns, so it saves no register for a caller; the assembly step
 * (kb_ckp.h, KB_CKP_ASM) changes most of them. */
int main(void) __attribute__((OS_main));

int main(void)
{
    kb_uart_init();
    (void)KB_PERSIST_RESTORE();
    KB_DIRTY = 1;
    for (;;) {
        uint8_t op, ok, err = 0;
        uint16_t need;
        const uint16_t len = kb_read_frame(&op, frame, (uint16_t)sizeof frame, &ok);
        const uint8_t learn = (uint8_t)(op == KB_OP_LEARN);
        uint8_t *u = frame + learn;

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
        else if (err == 0 && learn && frame[0] >= KB_FW_NCLASS)
            err = KB_ERR_FRAME_LABEL;
        else if (err == 0 && (learn || op == KB_OP_QUERY)) {
            uint8_t j;
            for (j = 0; j < KB_DIMS; j++)
                if ((u[j] >> KB_CKP_CONST_BITS) != 0)
                    err = KB_ERR_FRAME_CODE;
        }
        if (err != 0) {
            kb_reply_error(err, op);
            continue;
        }

        if (learn || op == KB_OP_QUERY) {
            uint8_t mistake = 0;
            kb_ckp_score_t s;
            MARK(learn ? 1 : 3);
            KB_BARRIER();
#ifdef KB_CKP_ASM
            /* two call sites: `learn ? &mistake : NULL` would keep `mistake` in a stack frame */
            if (learn)
                s = kb_ckp_learn(&model, u, frame[0], &mistake);
            else
                s = kb_ckp_score(&model, u);
#elif defined(KB_FW_CLASSES)
            s = kb_fw_step_all(u, frame[0], learn ? &mistake : NULL);
#else
            /* one call site: the score and the learning step are one function, inlined once */
            s = kb_ckp_step(&model, u, frame[0], learn ? &mistake : NULL);
#endif
            KB_BARRIER();
            MARK(learn ? 2 : 4);
            if (mistake)
                KB_DIRTY = 1;
            reply_step(op, s, KB_LEARN_FLAGS(mistake));
        } else
            KB_FW_REPLY_OTHER(op, len, frame[0])
    }
}
