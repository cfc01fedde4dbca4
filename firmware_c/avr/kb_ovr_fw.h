/*
 * kb_ovr_fw.h - the learner firmwares' frames for one learner or for K >= 3 (one-vs-rest,
 * docs/contract.md 3.6 and 6.8), one set for rkp_stream.c and ckp_stream.c.
 *
 * Binary (the header defines no KB_FW_CLASSES): every macro below is the one learner's own
 * expression, so the images, the ATtiny2313's 2 KB among them, are the ones built before
 * several classes existed.
 *
 * K classes (KB_FW_CLASSES = K, from kilobit.models.{rkp,ckp}.firmware.header): K states and K
 * memories in RAM, initialised from the model file (KB_FW_STATES_INIT, KB_FW_MEMS_INIT). The
 * model header's step reads its memory through the name kb_rkp_mem / kb_ckp_mem, which the
 * firmware defines, before including the model, as (*kb_fw_mem): a pointer to the memory of
 * the learner stepping, so that the one step in flash serves every learner without copying
 * memories around. A step runs the K learners in class order, learner k on the label
 * (y == k), and answers the class of the largest score (the lowest class on a tie), that
 * score, a mistake when any learner stored, the count summed over the learners; a dump is the
 * K memories back to back (docs/uart-protocol.md, "Several classes").
 *
 * The firmware defines, before including this: KB_FW_STATE_T (the learner's state struct),
 * KB_FW_SCORE_T, KB_FW_LEARN(m, u, y, mistake) and KB_FW_SCORE(m, u) (one learner's step), or
 * KB_FW_STEP(m, u, y, mistake) (both in one: a score when `mistake` is 0),
 * KB_FW_MEM (the one learner's memory), KB_FW_MEM_BYTES and KB_FW_MEM_ALLOC (its bytes, and
 * the bytes its array holds), and `model`, the one learner's state (K classes: this defines it
 * as learner 0's).
 */
#ifndef KB_OVR_FW_H
#define KB_OVR_FW_H

#ifndef KB_FW_CLASSES

#define KB_FW_NCLASS 2u
#define KB_FW_STATE model
#define KB_FW_MEMS KB_FW_MEM
#define KB_FW_MEMS_BYTES (KB_FW_MEM_BYTES)
#define KB_FW_COUNT_ALL() ((uint16_t)model.count)
#define KB_FW_LEARN_ALL(u, y, mistake) KB_FW_LEARN(&model, u, y, mistake)
#define KB_FW_SCORE_ALL(u) KB_FW_SCORE(&model, u)
#define KB_FW_CLASS_BYTES 0u
#define KB_FW_TX_CLASS()
#define KB_FW_TX_DUMP(n) kb_tx_dump(KB_FW_MEM, n)
#define KB_FW_DUMP_BYTES ((uint16_t)(KB_FW_MEM_BYTES))
#define KB_FW_INFO_CLASSES 0u
#define KB_FW_TX_INFO_CLASSES()

#else

#if KB_FW_CLASSES < 3 || KB_FW_CLASSES > 255
#error "KB_FW_CLASSES: 3 .. 255 learners (2 classes are the binary firmware)"
#endif
#if KB_FW_CLASSES * (KB_FW_MEM_BYTES) > 65531L
#error "a dump reply carries at most 65535 bytes"
#endif

#define KB_FW_NCLASS ((uint8_t)KB_FW_CLASSES)

static KB_FW_STATE_T kb_fw_states[KB_FW_CLASSES] = KB_FW_STATES_INIT;
/* Zero (.bss) unless the model file's memories are not all zero: then .data, as the binary
 * firmware's memory */
#ifdef KB_FW_MEMS_INIT
static uint8_t kb_fw_mems[KB_FW_CLASSES][KB_FW_MEM_ALLOC] = KB_FW_MEMS_INIT;
#else
static uint8_t kb_fw_mems[KB_FW_CLASSES][KB_FW_MEM_ALLOC];
#endif
static uint8_t kb_fw_class; /* the class the last step answered */

