/*
 * _kb_quant: kbit.quant's integer quantizer as a native module (kb_quant.h; contract 1.1,
 * issue 28).
 *
 *     bind(q)                check a kbit.quant.Quantizer and make its context, q._ctx
 *                            (kbn_mp.h)
 *     quantize(q, raw, out)  Quantizer.quantize, bound as a method by kbit: the codes of the n
 *                            readings raw (an array('h') or array('i') of n) in out (a
 *                            bytearray or array('B') of n; for assoc's signed values an
 *                            array('b')), which it returns
 *     model_quantize(m, raw, out)   the same for a model, m.quantize (kbit.quant.Inputs): its
 *                            quantizer found in the model's attributes, no Python frame between
 *     quantize_py, model_quantize_py   kbit's bytecode methods: what runs for anything else --
 *                            no out (a new one is made), a list, a str, a wrong length or
 *                            type, an array('i') reading outside -2^30 .. 2^30-1, a model
 *                            without a quantizer or a quantizer without its context -- with the
 *                            bytecode's errors (set by kbit)
 *     ABI                    KBN_ABI (kbn.h)
 *
 * The context is made from the quantizer's n, S, R, top and off attributes and its arrays lo,
 * hi and M (array('i') of n each), checked against contract 1.1 (bits 1..8: S = 28 - b, top =
 * 2^b - 1, R 0 or 2^(S-1), off 0 or 2^(b-1)). Their contents are read at every call, as the
 * bytecode reads them.
 */
#include "kbn_mp.h"

enum { COUNT, SHIFT, ROUND, TOP, OFF, LO, HI, MUL, NSLOT };
KBN_CTX(NSLOT, kb_quant_t);

/* the module's functions; mpy_init first in the text: 1.23's mpy_ld.py enters it by an 11-bit
 * jump (kbn.h) */
#define KBN_FUNS(X) \
    X(MP_QSTR_quantize, quantize) \
    X(MP_QSTR_model_quantize, model_quantize)
KBN_MODULE(KBN_FUNS)

#include "kbn_bind.h"

/* Bind x to its quantizer's attributes as they are now: every check, or ValueError. */
static KBN_TEXT void rebind(ctx_t *x)
{
    kbn_head_t *h = &x->h;
    mp_map_t *map = kbn_rebind(h);
    kb_quant_t *q = &x->k;
    mp_int_t bits, R, off;
    q->n = (uint16_t)kbn_slot_int(h, map, COUNT, MP_QSTR_n, 1, 0xFFFF);
    q->S = (uint8_t)kbn_slot_int(h, map, SHIFT, MP_QSTR_S, KB_QUANT_TOTAL - 8, KB_QUANT_TOTAL - 1);
    bits = KB_QUANT_TOTAL - q->S;
    q->top = (uint8_t)kbn_slot_int(h, map, TOP, MP_QSTR_top, 1, 255);
    R = kbn_slot_int(h, map, ROUND, MP_QSTR_R, 0, (mp_int_t)1 << (q->S - 1));
    off = kbn_slot_int(h, map, OFF, MP_QSTR_off, 0, 128);
    if (q->top != (1 << bits) - 1 || (R != 0 && R != (mp_int_t)1 << (q->S - 1)) ||
        (off != 0 && off != 1 << (bits - 1)))
        kbn_bad_state();
    q->R = (uint32_t)R;
    q->offset = (uint8_t)off;
    q->lo = kbn_slot_buf(h, map, LO, MP_QSTR_lo, 'i', 4 * (mp_int_t)q->n, KBN_RO, NULL);
    q->hi = kbn_slot_buf(h, map, HI, MP_QSTR_hi, 'i', 4 * (mp_int_t)q->n, KBN_RO, NULL);
    q->M = kbn_slot_buf(h, map, MUL, MP_QSTR_M, 'i', 4 * (mp_int_t)q->n, KBN_RO, NULL);
    kbn_bound(h, map);
}

static KBN_TEXT mp_obj_t bind(mp_obj_t self)
{
    rebind((ctx_t *)kbn_find_or_new(self, sizeof(ctx_t), NSLOT));
    return mp_const_none;
}

/* Quantizer `self`'s codes of raw in out, which is returned; MP_OBJ_NULL (nothing written) for
 * whatever the kernel does not take: the bytecode runs that call. */
KBN_INLINE mp_obj_t run(mp_obj_t self, mp_obj_t raw, mp_obj_t out)
{
    ctx_t *x = (ctx_t *)kbn_find(self);
    const mp_obj_array_t *r, *o;
    if (x == NULL || !mp_obj_is_obj(raw) || !mp_obj_is_obj(out))
        return MP_OBJ_NULL;
    if (!kbn_fresh(&x->h))
        rebind(x);
    r = MP_OBJ_TO_PTR(raw);
    o = MP_OBJ_TO_PTR(out);
    if (r->base.type != kbn_g.array || (r->typecode != 'h' && r->typecode != 'i') ||
        r->len != x->k.n || o->len != x->k.n)
        return MP_OBJ_NULL;
    if (x->k.offset ? o->base.type != kbn_g.array || o->typecode != 'b' :
        o->base.type != kbn_g.bytearray && (o->base.type != kbn_g.array || o->typecode != 'B'))
        return MP_OBJ_NULL;
    if (kbn_quant_run(&x->k, r->items, r->typecode == 'i', o->items) != 0)
        return MP_OBJ_NULL;
    return out;
}

KBN_FUN(quantize)
{
    mp_obj_t r;
    if (n_args == 3 && n_kw == 0 && (r = run(args[0], args[1], args[2])) != MP_OBJ_NULL)
        return r;
    return kbn_py(fun, MP_QSTR_quantize_py, n_args, n_kw, args);
}

/* The model's quantizer is found as kbn_find finds a context: where it was in the last
 * model's map, else by a search. */
KBN_FUN(model_quantize)
{
    const mp_obj_t key = MP_OBJ_NEW_QSTR(MP_QSTR_quantizer);
    mp_map_t *map;
    mp_map_elem_t *e;
    mp_obj_t r;
    if (n_args == 3 && n_kw == 0 && (map = kbn_members(args[0])) != NULL) {
        e = map->table + kbn_g.hint_q;
        if (kbn_g.hint_q >= map->alloc || e->key != key) {
            e = kbn_elem(map, key);
            if (e != NULL)
                kbn_g.hint_q = (size_t)(e - map->table);
        }
        if (e != NULL && (r = run(e->value, args[1], args[2])) != MP_OBJ_NULL)
            return r;
    }
    return kbn_py(fun, MP_QSTR_model_quantize_py, n_args, n_kw, args);
}
