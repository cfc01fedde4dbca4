/*
 * _kb_features: kbit.features' window features as a native module (kb_features.h; contract 12,
 * 12.1 and 13; issue 29).
 *
 *     features(window, axes, out)   kbit.features.features: the seven time-domain features of
 *                            every axis of window (an array('h') of axes*N readings, 1 <= N <=
 *                            256) into out (an array('i') of 7*axes), which it returns
 *     bind(e)                check a kbit.features.Extractor and make its context, e._ctx
 *                            (kbn_mp.h), with the FFT's scratch inside it
 *     run(e, window)         Extractor.run, bound as a method by kbit: e's selection of window
 *                            (an array('h') of axes*n) into e.out, which it returns
 *     features_py, run_py    kbit's bytecode: what runs for anything else -- a list, an
 *                            array('i') (its readings need the int16 check), a wrong length or
 *                            type, an extractor without its context -- with the bytecode's
 *                            errors (set by kbit)
 *     ABI                    KBN_ABI (kbn.h)
 *
 * The context is made from the extractor's axes, n, mask, p, bands and out attributes, checked
 * against contract 12.1; its scratch is sized for the p it was first bound with (a larger p
 * set later is refused: the context cannot grow without allocating at a call).
 */
#include "kbn_mp.h"

enum { AXES, COUNT, MASK, LOGP, BANDS, OUT, NSLOT };
KBN_CTX(NSLOT, kbn_features_t);

/* the context, then 2 * 2^cap int16 of FFT scratch */
typedef struct {
    ctx_t c;
    mp_int_t cap;
} fctx_t;

#define KBN_FUNS(X) \
    X(MP_QSTR_features, features) \
    X(MP_QSTR_run, run)
KBN_MODULE(KBN_FUNS)

#include "kbn_bind.h"

/* Bind x to its extractor's attributes as they are now: every check of contract 12.1, or
 * ValueError. */
static KBN_TEXT void rebind(fctx_t *x)
{
    kbn_head_t *h = &x->c.h;
    mp_map_t *map = kbn_rebind(h);
    kbn_features_t *k = &x->c.k;
    mp_int_t per, m;
    k->axes = (uint8_t)kbn_slot_int(h, map, AXES, MP_QSTR_axes, 1, 255);
    k->n = (uint16_t)kbn_slot_int(h, map, COUNT, MP_QSTR_n, 1, KB_FEATURES_N_MAX);
    k->mask = (uint8_t)kbn_slot_int(h, map, MASK, MP_QSTR_mask, 0, 0x7F);
    k->p = (uint8_t)kbn_slot_int(h, map, LOGP, MP_QSTR_p, 0, x->cap);
    k->bands = (uint8_t)kbn_slot_int(h, map, BANDS, MP_QSTR_bands, 0, 128);
    if (k->p == 0 ? k->bands != 0 :
        k->p < 5 || (1 << k->p) > k->n || k->bands == 0 || (k->bands & (k->bands - 1)) != 0 ||
        k->bands > 1 << (k->p - 1))
        kbn_bad_state();
    for (per = k->bands, m = k->mask; m; m >>= 1)
        per += m & 1;
    if (per == 0)
        kbn_bad_state();
    k->scratch = k->p ? (int16_t *)(x + 1) : NULL;
    k->out = kbn_slot_buf(h, map, OUT, MP_QSTR_out, 'i', 4 * per * k->axes, KBN_RW, NULL);
    kbn_bound(h, map);
}

static KBN_TEXT mp_obj_t bind(mp_obj_t self)
{
    kbn_head_t *h = kbn_find(self);
    if (h == NULL) {
        /* the scratch for the p the extractor has now (checked by rebind) */
        mp_obj_t p = mp_load_attr(self, MP_QSTR_p);
        mp_int_t cap = mp_obj_is_small_int(p) ? MP_OBJ_SMALL_INT_VALUE(p) : 0;
        if (cap < 0 || cap > 8)
            kbn_bad_state();
        h = kbn_new(self, sizeof(fctx_t) + (cap ? (size_t)4 << cap : 0), NSLOT);
        ((fctx_t *)h)->cap = cap;
    } else if (h->n != NSLOT) {
        kbn_raise("kbit native: not an extractor");
    }
    rebind((fctx_t *)h);
    return mp_const_none;
}

/* The items of o when it is an array('h') of len readings, else NULL. */
KBN_INLINE const int16_t *readings(mp_obj_t o, size_t len)
{
    const mp_obj_array_t *a;
    if (!mp_obj_is_obj(o))
        return NULL;
    a = MP_OBJ_TO_PTR(o);
    return a->base.type == kbn_g.array && a->typecode == 'h' && a->len == len ? a->items : NULL;
}

KBN_FUN(features)
{
    const mp_obj_array_t *o;
    const int16_t *w;
    mp_int_t axes;
    size_t n;
    kbn_features_t k;
    /* a bool is no axes count for the bytecode (type(axes) is not int): nor here */
    if (n_args == 3 && n_kw == 0 && mp_obj_is_small_int(args[1]) && mp_obj_is_obj(args[0]) &&
        mp_obj_is_obj(args[2])) {
        axes = MP_OBJ_SMALL_INT_VALUE(args[1]);
        o = MP_OBJ_TO_PTR(args[2]);
        if (axes >= 1 && axes <= 255 && o->base.type == kbn_g.array && o->typecode == 'i' &&
            o->len == (size_t)(KB_FEATURES_F * axes)) {
            n = ((const mp_obj_array_t *)MP_OBJ_TO_PTR(args[0]))->len / (size_t)axes;
            /* one kernel for both calls: the seven of every axis are extract's mask 0x7F */
            k.n = (uint16_t)n;
            k.axes = (uint8_t)axes;
            k.mask = 0x7F;
            k.p = k.bands = 0;
            k.scratch = NULL;
            k.out = o->items;
            if (n >= 1 && n <= KB_FEATURES_N_MAX && (w = readings(args[0], n * (size_t)axes)) &&
                kbn_features_run(&k, w) == KB_OK)
                return args[2];
        }
    }
    return kbn_py(fun, MP_QSTR_features_py, n_args, n_kw, args);
}

KBN_FUN(run)
{
    const int16_t *w;
    kbn_head_t *h;
    ctx_t *x;
    if (n_args == 2 && n_kw == 0 && (h = kbn_find(args[0])) != NULL && h->n == NSLOT) {
        x = (ctx_t *)h;
        if (!kbn_fresh(h))
            rebind((fctx_t *)x);
        w = readings(args[1], (size_t)x->k.n * x->k.axes);
        if (w != NULL && kbn_features_run(&x->k, w) == KB_OK)
            return x->s[OUT].v;
    }
    return kbn_py(fun, MP_QSTR_run_py, n_args, n_kw, args);
}
