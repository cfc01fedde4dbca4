/*
 * kb_learner_fw.h - the frames rkp_stream.c and ckp_stream.c answer alike, whatever the model:
 * dump, checkpoint, info and stop (docs/uart-protocol.md).
 *
 * A statement macro, not a function: expanded in place it leaves the images byte for byte the
 * ones the two loops built when each held its own copy. A function, even always inlined, had
 * ckp's loop load the dump's first byte before branching on the op: 2 B more flash on the
 * ATtiny2313 (its ckp Banana build has 4 B to spare) and learning steps of other cycle counts.
 *
 * The firmware includes it after kb_ovr_fw.h and kb_persist.h, with kb_info (the info reply's
 * parameters, in flash), KB_FW_NTAB and KB_FW_TABLE (the power table that follows them), and
 * expands KB_FW_REPLY_OTHER(op, len, first) as the last `else` of its loop: a validated frame
 * that is neither learn nor query, `first` its first payload byte (a dump's "only if changed").
 */
#ifndef KB_LEARNER_FW_H
#define KB_LEARNER_FW_H

#if KB_FW_NTAB > 0
#define KB_FW_TX_TABLE()                                                                       \
    for (j = 0; j < KB_FW_NTAB; j++)                                                           \
        kb_tx_crc(KB_TABLE_READ(KB_FW_TABLE, j))
#else
#define KB_FW_TX_TABLE()
#endif

#ifdef KB_PERSIST_EVERY
#define KB_FW_CHECKPOINT_FRAME(op)                                                             \
    else if ((op) == KB_OP_CHECKPOINT) kb_persist_frame();
#else
#define KB_FW_CHECKPOINT_FRAME(op)
#endif

#define KB_FW_REPLY_OTHER(op, len, first)                                                      \
    if ((op) == KB_OP_DUMP) {                                                                  \
        const uint16_t n = kb_dump_bytes(len, first, KB_FW_DUMP_BYTES);                        \
        kb_reply_begin(op, (uint16_t)(4u + n));                                                \
        kb_tx16(model.rng);                                                                    \
        kb_tx16(KB_FW_COUNT_ALL());                                                            \
        KB_FW_TX_DUMP(n);                                                                      \
        kb_reply_end();                                                                        \
    }                                                                                          \
    KB_FW_CHECKPOINT_FRAME(op)                                                                 \
    else if ((op) == KB_OP_INFO) {                                                             \
        uint8_t j;                                                                             \
        kb_reply_begin(op, (uint16_t)(sizeof kb_info + KB_FW_NTAB + KB_FW_INFO_CLASSES));      \
        for (j = 0; j < sizeof kb_info; j++)                                                   \
            kb_tx_crc(pgm_read_byte(&kb_info[j]));                                             \
        KB_FW_TX_TABLE();                                                                      \
        KB_FW_TX_INFO_CLASSES();                                                               \
        kb_reply_end();                                                                        \
    } else { /* KB_OP_STOP */                                                                  \
        kb_reply_begin(op, 0);                                                                 \
        kb_reply_end();                                                                        \
        kb_stop();                                                                             \
    }

#endif /* KB_LEARNER_FW_H */
