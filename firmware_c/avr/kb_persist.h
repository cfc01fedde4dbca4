/*
 * kb_persist.h - a learner's state checkpointed to the AVR's EEPROM so that it survives resets
 * and power cuts: after a cut at any moment, the chip restarts with the last complete checkpoint
 * or the one that was being written, never a mixture (docs/contract.md section 11; the frames are
 * docs/uart-protocol.md's "Checkpoints"). Built only when the host asks for it
 * (kilobit.runtimes.avr.firmware.build(..., checkpoint_every=N) defines KB_PERSIST_EVERY).
 *
 * The state is the bytes of the model struct KB_STATE_HEAD followed by the KB_STATE_MEM_BYTES of
 * KB_STATE_MEM, as they sit in RAM: the fingerprint KB_PERSIST_FP (the build's, from the host)
 * seeds its CRC-16, so an EEPROM written by another model or another firmware is not restored.
 *
 * Two schemes; the first that fits the EEPROM is built:
 *
 *   slots    (the Uno: a state up to 508 B) two slots [seq | 0xFF - seq | state | check]. A
 *            checkpoint goes to the slot not holding the newest one: seq := 0xFF (the slot stops
 *            counting), its check byte, the state, the check, and seq last (the commit). A slot
 *            counts when seq != 0xFF, the next byte is 0xFF - seq and the check holds; of two,
 *            the newer is the one whose seq follows the other's (0 .. 254, then 0).
 *   journal  (the ATtiny2313: 128 B) one base copy [bseq | state | check] and a redo journal
 *            [jseq | - | n | n x (address, value)]. The bytes that differ go to the journal,
 *            jseq := bseq + 1 commits it, they are copied into the base, and bseq := jseq marks
 *            it done. At reset a journal whose jseq is neither 0xFF nor bseq is copied again:
 *            each entry sets a byte, so copying twice is harmless. The journal holds the changes
 *            of KB_PERSIST_EVERY learning steps (the build checks it: every >= 1 here), so a
 *            checkpoint always fits.
 *
 * The check is a CRC-16 of the state seeded with the fingerprint on the Uno, the fingerprint
 * itself on chips of 256 B of EEPROM or less (see kb_state_crc).
 *
 * Why a torn byte cannot hurt (a cut during an erase-and-write cycle leaves any value): every
 * byte that makes a copy count is written after everything it vouches for, so a torn commit
 * byte either equals the value being written (the copy is complete) or does not make the copy
 * count; a torn invalidation of a slot either leaves the old seq (still older than the other
 * slot's) or fails the check byte; a torn jseq only ever replaces a complete journal's.
 * docs/contract.md section 11 has the whole argument; tests cut the power at every EEPROM byte
 * write in simulation, leaving the old value and a torn one.
 *
 * The firmware defines KB_STATE_HEAD, KB_STATE_MEM, KB_STATE_MEM_BYTES and KB_STATE_STEP_BYTES
 * (the most bytes one learning step can change; the whole state when a step may move it all),
 * and includes this after kb_uart.h, whether or not the build checkpoints: it then calls
 * KB_PERSIST_RESTORE() at reset and sends KB_LEARN_FLAGS(mistake) in a learn reply, which in a
 * build without checkpoints are exactly what the firmware did before checkpoints existed.
 *
 * A program of the user's own (kilobit export: firmware_c/kb_export.h) includes it without
 * kb_uart.h and may define KB_PERSIST_BASE, the first EEPROM byte it may use (0 by default), so
 * that two learners, or the program's own settings, each keep their own bytes; and
 * KB_PERSIST_IRQ when it runs with interrupts enabled (an Arduino sketch: Serial, millis).
 */
#ifndef KB_PERSIST_H
#define KB_PERSIST_H

#ifndef KB_PERSIST_EVERY
#define KB_PERSIST_RESTORE() 0
#define KB_LEARN_FLAGS(mistake) ((uint8_t)((mistake) << 1))
#else

#include <avr/io.h>
#include <stdint.h>
#include <util/crc16.h>

