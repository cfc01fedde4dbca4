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
 *     attach(m)              give model m (a file's quantizer just read into m.quantizer) its
 *                            own m.quantize: a context of this module, called without a Python
 *                            frame or a bound method between, found in m's own attributes
 *                            before any class is searched (see call below)
 *     model_quantize(m, raw, out)   the same for a model without its own (a quantizer set by
 *                            hand): the class's method (kbit.kbfile.Inputs), its quantizer
 *                            found in the model's attributes
 *     use_py(on)             on: every attached m.quantize runs the bytecode method
 *                            (kbit.quant.use_native(False))
 *     quantize_py, model_quantize_py   kbit's bytecode methods: what runs for anything else --
 *                            no out (a new one is made), a list, a str, a wrong length or
 *                            type, an array('i') reading outside -2^30 .. 2^30-1, a model
 *                            without a quantizer or a quantizer without its context -- with the
 *                            bytecode's errors (set by kbit)
 *     ABI                    KBN_ABI (kbn.h)
 *
 * The context is made from the quantizer's n, S, R, top and off attributes and its table t
 * (array('i') of 3n: lo, up, M of each feature in turn, up standing for hi: kern_quant.c),
 * checked against contract 1.1 (bits 1..8: S = 28 - b, top = 2^b - 1, R 0 or 2^(S-1), off 0 or
 * 2^(b-1)). The table's contents are read at every call, as the bytecode reads them.
 */
#include "kbn_mp.h"

enum { COUNT, SHIFT, ROUND, TOP, OFF, TAB, NSLOT };
KBN_CTX(NSLOT, kb_quant_t);

/* A model's own m.quantize (attach): a context whose one slot is the model's `quantizer`
 * attribute, so a call finds the quantizer as the kernels find their buffers (kbn_fresh). */
typedef struct {
    kbn_head_t h;
    kbn_slot_t s[1];
    mp_obj_t py; /* the bytecode method, Inputs.quantize: what runs whatever the kernel refuses */
    ctx_t *q;    /* the quantizer's context when bound (kbn_find of the slot's value) */
} method_t;

/* the module's functions; mpy_init first in the text: 1.23's mpy_ld.py enters it by an 11-bit
 * jump (kbn.h) */
#define KBN_FUNS(X) \
    X(MP_QSTR_quantize, quantize) \
    X(MP_QSTR_model_quantize, model_quantize) \
    X(MP_QSTR_attach, attach) \
    X(MP_QSTR_use_py, use_py)
KBN_MODULE(KBN_FUNS)

#include "kbn_bind.h"

static KBN_TEXT mp_obj_t call(mp_obj_t self, size_t n_args, size_t n_kw, const mp_obj_t *args);

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
    q->lo = kbn_slot_buf(h, map, TAB, MP_QSTR_t, 'i', 12 * (mp_int_t)q->n, KBN_RO, NULL);
    q->hi = q->lo + 1;
    q->M = (const uint32_t *)q->lo + 2;
    kbn_bound(h, map);
}

/* The quantizer context of `self`, or NULL: a model's method (attach) is a context of this
 * module's type too, but of one slot, and is never taken for a quantizer's. */
KBN_INLINE ctx_t *quant_ctx(mp_obj_t self)
{
    kbn_head_t *h = kbn_find(self);
    return h != NULL && h->n == NSLOT ? (ctx_t *)h : NULL;
}

static KBN_TEXT mp_obj_t bind(mp_obj_t self)
{
    kbn_head_t *h = kbn_find_or_new(self, sizeof(ctx_t), NSLOT);
    if (h->n != NSLOT)
        kbn_raise("kbit native: not a quantizer");
    rebind((ctx_t *)h);
    return mp_const_none;
}

/* The codes of raw in out by quantizer context x, out returned; MP_OBJ_NULL (nothing written)
 * for whatever the kernel does not take: the bytecode runs that call. */
