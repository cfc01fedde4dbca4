/*
 * assoc_stream.c - the binary associative memory (kb_assoc.h) as a class-incremental learner on
 * an AVR (Arduino Uno's ATmega328P), over the UART (docs/uart-protocol.md, "Associative memory
 * firmware"; the line, frames and CRC-8 are firmware_c/avr/kb_uart.h's).
 *
 *     learn  label + T int8 values  -> flags, prediction before learning, count, classes,
 *                                      anchors stored
 *     query  T int8 values          -> the same, nothing learnt
 *     dump   [] or [1]              -> generator, classes, memory (labels|nf|anchors|conn)
 *     info                          -> version, type 5, approach, bits, P, d, cap, k~, R,
 *                                      memory bytes
 *     stop                          -> an acknowledgement, then cli(); sleep_cpu()
 *
 * A frame that is not exactly right (checksum, length, a value outside the model's B bits, a new
 * label when every class slot is taken, an unknown op) gets an error reply and changes nothing.
 *
 * The parameters and the initial state (a model file's: a host-trained or host-seeded memory
 * continues here) come from a header the host generates (kilobit.models.assoc.firmware.header),
 * passed with
 * -include. RAM: the memory (one array: labels, fill counters, int8 anchors, connection bits),
 * one frame (label + T values), P nearest rows and distances, the model struct, the stack.
 *
 * Cycle markers on GPIOR1 bracket the compute only: 1 before and 2 after a learning step (its
 * prediction included), 3 before and 4 after a query.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <stdint.h>

#ifndef KB_ASSOC_FW_P
#error "build with -include of a model header (kilobit.models.assoc.firmware.header)"
#endif

#include "../kb_assoc_fw.h"
#include "kb_uart.h"

#define KB_OP_LEARN 'L'
#define KB_OP_QUERY 'Q'
#define KB_OP_DUMP 'D'
#define KB_OP_INFO 'I'
#define KB_OP_STOP 'S'
#define KB_T KB_ASSOC_FW_T
#define KB_LO (-(1 << (KB_ASSOC_FW_BITS - 1)))
#define KB_HI ((1 << (KB_ASSOC_FW_BITS - 1)) - 1)


#if KB_ASSOC_FW_MEM_BYTES > 65531L
#error "a dump reply carries at most 65535 bytes"
#endif

#ifdef KB_ASSOC_FW_MEM_INIT
static uint8_t kb_mem[KB_ASSOC_FW_MEM_BYTES] = KB_ASSOC_FW_MEM_INIT;
#else
static uint8_t kb_mem[KB_ASSOC_FW_MEM_BYTES];
#endif
static uint8_t frame[1 + KB_T]; /* label, then the T values */
static uint16_t near[KB_ASSOC_FW_P];
static uint32_t dist[KB_ASSOC_FW_P];
static kb_assoc_t model;

/* the learnt state, checkpointed to EEPROM when the build asks for it (kb_persist.h): the
 * struct as main() sets it (its pointers are this build's), the generator and nc included */
#define KB_STATE_HEAD model
#define KB_STATE_MEM kb_mem
#define KB_STATE_MEM_BYTES KB_ASSOC_FW_MEM_BYTES
#define KB_STATE_STEP_BYTES (sizeof model + KB_ASSOC_FW_MEM_BYTES)
#include "kb_persist.h"
#ifdef KB_PERSIST_EVERY
static uint8_t kb_step_flags; /* the learn reply's checkpoint bit */
#define KB_STEP_FLAGS(pred_flag) ((uint8_t)(kb_step_flags | (pred_flag)))
#else
#define KB_STEP_FLAGS(pred_flag) (pred_flag) /* exactly the build without */
#endif

/* flags (bit 0: a class was predicted; bit 2: a checkpoint was written after the step),
 * prediction, count, classes, anchors stored (u16). */