#ifndef KB_PERSIST_FP
#error "KB_PERSIST_FP: the build's fingerprint (kilobit.runtimes.avr.firmware)"
#endif

#define KB_OP_CHECKPOINT 'C'

#ifndef KB_PERSIST_BASE
#define KB_PERSIST_BASE 0
#endif
/* what the checkpoints may use: every address below is relative to KB_PERSIST_BASE */
#define KB_EE_BYTES (E2END + 1L - (long)(KB_PERSIST_BASE))
#define KB_STATE_BYTES (sizeof(KB_STATE_HEAD) + (KB_STATE_MEM_BYTES))
#define KB_SLOT_BYTES (KB_STATE_BYTES + 4u)
#define KB_BASE_BYTES (KB_STATE_BYTES + 3u)
#define KB_JOURNAL_CAP (((long)KB_EE_BYTES - (long)KB_BASE_BYTES - 3L) / 2L)
#define KB_USE_SLOTS (2L * (long)KB_SLOT_BYTES <= KB_EE_BYTES)
#define KB_USE_JOURNAL                                                                          \
    (KB_EE_BYTES <= 256L && KB_PERSIST_EVERY >= 1 &&                                           \
     (long)KB_PERSIST_EVERY * (long)(KB_STATE_STEP_BYTES) <= KB_JOURNAL_CAP)

#ifdef KB_PERSIST_PROBE
/* Compiled (-c, never linked) by kilobit.runtimes.avr.firmware, which reads the state's sizes as
 * these arrays' symbol sizes: the compiler's sizeof, not a copy of it. */
const uint8_t kb_probe_state[KB_STATE_BYTES] = {0};
const uint8_t kb_probe_step[KB_STATE_STEP_BYTES] = {0};
#else
/* Not a crash-safe fit: the build stops here, and kilobit.runtimes.avr.firmware reports it. */
typedef char kb_persist_does_not_fit_eeprom[(KB_USE_SLOTS || KB_USE_JOURNAL) ? 1 : -1];
#endif

/* called from several places: one copy each, not one per call (flash on the ATtiny2313) */
#define KB_NOINLINE __attribute__((noinline))

#if E2END <= 255
typedef uint8_t kb_ee_t; /* an EEPROM address, or an index into the state */
#else
typedef uint16_t kb_ee_t;
#endif

#if KB_PERSIST_EVERY > 1
static uint8_t kb_unsaved; /* learning steps that changed the state since the last checkpoint */
#endif

static KB_NOINLINE uint8_t *kb_state_at(kb_ee_t i)
{
    return i < sizeof(KB_STATE_HEAD) ? (uint8_t *)&KB_STATE_HEAD + i
                                     : (uint8_t *)(KB_STATE_MEM) + (i - sizeof(KB_STATE_HEAD));
}

/* The EEPROM registers directly (avr-libc's eeprom_*_byte cost the ATtiny2313 24 B more). The
 * firmwares never enable interrupts, so nothing can come between EEMPE and EEPE; a program that
 * does (KB_PERSIST_IRQ) holds them off for those two writes only: EEPE must follow EEMPE within
 * four cycles, and a 3.4 ms write must not stop its serial line. */
#ifdef KB_PERSIST_IRQ
#include <avr/interrupt.h>
#define KB_EE_IRQ_OFF() const uint8_t kb_sreg = SREG; cli()
#define KB_EE_IRQ_ON() SREG = kb_sreg
#else
#define KB_EE_IRQ_OFF()
#define KB_EE_IRQ_ON()
#endif

static KB_NOINLINE uint8_t kb_ee_get(kb_ee_t a)
{
    while (EECR & (1 << EEPE)) /* a write still under way */
        ;
#if KB_PERSIST_BASE > 0
    EEAR = (uint16_t)(a + (uint16_t)(KB_PERSIST_BASE));
#else
    EEAR = a;
#endif
    EECR |= (uint8_t)(1 << EERE);
    return EEDR;
}

