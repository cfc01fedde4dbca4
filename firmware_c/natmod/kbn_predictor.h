/*
 * kbn_predictor.h - what the predictors' glue (bonsai.c, protonn.c) shares: the context (ctx_t:
 * the slots, the payload the kernel parsed, the kernel's struct KBN_PREDICTOR_T), the module's
 * entry (update, update_run, reset, predict), the payload's parse (kbn_parse) and bind, the
 * context of a call (get), update, update_run and reset over the model's kernel functions
 * KBN_PREDICTOR_INIT(k, payload, len), KBN_PREDICTOR_UPDATE(k, j, c),
 * KBN_PREDICTOR_UPDATE_RUN(k, start, c, n) and KBN_PREDICTOR_RESET(k) (kern_<model>.c's).
 * Included once by each, after its slot enum (BUF first, NSLOT last); each then writes its
 * rebind (kbn_parse, then its own slots: 0, or the payload's kb_err_t code) and its predict,
 * which stores back its own fields.
 */
#ifndef KBN_PREDICTOR_H
#define KBN_PREDICTOR_H

#if !defined(KBN_PREDICTOR_T) || !defined(KBN_PREDICTOR_INIT) ||                              \
    !defined(KBN_PREDICTOR_UPDATE) || !defined(KBN_PREDICTOR_UPDATE_RUN) ||                   \
    !defined(KBN_PREDICTOR_RESET)
#error "define KBN_PREDICTOR_T, _INIT, _UPDATE, _UPDATE_RUN and _RESET before kbn_predictor.h"
#endif

typedef struct {
    kbn_head_t h;
    kbn_slot_t s[NSLOT];
    const void *payload; /* what k was parsed from */
    size_t len;
    KBN_PREDICTOR_T k;
} ctx_t;

/* the module's functions; mpy_init first in the text: 1.23's mpy_ld.py enters it by an 11-bit
 * jump (kbn.h) */
#define KBN_FUNS(X)                                                                           \
    X(MP_QSTR_update, update)                                                                 \
    X(MP_QSTR_update_run, update_run)                                                         \
    X(MP_QSTR_reset, reset)                                                                   \
    X(MP_QSTR_predict, predict)
KBN_MODULE(KBN_FUNS)

#include "kbn_bind.h"

static KBN_TEXT int rebind(ctx_t *x);

/* The payload slot (BUF: model.buf, a bytes), parsed again when it is not the one x was parsed
 * from; returns the map for the glue's other slots, and in *err 0 or kb_err_t's code (x is
 * then left unbound). */
static KBN_TEXT mp_map_t *kbn_parse(ctx_t *x, int *err)
{
    kbn_head_t *h = &x->h;
    mp_map_t *map = kbn_rebind(h);
    size_t len;
    const uint8_t *pl = kbn_slot_buf(h, map, BUF, MP_QSTR_buf, 0, -1, KBN_FIXED, &len);
    *err = 0;
    if (pl != x->payload || len != x->len) {
        *err = KBN_PREDICTOR_INIT(&x->k, pl, (uint32_t)len);
        x->payload = NULL;
        if (*err)
            return map;
        x->payload = pl;
        x->len = len;
    }
    return map;
}

static KBN_TEXT mp_obj_t bind(mp_obj_t self)
{
    ctx_t *x = (ctx_t *)kbn_new(self, sizeof(ctx_t), NSLOT);
    return MP_OBJ_NEW_SMALL_INT(rebind(x));
}

/* The context of model `self` (bound again first when the model changed), or NULL. */
static KBN_TEXT ctx_t *get(mp_obj_t self)
{
    ctx_t *x = (ctx_t *)kbn_find(self);
    if (x != NULL && !kbn_fresh(&x->h) && rebind(x) != 0)
        kbn_raise("kbit native: the model's payload is outside the native kernel");
    return x;
}

KBN_FUN(update)
{
    ctx_t *x;
    mp_int_t j, c;
    if (n_args != 3 || n_kw != 0 || (x = get(args[0])) == NULL)
        return kbn_py(fun, MP_QSTR_update_py, n_args, n_kw, args);
    j = kbn_arg(args[1], 0, 0xFFFF);
    c = kbn_arg(args[2], 0, 255);
    if (j < 0 || c < 0 || KBN_PREDICTOR_UPDATE(&x->k, (uint16_t)j, (uint8_t)c) != 0)
        return kbn_py(fun, MP_QSTR_update_err, n_args, n_kw, args);
    return mp_const_none;
}

/* update_run(model, start, codes). A model without its context runs kbit's bytecode
 * (update_run_py). The input in progress lives in the context, so whatever else the kernel does
 * not take -- codes that are not a buffer of bytes (a list), a start that is not an int in
 * 0..65535, a run it refuses -- goes to kbit's update_run_err, which raises the bytecode's
 * error or hands codes in range back as a bytes. No codes: nothing to do, as in the bytecode. */
KBN_FUN(update_run)
{
    ctx_t *x;
    const uint8_t *c;
    size_t n = 0;
    mp_int_t start;
    if (n_args != 3 || n_kw != 0 || (x = get(args[0])) == NULL)
        return kbn_py(fun, MP_QSTR_update_run_py, n_args, n_kw, args);
    c = kbn_codes(args[2], &n, 0);
    if (c != NULL && n == 0)
        return mp_const_none;
    start = kbn_arg(args[1], 0, 0xFFFF);
    if (c == NULL || start < 0 || n > 0xFFFF ||
        KBN_PREDICTOR_UPDATE_RUN(&x->k, (uint32_t)start, c, (uint32_t)n) != 0)
        return kbn_py(fun, MP_QSTR_update_run_err, n_args, n_kw, args);
    return mp_const_none;
}

KBN_FUN(reset)
{
    ctx_t *x;
    if (n_args != 1 || n_kw != 0 || (x = get(args[0])) == NULL)
        return kbn_py(fun, MP_QSTR_reset_py, n_args, n_kw, args);
    KBN_PREDICTOR_RESET(&x->k);
    return mp_const_none;
}

#endif /* KBN_PREDICTOR_H */