KBN_INLINE mp_obj_t run_ctx(ctx_t *x, mp_obj_t raw, mp_obj_t out)
{
    const mp_obj_array_t *r, *o;
    if (!mp_obj_is_obj(raw) || !mp_obj_is_obj(out))
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

/* The same by quantizer `self` (its context, if it has one). */
KBN_INLINE mp_obj_t run(mp_obj_t self, mp_obj_t raw, mp_obj_t out)
{
    ctx_t *x = quant_ctx(self);
    return x == NULL ? MP_OBJ_NULL : run_ctx(x, raw, out);
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

/* Model m's method as the file's quantizer is read: stored as m.quantize, an attribute of the
 * instance, which MicroPython finds in one lookup of the model's own map (a method of a base
 * class costs a search of the map, then of each class's dict: about 1,300 cycles a call on the
 * Pico, a division per probe), and calls through this module's type (`call`) with no bound
 * method made. */
KBN_FUN(attach)
{
    const mp_obj_fun_bc_t *f = MP_OBJ_TO_PTR(fun);
    method_t *x;
    size_t i;
    if (kbn_members(args[0]) == NULL)
        kbn_raise("kbit native: not a model");
    MP_OBJ_TYPE_SET_SLOT(&kbn_g.ctx_type, call, call, 0);
    x = m_malloc(sizeof(method_t));
    for (i = 0; i < sizeof(method_t) / sizeof(mp_uint_t); i++)
        ((mp_uint_t *)x)[i] = 0;
    x->h.base.type = KBN_CTX_TYPE;
    x->h.self = args[0];
    x->h.n = 1;
    x->h.slot = x->s;
    x->py = mp_load_attr(MP_OBJ_FROM_PTR(&f->context->module), MP_QSTR_model_quantize_py);
    mp_store_attr(args[0], MP_QSTR_quantize, MP_OBJ_FROM_PTR(x));
    return mp_const_none; /* bound at its first call: storing may have moved the map */
}

KBN_FUN(use_py)
{
    kbn_g.quant_py = mp_obj_is_true(args[0]);
    return mp_const_none;
}

/* Bind method x to its model's quantizer attribute as it is now; unbound (the bytecode runs)
 * when the model has none of its own, or one without a context of this module. The quantizer's
 * context is kept: it stays its quantizer's (its `self`), checked against the quantizer's
 * attributes at every call (run_ctx), whatever Python does to q._ctx. */
static KBN_TEXT void rebind_method(method_t *x)
{
    mp_map_t *map = kbn_rebind(&x->h);
    kbn_slot_t *s = x->s;
    s->key = MP_OBJ_NEW_QSTR(MP_QSTR_quantizer);
    s->e = kbn_elem(map, s->key);
    if (s->e == NULL)
        return;
    s->v = s->e->value;
    x->q = quant_ctx(s->v);
    if (x->q != NULL)
        kbn_bound(&x->h, map);
}

/* m.quantize(raw, out) when the kernel does not take it: the bytecode method, self first. */
static KBN_TEXT __attribute__((noinline)) mp_obj_t call_py(method_t *x, size_t n_args, size_t n_kw,
                                                         const mp_obj_t *args)
{
    mp_obj_t a[8];
    size_t i;
    if (n_args + 2 * n_kw >= sizeof(a) / sizeof(a[0])) /* more than it takes: its TypeError */
        mp_raise_TypeError(MP_ERROR_TEXT("quantize takes raw and out"));
    a[0] = x->h.self;
    for (i = 0; i < n_args + 2 * n_kw; i++)
        a[1 + i] = args[i];
    return mp_call_function_n_kw(x->py, n_args + 1, n_kw, a);
}

/* Calling a context: m.quantize(raw, out) of a model given its own (attach). A quantizer's
 * context (q._ctx) is not callable. */
static KBN_TEXT mp_obj_t call(mp_obj_t self, size_t n_args, size_t n_kw, const mp_obj_t *args)
{
    method_t *x = MP_OBJ_TO_PTR(self);
    mp_obj_t r;
    if (x->h.n != 1)
        mp_raise_TypeError(MP_ERROR_TEXT("kbit native: a context is not callable"));
    if (n_args == 2 && n_kw == 0 && !kbn_g.quant_py) {
        if (!kbn_fresh(&x->h))
            rebind_method(x);
        if (x->h.table != NULL && (r = run_ctx(x->q, args[0], args[1])) != MP_OBJ_NULL)
            return r;
    }
    return call_py(x, n_args, n_kw, args);
}