/* Writes only a byte that differs: a write wears the cell (and takes 3.4 ms); erase and write
 * in one operation (EEPM = 0). */
static KB_NOINLINE void kb_ee_put(kb_ee_t a, uint8_t v)
{
    if (kb_ee_get(a) == v)
        return;
    EEDR = v;
    {
        KB_EE_IRQ_OFF();
        EECR = (uint8_t)(1 << EEMPE);
        EECR |= (uint8_t)(1 << EEPE);
        KB_EE_IRQ_ON();
    }
}

/* 0xFF is "no copy": the sequence runs 0 .. 254 and the copy check is seq, then 0xFF - seq. */
static uint8_t kb_seq_next(uint8_t s)
{
    return (uint8_t)(s >= 254u ? 0u : s + 1u);
}

static KB_NOINLINE uint8_t kb_seq_ok(kb_ee_t a)
{
    const uint8_t s = kb_ee_get(a);
    return (uint8_t)(s != 0xFFu && (uint8_t)(s + kb_ee_get((kb_ee_t)(a + 1u))) == 0xFFu);
}

static void kb_seq_put(kb_ee_t a, uint8_t s) /* the check byte; the seq is the commit */
{
    kb_ee_put((kb_ee_t)(a + 1u), (uint8_t)(0xFFu - s));
}

/* The check stored after a copy of the state: its CRC-16 (CCITT, reflected: avr-libc's
 * _crc_ccitt_update) seeded with the build's fingerprint, of the state in RAM (ee == 0) or of
 * the copy at EEPROM address ee. On chips with at most 256 B of EEPROM (the ATtiny2313: the CRC
 * costs flash it does not have) the check is the fingerprint alone: it still refuses a blank,
 * foreign or other build's EEPROM, only bit rot inside a copy goes unseen. Crash safety never
 * rests on the check (docs/contract.md 11.3). */
#if E2END > 255
#define KB_PERSIST_CRC 1
static KB_NOINLINE uint16_t kb_state_crc(kb_ee_t ee)
{
    uint16_t crc = (uint16_t)(KB_PERSIST_FP);
    kb_ee_t i;
    for (i = 0; i < KB_STATE_BYTES; i++)
        crc = _crc_ccitt_update(crc, ee ? kb_ee_get((kb_ee_t)(ee + i)) : *kb_state_at(i));
    return crc;
}
#else
#define KB_PERSIST_CRC 0
#define kb_state_crc(ee) ((uint16_t)(KB_PERSIST_FP))
#endif

/* The copy of the state at ee holds: the CRC stored after it is its contents'. */
static uint8_t kb_copy_ok(kb_ee_t ee)
{
    const uint16_t crc = kb_state_crc(ee);
    ee = (kb_ee_t)(ee + KB_STATE_BYTES);
    return (uint8_t)(kb_ee_get(ee) == (uint8_t)crc &&
                     kb_ee_get((kb_ee_t)(ee + 1u)) == (uint8_t)(crc >> 8));
}

/* The check after the copy at ee. */
static void kb_put_check(kb_ee_t ee, uint16_t check)
{
    ee = (kb_ee_t)(ee + KB_STATE_BYTES);
    kb_ee_put(ee, (uint8_t)check);
    kb_ee_put((kb_ee_t)(ee + 1u), (uint8_t)(check >> 8));
}

#define KB_WALK_COUNT 0
#define KB_WALK_LOAD 1
#define KB_WALK_BASE 2
#define KB_WALK_JOURNAL 3
#if E2END <= 255
#define KB_J ((kb_ee_t)KB_BASE_BYTES) /* the journal: jseq, (unused), n, n entries */
#endif

/* Walks the copy of the state at ee against the state in RAM and counts the bytes that differ;
 * KB_WALK_LOAD copies each into RAM, KB_WALK_BASE writes it into the copy, KB_WALK_JOURNAL
 * writes it to the journal as an entry (address, value). */