static void reply_step(uint8_t op, int16_t pred)
{
    kb_reply_begin(op, 6);
    kb_tx_crc(KB_STEP_FLAGS((uint8_t)(pred >= 0)));
    kb_tx_crc((uint8_t)(pred >= 0 ? pred : 0));
    kb_tx_crc(model.count);
    kb_tx_crc(model.nc);
    kb_tx16(kb_assoc_stored(&model));
    kb_reply_end();
}

int main(void)
{
    kb_assoc_fw_setup(&model, kb_mem, near, dist);
    kb_uart_init();
    (void)KB_PERSIST_RESTORE();
    KB_DIRTY = 1;

    for (;;) {
        uint8_t op, ok, err = 0;
        uint16_t need;
        const uint16_t len = kb_read_frame(&op, frame, sizeof frame, &ok);
        const int8_t *u = (const int8_t *)(op == KB_OP_LEARN ? frame + 1 : frame);

        switch (op) {
        case KB_OP_LEARN: need = KB_T + 1u; break;
        case KB_OP_QUERY: need = KB_T; break;
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
        else if (err == 0 && (op == KB_OP_LEARN || op == KB_OP_QUERY)) {
#if KB_ASSOC_FW_BITS < 8 /* at 8 bits every byte is a valid int8 value */
            uint16_t i;
            for (i = 0; i < KB_T; i++)
                if (u[i] < KB_LO || u[i] > KB_HI)
                    err = KB_ERR_FRAME_CODE;
#endif
            if (err == 0 && op == KB_OP_LEARN && kb_assoc_slot(&model, frame[0]) < 0 &&
                model.nc == model.cap)
                err = KB_ERR_FRAME_LABEL; /* class capacity full */
        }
        if (err != 0) {
            kb_reply_error(err, op);
            continue;
        }

        if (op == KB_OP_LEARN) {
            int16_t pred = KB_ASSOC_NONE;
            MARK(1);
            KB_BARRIER();
            kb_assoc_learn(&model, u, frame[0], &pred);
            KB_BARRIER();
            MARK(2);
            if (model.changed)
                KB_DIRTY = 1;
#ifdef KB_PERSIST_EVERY
            kb_step_flags = model.changed ? kb_persist_step() : 0;
#endif
            reply_step(op, pred);
        } else if (op == KB_OP_QUERY) {
            int16_t pred;
            MARK(3);
            KB_BARRIER();
            pred = kb_assoc_predict(&model, u);
            KB_BARRIER();
            MARK(4);
#ifdef KB_PERSIST_EVERY
            kb_step_flags = 0;
#endif
            reply_step(op, pred);
        } else if (op == KB_OP_DUMP) {
            const uint16_t n = kb_dump_bytes(len, frame[0], KB_ASSOC_FW_MEM_BYTES);
            kb_reply_begin(op, (uint16_t)(3u + n));
            kb_tx16(model.rng);
            kb_tx_crc(model.nc);
            kb_tx_dump(kb_mem, n);
            kb_reply_end();
#ifdef KB_PERSIST_EVERY
        } else if (op == KB_OP_CHECKPOINT) {
            kb_persist_frame();
#endif
        } else if (op == KB_OP_INFO) {
            kb_reply_begin(op, 11);
            kb_tx_crc(KB_PROTO_VERSION);
            kb_tx_crc(5); /* model type: assoc, as in the model file */
            kb_tx_crc(model.approach);
            kb_tx_crc(model.bits);
            kb_tx_crc(model.P);
            kb_tx_crc(model.d);
            kb_tx_crc(model.cap);
            kb_tx_crc(model.kt);
            kb_tx_crc(model.R);
            kb_tx16((uint16_t)KB_ASSOC_FW_MEM_BYTES);
            kb_reply_end();
        } else { /* KB_OP_STOP */
            kb_reply_begin(op, 0);
            kb_reply_end();
            kb_stop();
        }
    }
}
