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
#define KBN_PREDICTOR_T kb_protonn_t
#define KBN_PREDICTOR_INIT kbn_protonn_init
#define KBN_PREDICTOR_UPDATE kbn_protonn_update
#define KBN_PREDICTOR_UPDATE_RUN kbn_protonn_update_run
#define KBN_PREDICTOR_RESET kbn_protonn_reset
#include "kbn_predictor.h" /* ctx_t, the entry, bind, get, update, update_run, reset */

/* Bind x to its model's attributes as they are now (the payload parsed again when it is
 * not the one x was parsed from). 0, or kb_err_t's code (x is then left unbound). */
static KBN_TEXT int rebind(ctx_t *x)
{
    kbn_head_t *h = &x->h;
    int err;
    mp_map_t *map = kbn_parse(x, &err);
    if (err)
        return err;
    kbn_slot_buf(h, map, PROJ, MP_QSTR_P, 'i', 4 * (mp_int_t)x->k.proj.d, KBN_RW, NULL);
    kbn_slot_buf(h, map, DIST, MP_QSTR_D, 'i', 4 * (mp_int_t)x->k.m, KBN_RW, NULL);
    kbn_slot_buf(h, map, KERN, MP_QSTR_k, 'i', 4 * (mp_int_t)x->k.m, KBN_RW, NULL);
    kbn_slot_buf(h, map, SCORES, MP_QSTR_scores, 'i', 4 * (mp_int_t)x->k.L, KBN_RW, NULL);
    kbn_bound(h, map);
    return 0;
}

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
