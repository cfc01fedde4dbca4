/*
 * _kb_protonn: kbit.protonn's streamed prediction as a native module (kb_protonn.h, issue 20).
 *
 *     bind(model)            parse model.buf (the payload kbit has checked, a bytes) into a new
 *                            context, model._ctx (kbn_mp.h): kb_protonn_t, the input in
 *                            progress included. 0, or kb_err_t's code
 *     update(model, j, c)    ProtoNN.update, update_run, reset and predict, bound as methods by
 *     update_run(model, s, codes)  kbit: feature j has code c (kb_protonn_update); features s ..
 *     reset(model)           s+len(codes)-1 have the codes, a buffer of bytes, checked whole
 *     predict(model)         first (kb_protonn_update_run); drop the input in progress; the
 *                            prediction (kb_protonn_predict), with model.P, model.D, model.k
 *                            and model.scores (array('i') each) set
 *     update_py, update_run_py, reset_py, predict_py   kbit's bytecode methods, for a model
 *                            without a context
 *     update_err, update_run_err   kbit's hooks for an update or a run the kernel refuses (an
 *                            index not above the previous one, beyond dims, a code above
 *                            2^B - 1): they raise kbit's error (update_run_err also takes
 *                            codes that are not a buffer of bytes, kbn_mp.h)
 *     ABI                    KBN_ABI (kbn.h)
 *
 * A context is bound to the payload it parsed: a model whose buf is replaced is parsed again
 * (which drops the input in progress). The payload must be a bytes: the kernel walks its matrices
 * at every update and prediction, so its contents must not change after the parse.
 */
#include "kbn_mp.h"

enum { BUF, PROJ, DIST, KERN, SCORES, NSLOT };
typedef struct {
    kbn_head_t h;
    kbn_slot_t s[NSLOT];
    const void *payload; /* what k was parsed from */
    size_t len;
    kb_protonn_t k;
} ctx_t;

static KBN_TEXT mp_obj_t bind(mp_obj_t self);
KBN_FUN(update);
KBN_FUN(update_run);
KBN_FUN(reset);
KBN_FUN(predict);
static MP_DEFINE_CONST_FUN_OBJ_1(bind_obj, bind);

/* first in the text: 1.23's mpy_ld.py enters it by an 11-bit jump (kbn.h) */
mp_obj_t mpy_init(mp_obj_fun_bc_t *self, size_t n_args, size_t n_kw, mp_obj_t *args)
{
    MP_DYNRUNTIME_INIT_ENTRY
    kbn_init();
    rc.children = (void *)&kbn_g; /* each function keeps the bss (kbn_g) alive */
    mp_store_global(MP_QSTR_bind, MP_OBJ_FROM_PTR(&bind_obj));
    mp_store_global(MP_QSTR_update, MP_DYNRUNTIME_MAKE_FUNCTION(update));
    mp_store_global(MP_QSTR_update_run, MP_DYNRUNTIME_MAKE_FUNCTION(update_run));
    mp_store_global(MP_QSTR_reset, MP_DYNRUNTIME_MAKE_FUNCTION(reset));
    mp_store_global(MP_QSTR_predict, MP_DYNRUNTIME_MAKE_FUNCTION(predict));
    MP_DYNRUNTIME_INIT_EXIT
}

#include "kbn_bind.h"

/* Bind x to its model's attributes as they are now; the payload is parsed again when it is not
 * the one x was parsed from. 0, or kb_err_t's code (x is then left unbound). */
static KBN_TEXT int rebind(ctx_t *x)
{
    kbn_head_t *h = &x->h;
    mp_map_t *map = kbn_rebind(h);
    size_t len;
    const uint8_t *pl = kbn_slot_buf(h, map, BUF, MP_QSTR_buf, 0, -1, KBN_FIXED, &len);
    if (pl != x->payload || len != x->len) {
        const int err = kbn_protonn_init(&x->k, pl, (uint32_t)len);
        x->payload = NULL;
        if (err)
            return err;
        x->payload = pl;
        x->len = len;
    }
    kbn_slot_buf(h, map, PROJ, MP_QSTR_P, 'i', 4 * (mp_int_t)x->k.proj.d, KBN_RW, NULL);
    kbn_slot_buf(h, map, DIST, MP_QSTR_D, 'i', 4 * (mp_int_t)x->k.m, KBN_RW, NULL);
    kbn_slot_buf(h, map, KERN, MP_QSTR_k, 'i', 4 * (mp_int_t)x->k.m, KBN_RW, NULL);
    kbn_slot_buf(h, map, SCORES, MP_QSTR_scores, 'i', 4 * (mp_int_t)x->k.L, KBN_RW, NULL);
    kbn_bound(h, map);
    return 0;
}

#define KBN_PREDICTOR_UPDATE kbn_protonn_update
#define KBN_PREDICTOR_UPDATE_RUN kbn_protonn_update_run
#define KBN_PREDICTOR_RESET kbn_protonn_reset
#include "kbn_predictor.h" /* bind, get, update, update_run, reset */

KBN_FUN(predict)
{
    ctx_t *x;
    int32_t *P, *D, *K, *S;
    uint32_t y;
    uint8_t i;
    if (n_args != 1 || n_kw != 0 || (x = get(args[0])) == NULL)
        return kbn_py(fun, MP_QSTR_predict_py, n_args, n_kw, args);
    y = kbn_protonn_predict(&x->k);
    P = (int32_t *)x->h.slot[PROJ].items;
    D = (int32_t *)x->h.slot[DIST].items;
    K = (int32_t *)x->h.slot[KERN].items;
    S = (int32_t *)x->h.slot[SCORES].items;
    for (i = 0; i < x->k.proj.d; i++)
        P[i] = x->k.P[i];
    for (i = 0; i < x->k.m; i++) {
        D[i] = x->k.D[i];
        K[i] = x->k.k[i];
    }
    for (i = 0; i < x->k.L; i++)
        S[i] = x->k.scores[i];
    return mp_obj_new_int_from_uint(y);
}