static KB_NOINLINE kb_ee_t kb_walk(kb_ee_t ee, uint8_t mode)
{
    kb_ee_t i, n = 0;
    for (i = 0; i < KB_STATE_BYTES; i++) {
        uint8_t *p = kb_state_at(i);
        const kb_ee_t a = (kb_ee_t)(ee + i);
        const uint8_t v = kb_ee_get(a);
        if (v == *p)
            continue;
        if (mode == KB_WALK_LOAD)
            *p = v;
        else if (mode == KB_WALK_BASE)
            kb_ee_put(a, *p);
#ifdef KB_J
        else if (mode == KB_WALK_JOURNAL) {
            const kb_ee_t e = (kb_ee_t)(KB_J + 3u + 2u * n);
            kb_ee_put(e, (uint8_t)a);
            kb_ee_put((kb_ee_t)(e + 1u), *p);
        }
#endif
        n++;
    }
    return n;
}

/* ---- two slots: [seq | 0xFF - seq | state | crc16] at 0 and at KB_SLOT_BYTES ---- */

static uint8_t kb_slot_ok(kb_ee_t a)
{
    return (uint8_t)(kb_seq_ok(a) && kb_copy_ok((kb_ee_t)(a + 2u)));
}

/* The slot holding the newest checkpoint (0 or 1), or 2 when none holds one. */
static uint8_t kb_slot_newest(void)
{
    const kb_ee_t b = (kb_ee_t)KB_SLOT_BYTES;
    const uint8_t ok0 = kb_slot_ok(0), ok1 = kb_slot_ok(b);
    if (ok0 && ok1)
        return (uint8_t)(kb_ee_get(b) == kb_seq_next(kb_ee_get(0)));
    return (uint8_t)(ok0 ? 0u : ok1 ? 1u : 2u);
}

/* ---- base [bseq | state | crc16] at 0 and the redo journal at KB_J (EEPROMs <= 256 B) ---- */

#ifdef KB_J
/* A committed journal not yet marked done in the base. The journal needs no check byte: jseq
 * is only ever overwritten when its journal is complete (committed, or copied and marked done),
 * so a torn jseq either matches nothing or makes a complete journal copy again. */
static uint8_t kb_journal_pending(void)
{
    const uint8_t s = kb_ee_get(KB_J);
    return (uint8_t)(s != 0xFFu && s != kb_ee_get(0));
}

/* The base holds a checkpoint of this build. */
static KB_NOINLINE uint8_t kb_base_ok(void)
{
    return (uint8_t)(kb_ee_get(0) != 0xFFu && kb_copy_ok(1));
}

/* Copies the journal's entries into the base, then marks it done (bseq := jseq). Copying
 * twice (a cut before the mark) sets the same bytes again. */
static void kb_journal_apply(void)
{
    const uint8_t cap = (uint8_t)(KB_JOURNAL_CAP < 0 ? 0 : KB_JOURNAL_CAP); /* <= 125 here */
    uint8_t n = kb_ee_get((kb_ee_t)(KB_J + 2u)), j;
    if (n > cap) /* not ours: nothing to copy */
        n = 0;
    for (j = 0; j < n; j++) {
        const kb_ee_t e = (kb_ee_t)(KB_J + 3u + 2u * j);
        const kb_ee_t a = kb_ee_get(e);
        if (a != 0 && a < KB_J) /* never bseq, never the journal */
            kb_ee_put(a, kb_ee_get((kb_ee_t)(e + 1u)));
    }
    kb_ee_put(0, kb_ee_get(KB_J));
}
#endif

/* ---- the checkpoint ---- */

/* At reset: the newest checkpoint into RAM. Returns 1 when one was restored, 0 when the EEPROM
 * holds none of this build's (the model starts as flashed). */
static uint8_t kb_persist_restore(void)
{
    if (KB_USE_SLOTS) {
        const uint8_t k = kb_slot_newest();
        if (k == 2)
            return 0;
        kb_walk((kb_ee_t)(k ? KB_SLOT_BYTES + 2u : 2u), KB_WALK_LOAD);
        return 1;
    }
#ifdef KB_J
    if (kb_journal_pending())
        kb_journal_apply();
    if (!kb_base_ok())
        return 0;
    kb_walk(1, KB_WALK_LOAD);
    return 1;
#else
    return 0;
#endif
}

