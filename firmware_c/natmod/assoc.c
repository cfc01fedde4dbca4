/*
 * _kb_assoc: kbit.assoc's prediction and learning step as a native module (kb_assoc.h,
 * issue 20).
 *
 *     bind(model)            check a kbit.assoc.Assoc and make its context, model._ctx
 *                            (kbn_mp.h)
 *     predict(model, u)      Assoc.predict and Assoc.learn, bound as methods by kbit: the
 *     learn(model, u, y)     prediction for values u (kb_assoc_predict), one learning step
 *                            (kb_assoc_learn). Set count (and, learning, nc and state); return
 *                            the (predicted) label.
 *     _predict, _learn       the same for Assoc._predict and Assoc._learn (what the public ones
 *                            run in bytecode, after their checks)
 *     predict_py, learn_py, _predict_py, _learn_py   kbit's bytecode methods: what runs when u
 *                            is not an array('b') of length T, a value is outside
 *                            -2^(B-1) .. 2^(B-1)-1, y not in 0..255, or the model has no
 *                            context, and for learn a full class capacity (set by kbit)
 *     ABI                    KBN_ABI (kbn.h)
 *
 * The context is made from the model's approach, bits, P, d, cap, kt, R, nc, state and count
 * attributes and its buffers labels, nf (bytearray(cap) each), anchors (array('b'),
 * cap*kt*P*d), conn (the connection bits), _k (array('H'), P) and _dist (array('i'), P),
 * kb_assoc_t's near and dist. The fill counters nf decide which anchor rows are read: they are
 * checked at every call (Python may write them in place).
 */
#include "kbn_mp.h"

enum {
    APPROACH, BITS, SUBS, DIM, CAP, KT, OUTS, NC, STATE, COUNT, LABELS, FILL, ANCHORS, CONN,
    NEAR, DIST, NSLOT
};
KBN_CTX(NSLOT, kb_assoc_t);

/* the module's functions; mpy_init first in the text: 1.23's mpy_ld.py enters it by an 11-bit
 * jump (kbn.h) */
#define KBN_FUNS(X) \
    X(MP_QSTR_predict, predict) \
    X(MP_QSTR_learn, learn) \
    X(MP_QSTR__predict, predict_) \
    X(MP_QSTR__learn, learn_)
KBN_MODULE(KBN_FUNS)

#include "kbn_bind.h"

/* Bind x to its model's attributes as they are now: every check, or ValueError. */
static KBN_TEXT void rebind(ctx_t *x)
{
    kbn_head_t *h = &x->h;
    mp_map_t *map = kbn_rebind(h);
    kb_assoc_t *m = &x->k;
    size_t n;
    m->approach = (uint8_t)kbn_slot_int(h, map, APPROACH, MP_QSTR_approach, 0, 255);
    m->bits = (uint8_t)kbn_slot_int(h, map, BITS, MP_QSTR_bits, 0, 255);
    m->P = (uint8_t)kbn_slot_int(h, map, SUBS, MP_QSTR_P, 1, 255);
    m->d = (uint8_t)kbn_slot_int(h, map, DIM, MP_QSTR_d, 1, 255);
    m->cap = (uint8_t)kbn_slot_int(h, map, CAP, MP_QSTR_cap, 1, 255);
    m->kt = (uint8_t)kbn_slot_int(h, map, KT, MP_QSTR_kt, 1, 255);
    m->R = (uint8_t)kbn_slot_int(h, map, OUTS, MP_QSTR_R, 1, 255);
    m->nc = (uint8_t)kbn_slot_int(h, map, NC, MP_QSTR_nc, 0, m->cap);
    m->rng = (kb_rng_t)kbn_slot_int(h, map, STATE, MP_QSTR_state, 1, 0xFFFF);
    kbn_slot(h, map, COUNT, MP_QSTR_count);
    if (!kb_assoc_check_params(m->approach, m->bits, m->P, m->d, m->cap, m->kt, m->R, m->nc,
                               m->rng))
        kbn_bad_state();
    m->labels = kbn_slot_buf(h, map, LABELS, MP_QSTR_labels, 0, m->cap, KBN_RW, NULL);
    m->nf = kbn_slot_buf(h, map, FILL, MP_QSTR_nf, 0, m->cap, KBN_RW, NULL);
    m->anchors = kbn_slot_buf(h, map, ANCHORS, MP_QSTR_anchors, 'b',
                              (mp_int_t)m->cap * m->kt * m->P * m->d, KBN_RW, NULL);
    m->conn = kbn_slot_buf(h, map, CONN, MP_QSTR_conn, 0,
                           (mp_int_t)kb_assoc_conn_bytes(m->P, m->cap, m->kt, m->R), KBN_RW, NULL);
    m->near = kbn_slot_buf(h, map, NEAR, MP_QSTR__k, 'H', -1, KBN_RW, &n);
    if (n < 2u * (size_t)m->P)
        kbn_bad_state();
    m->dist = kbn_slot_buf(h, map, DIST, MP_QSTR__dist, 'i', -1, KBN_RW, &n);
    if (n < 4u * (size_t)m->P)
        kbn_bad_state();
    kbn_bound(h, map);
}