#define KB_FW_STATE kb_fw_states
#define KB_FW_MEMS kb_fw_mems
#define KB_FW_MEMS_BYTES sizeof kb_fw_mems /* each learner's padding too: the whole state */
#define KB_FW_CLASS_BYTES 1u
#define KB_FW_TX_CLASS() kb_tx_crc(kb_fw_class)
#define KB_FW_INFO_CLASSES 1u
#define KB_FW_TX_INFO_CLASSES() kb_tx_crc(KB_FW_NCLASS)

static uint16_t kb_fw_count_all(void)
{
    uint16_t n = 0;
    uint8_t k;
    for (k = 0; k < KB_FW_NCLASS; k++)
        n = (uint16_t)(n + kb_fw_states[k].count);
    return n;
}

/* The K learners' step: learn (u, y == k) each when `mistake` is given, else score each. A
 * learner's score is kept only when larger than the best so far, so a tie answers the lower
 * class, as the host's argmax. */
static KB_FW_SCORE_T kb_fw_step_all(const uint8_t *codes, uint8_t y, uint8_t *mistake)
{
    KB_FW_SCORE_T best = 0;
    uint8_t k;
    if (mistake != 0) /* the binary step sets its caller's flag whatever happens: so do K */
        *mistake = 0;
    for (k = 0; k < KB_FW_NCLASS; k++) {
        uint8_t stored = 0;
        KB_FW_SCORE_T s;
        kb_fw_mem = &kb_fw_mems[k];
#ifdef KB_FW_STEP /* one call site: ckp's step, inlined once, is the deepest frame */
        uint8_t *const learn = mistake != 0 ? &stored : 0;
        s = KB_FW_STEP(&kb_fw_states[k], codes, (uint8_t)(k == y), learn);
#else /* two: rkp's score and learning step apart need 23 B less stack than inlined together */
        if (mistake != 0)
            s = KB_FW_LEARN(&kb_fw_states[k], codes, (uint8_t)(k == y), &stored);
        else
            s = KB_FW_SCORE(&kb_fw_states[k], codes);
#endif
        if (mistake != 0)
            *mistake = (uint8_t)(*mistake | stored);
        if (k == 0 || s > best) {
            best = s;
            kb_fw_class = k;
        }
    }
    return best;
}

#define KB_FW_COUNT_ALL() kb_fw_count_all()
#define KB_FW_LEARN_ALL(u, y, mistake) kb_fw_step_all(u, y, mistake)
#define KB_FW_SCORE_ALL(u) kb_fw_step_all(u, 0, 0)

/* the K memories, each its KB_FW_MEM_BYTES (not the padding its array may hold); n is 0 (left
 * out, unchanged) or all of them */
static void kb_fw_tx_dump(uint16_t n)
{
    uint8_t k;
    for (k = 0; n != 0 && k < KB_FW_NCLASS; k++)
        kb_tx_dump(kb_fw_mems[k], (uint16_t)(KB_FW_MEM_BYTES));
}

#define KB_FW_TX_DUMP(n) kb_fw_tx_dump(n)
#define KB_FW_DUMP_BYTES ((uint16_t)((KB_FW_MEM_BYTES) * (long)KB_FW_CLASSES))

#define model kb_fw_states[0] /* the dump's generator state */

#endif /* KB_FW_CLASSES */

/* the learnt state, checkpointed to EEPROM when the build asks for it (kb_persist.h, which the
 * firmware includes after defining KB_STATE_STEP_BYTES) */
#define KB_STATE_HEAD KB_FW_STATE
#define KB_STATE_MEM KB_FW_MEMS
#define KB_STATE_MEM_BYTES KB_FW_MEMS_BYTES

#endif /* KB_OVR_FW_H */