/* Checkpoint the state in RAM. Returns 0 (written) or 1 (unchanged: the newest checkpoint is
 * this state; nothing written); *seq is the newest checkpoint's sequence number afterwards. */
static KB_NOINLINE uint8_t kb_persist_save(uint8_t *seq)
{
    const uint16_t crc = kb_state_crc(0);
    uint8_t s = 0;
    if (KB_USE_SLOTS) {
        const uint8_t k = kb_slot_newest();
        kb_ee_t a = 0;
        if (k != 2) {
            const kb_ee_t from = (kb_ee_t)(k ? KB_SLOT_BYTES : 0u);
            *seq = kb_ee_get(from);
            if (kb_walk((kb_ee_t)(from + 2u), KB_WALK_COUNT) == 0)
                return 1;
            s = kb_seq_next(*seq);
            a = (kb_ee_t)(k ? 0u : KB_SLOT_BYTES);
        }
        kb_ee_put(a, 0xFF); /* the slot stops counting before any of it changes */
        kb_seq_put(a, s);
        kb_walk((kb_ee_t)(a + 2u), KB_WALK_BASE);
        kb_put_check((kb_ee_t)(a + 2u), crc);
        kb_ee_put(a, s); /* the commit */
    }
#ifdef KB_J
    else if (kb_base_ok()) {
        /* at most KB_PERSIST_EVERY learning steps' changes (KB_USE_JOURNAL), which fit; the
         * check is the fingerprint, which never changes */
        const kb_ee_t n = kb_walk(1, KB_WALK_COUNT);
        *seq = kb_ee_get(0);
        if (n == 0)
            return 1;
        s = kb_seq_next(*seq);
        kb_ee_put(KB_J, 0xFF); /* the journal stops counting before any of it changes */
        kb_walk(1, KB_WALK_JOURNAL);
        kb_ee_put((kb_ee_t)(KB_J + 2u), n);
        kb_ee_put(KB_J, s); /* the commit */
        kb_journal_apply();
    } else {
        /* no base yet: written whole, bseq last; first the journal made unable to replay */
        kb_ee_put(KB_J, 0xFF);
        kb_ee_put(0, 0xFF);
        kb_walk(1, KB_WALK_BASE);
        kb_put_check(1, crc);
        kb_ee_put(0, 0);
    }
#endif
    *seq = s;
    return 0;
}

#ifdef KB_UART_H
/* The reply to a checkpoint frame: result (0 written, 1 unchanged), seq. */
static void kb_persist_frame(void)
{
    uint8_t seq = 0;
    const uint8_t r = kb_persist_save(&seq);
    kb_reply_begin(KB_OP_CHECKPOINT, 2);
    kb_tx_crc(r);
    kb_tx_crc(seq);
    kb_reply_end();
}
#endif

/* After a learning step that changed the state: with KB_PERSIST_EVERY = N > 0, a checkpoint
 * after every N such steps. Returns the learn reply's flag bit 4 when one was written. */
static uint8_t kb_persist_step(void)
{
#if KB_PERSIST_EVERY > 0
    uint8_t seq;
#if KB_PERSIST_EVERY > 1
    if (++kb_unsaved < KB_PERSIST_EVERY)
        return 0;
    kb_unsaved = 0;
#endif
    kb_persist_save(&seq);
    return 4;
#else
    return 0;
#endif
}

#define KB_PERSIST_RESTORE() kb_persist_restore()
/* a learn reply's flags: bit 1 the mistake, bit 2 a checkpoint written after it */
#define KB_LEARN_FLAGS(mistake) ((uint8_t)((mistake) ? 2u | kb_persist_step() : 0u))

#endif /* KB_PERSIST_EVERY */
#endif /* KB_PERSIST_H */