static KBN_TEXT mp_obj_t bind(mp_obj_t self)
{
    rebind((ctx_t *)kbn_find_or_new(self, sizeof(ctx_t), NSLOT));
    return mp_const_none;
}

/* The context of model `self` with values u of its length, each a B-bit int8 value (bound again
 * first when the model changed, its fill counters checked), or NULL: the bytecode runs the call
 * (and raises its error). */
static KBN_TEXT ctx_t *get(mp_obj_t self, mp_obj_t u_in, const int8_t **u)
{
    ctx_t *x = (ctx_t *)kbn_find(self);
    const uint8_t *nf, *end;
    uint32_t top;
    size_t n;
    if (x == NULL)
        return NULL;
    if (!kbn_fresh(&x->h))
        rebind(x);
    *u = kbn_codes(u_in, &n, 1);
    if (*u == NULL || n != (size_t)x->k.P * x->k.d || !kbn_values_fit(*u, n, x->k.bits))
        return NULL;
    /* no fill counter past a class's k~ rows: they decide which anchor rows are read */
    top = 1u + (uint32_t)(x->k.kt - 1u) * x->k.P;
    for (nf = x->k.nf, end = nf + x->k.cap; nf < end; nf++)
        if (*nf > top)
            kbn_bad_state();
    x->k.count = 0;
    x->k.changed = 0;
    return x;
}

/* predict and _predict; `py` names the fallback. */
static KBN_TEXT mp_obj_t do_predict(mp_obj_t fun, size_t n_args, size_t n_kw, mp_obj_t *args,
                                    qstr py)
{
    const int8_t *u;
    ctx_t *x;
    int16_t pred;
    if (n_args == 2 && n_kw == 0 && (x = get(args[0], args[1], &u)) != NULL) {
        pred = kbn_assoc_step(&x->k, u, -1);
        kbn_put(&x->h, COUNT, kbn_small(x->k.count));
        return kbn_small(pred);
    }
    return kbn_py(fun, py, n_args, n_kw, args);
}

/* learn and _learn; `py` names the fallback, which learn also takes when the class capacity is
 * full (kbit's error; nothing has changed). */
static KBN_TEXT mp_obj_t do_learn(mp_obj_t fun, size_t n_args, size_t n_kw, mp_obj_t *args,
                                  qstr py)
{
    const int8_t *u;
    ctx_t *x;
    mp_int_t y;
    int16_t pred;
    if (n_args == 3 && n_kw == 0 && (y = kbn_arg(args[2], 0, 255)) >= 0 &&
        (x = get(args[0], args[1], &u)) != NULL) {
        pred = kbn_assoc_step(&x->k, u, (int)y);
        if (pred == -2) {
            if (py == MP_QSTR_learn_py)
                return kbn_py(fun, py, n_args, n_kw, args);
            kbn_raise("kbit native: class capacity full");
        }
        kbn_put(&x->h, COUNT, kbn_small(x->k.count));
        kbn_put(&x->h, NC, kbn_small(x->k.nc));
        kbn_put(&x->h, STATE, kbn_small(x->k.rng));
        return kbn_small(pred);
    }
    return kbn_py(fun, py, n_args, n_kw, args);
}

KBN_FUN(predict)
{
    return do_predict(fun, n_args, n_kw, args, MP_QSTR_predict_py);
}

KBN_FUN(learn)
{
    return do_learn(fun, n_args, n_kw, args, MP_QSTR_learn_py);
}

KBN_FUN(predict_)
{
    return do_predict(fun, n_args, n_kw, args, MP_QSTR__predict_py);
}

KBN_FUN(learn_)
{
    return do_learn(fun, n_args, n_kw, args, MP_QSTR__learn_py);
}
