/*
 * _kb_bonsai: kbit.bonsai's streamed prediction as a native module (kb_bonsai.h, issue 20).
 *
 *     size()                 bytes of the model's context (kb_bonsai_t and where it points)
 *     init(model)            parse model.buf (the payload kbit has checked) into model._ctx,
 *                            a bytearray(size()); 0, or kb_err_t's code: KB_ERR_LIMIT for
 *                            more than KB_BONSAI_LMAX classes (kbn.h), which kbit runs in
 *                            bytecode
 *     update(model, j, c)    feature j has code c (kb_bonsai_update): 0, or -1 for an index
 *                            not above the previous one, beyond dims, or a code above 2^B - 1
 *     reset(model)           drop the input in progress
 *     predict(model)         the class (kb_bonsai_predict); model.P, model.scores (array('i'))
 *                            and model.leaf get the projection, the scores and the leaf
 *     ABI                    KBN_ABI (kbn.h)
 *
 * The context points into model.buf, whose address it keeps: a call on a context that does
 * not belong to the model's current payload raises ValueError.
 */
#include "kbn_mp.h"

typedef struct {
    kb_bonsai_t m;
    const void *payload; /* model.buf's data and length at init */
    size_t len;
} ctx_t;

/* The model's context, checked against its payload. */
static ctx_t *ctx(mp_obj_t self)
{
    ctx_t *x = kbn_attr_buf(self, MP_QSTR__ctx, 0, sizeof(ctx_t), MP_BUFFER_RW, NULL);
    size_t len;
    const void *pl = kbn_attr_buf(self, MP_QSTR_buf, 0, -1, MP_BUFFER_READ, &len);
    if (((uintptr_t)x & (sizeof(void *) - 1)) != 0 || x->payload != pl || x->len != len)
        kbn_raise("kbit native: the model's context does not match its payload");
    return x;
}

static mp_obj_t size(void)
{
    return MP_OBJ_NEW_SMALL_INT(sizeof(ctx_t));
}
static MP_DEFINE_CONST_FUN_OBJ_0(size_obj, size);

static mp_obj_t init(mp_obj_t self)
{
    ctx_t *x = kbn_attr_buf(self, MP_QSTR__ctx, 0, sizeof(ctx_t), MP_BUFFER_RW, NULL);
    size_t len;
    const uint8_t *pl = kbn_attr_buf(self, MP_QSTR_buf, 0, -1, MP_BUFFER_READ, &len);
    int err;
    if (((uintptr_t)x & (sizeof(void *) - 1)) != 0)
        kbn_raise("kbit native: misaligned context");
    err = kbn_bonsai_init(&x->m, pl, (uint32_t)len);
    x->payload = err ? NULL : pl;
    x->len = len;
    return MP_OBJ_NEW_SMALL_INT(err);
}
static MP_DEFINE_CONST_FUN_OBJ_1(init_obj, init);

static mp_obj_t update(mp_obj_t self, mp_obj_t j_in, mp_obj_t c_in)
{
    ctx_t *x = ctx(self);
    const mp_int_t j = mp_obj_get_int(j_in), c = mp_obj_get_int(c_in);
    if (j < 0 || j > 0xFFFF || c < 0 || c > 255)
        return MP_OBJ_NEW_SMALL_INT(-1);
    return MP_OBJ_NEW_SMALL_INT(kbn_bonsai_update(&x->m, (uint16_t)j, (uint8_t)c));
}
static MP_DEFINE_CONST_FUN_OBJ_3(update_obj, update);

static mp_obj_t reset(mp_obj_t self)
{
    kbn_bonsai_reset(&ctx(self)->m);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(reset_obj, reset);

static mp_obj_t predict(mp_obj_t self)
{
    kb_bonsai_t *m = &ctx(self)->m;
    int32_t *P = kbn_attr_buf(self, MP_QSTR_P, 'i', 4 * (mp_int_t)m->proj.d, MP_BUFFER_RW, NULL);
    int32_t *S = kbn_attr_buf(self, MP_QSTR_scores, 'i', 4 * (mp_int_t)m->L, MP_BUFFER_RW, NULL);
    const uint8_t y = kbn_bonsai_predict(m);
    uint8_t i;
    for (i = 0; i < m->proj.d; i++)
        P[i] = m->P[i];
    for (i = 0; i < m->L; i++)
        S[i] = m->scores[i];
    kbn_set_int(self, MP_QSTR_leaf, m->leaf);
    return MP_OBJ_NEW_SMALL_INT(y);
}
static MP_DEFINE_CONST_FUN_OBJ_1(predict_obj, predict);

mp_obj_t mpy_init(mp_obj_fun_bc_t *self, size_t n_args, size_t n_kw, mp_obj_t *args)
{
    MP_DYNRUNTIME_INIT_ENTRY
    mp_store_global(MP_QSTR_ABI, MP_OBJ_NEW_SMALL_INT(KBN_ABI));
    mp_store_global(MP_QSTR_size, MP_OBJ_FROM_PTR(&size_obj));
    mp_store_global(MP_QSTR_init, MP_OBJ_FROM_PTR(&init_obj));
    mp_store_global(MP_QSTR_update, MP_OBJ_FROM_PTR(&update_obj));
    mp_store_global(MP_QSTR_reset, MP_OBJ_FROM_PTR(&reset_obj));
    mp_store_global(MP_QSTR_predict, MP_OBJ_FROM_PTR(&predict_obj));
    MP_DYNRUNTIME_INIT_EXIT
}
