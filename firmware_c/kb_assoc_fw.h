/*
 * kb_assoc_fw.h - an assoc model whose parameters are compile-time constants: the KB_ASSOC_FW_*
 * of a header generated from a model file (kilobit.models.assoc.firmware.header), over one
 * memory block laid out as the contract's memory (labels | nf | anchors | conn, section 9).
 * The UART firmware (avr/assoc_stream.c) and an exported model (kb_export.h) set up their
 * model with it, so the two carve the block the same way.
 */
#ifndef KB_ASSOC_FW_H
#define KB_ASSOC_FW_H

#include <stdint.h>

#include "kb_assoc.h"

#define KB_ASSOC_FW_T (KB_ASSOC_FW_P * KB_ASSOC_FW_D)

/* m as the generated header gives it, its buffers in mem (KB_ASSOC_FW_MEM_BYTES), near and
 * dist (KB_ASSOC_FW_P each). */
static inline void kb_assoc_fw_setup(kb_assoc_t *m, uint8_t *mem, uint16_t *near,
                                     uint32_t *dist)
{
    m->approach = KB_ASSOC_FW_APPROACH;
    m->bits = KB_ASSOC_FW_BITS;
    m->P = KB_ASSOC_FW_P;
    m->d = KB_ASSOC_FW_D;
    m->cap = KB_ASSOC_FW_CAP;
    m->kt = KB_ASSOC_FW_KT;
    m->R = KB_ASSOC_FW_R;
    m->nc = KB_ASSOC_FW_NC;
    m->rng = KB_ASSOC_FW_RNG;
    m->labels = mem;
    m->nf = mem + KB_ASSOC_FW_CAP;
    m->anchors = (int8_t *)(mem + 2 * KB_ASSOC_FW_CAP);
    m->conn = mem + 2 * KB_ASSOC_FW_CAP +
              (uint16_t)KB_ASSOC_FW_CAP * KB_ASSOC_FW_KT * KB_ASSOC_FW_T;
    m->near = near;
    m->dist = dist;
}

#endif /* KB_ASSOC_FW_H */
