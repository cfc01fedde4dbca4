/*
 * _kb_assoc: kbit.assoc's prediction and learning step as a native module (kb_assoc.h,
 * issue 20).
 *
 *     run(model, u, y)   y = -1: the prediction for values u (kb_assoc_predict); y = 0..255:
 *                        one learning step (kb_assoc_learn). Stores count (and, learning, nc
 *                        and state) back into the model; returns the (predicted) label, or
 *                        None when u is not an array('b') (kbit then runs its bytecode).
 *     ABI                KBN_ABI (kbn.h)
 *
 * `model` is a kbit.assoc.Assoc: its approach, bits, P, d, cap, kt, R, nc and state attributes
 * and its buffers labels, nf (bytearray(cap) each), anchors (array('b'), cap*kt*P*d), conn (the
 * connection bits), _k (array('H'), P) and _dist (array('i'), P), kb_assoc_t's near and dist.
 */
#include "kbn_mp.h"

static mp_obj_t run(mp_obj_t self, mp_obj_t u_in, mp_obj_t y_in)
{
    const mp_int_t y = mp_obj_get_int(y_in);
    mp_buffer_info_t u;
    kb_assoc_t m;
    mp_int_t approach, bits, P, d, cap, kt, R, nc, state;
    size_t n;
    int16_t pred;
    uint8_t c;

    if (!kbn_bytes(u_in, &u, 1))
        return mp_const_none;
    approach = kbn_int(self, MP_QSTR_approach);
    bits = kbn_int(self, MP_QSTR_bits);
    P = kbn_int(self, MP_QSTR_P);
    d = kbn_int(self, MP_QSTR_d);
    cap = kbn_int(self, MP_QSTR_cap);
    kt = kbn_int(self, MP_QSTR_kt);
    R = kbn_int(self, MP_QSTR_R);
    nc = kbn_int(self, MP_QSTR_nc);
    state = kbn_int(self, MP_QSTR_state);
    if (approach < 0 || approach > 255 || bits < 0 || bits > 255 || P < 1 || P > 255 || d < 1 ||
        d > 255 || cap < 1 || cap > 255 || kt < 1 || kt > 255 || R < 1 || R > 255 || nc < 0 ||
        nc > cap || state < 1 || state > 0xFFFF || y < -1 || y > 255 ||
        (mp_int_t)u.len != P * d ||
        !kb_assoc_check_params((uint8_t)approach, (uint8_t)bits, (uint8_t)P, (uint8_t)d,
                               (uint8_t)cap, (uint8_t)kt, (uint8_t)R, (uint8_t)nc,
                               (uint16_t)state))
        kbn_bad_state();
    m.approach = (uint8_t)approach;
    m.bits = (uint8_t)bits;
    m.P = (uint8_t)P;
    m.d = (uint8_t)d;
    m.cap = (uint8_t)cap;
    m.kt = (uint8_t)kt;
    m.R = (uint8_t)R;
    m.nc = (uint8_t)nc;
    m.rng = (kb_rng_t)state;
    m.labels = kbn_attr_buf(self, MP_QSTR_labels, 0, cap, MP_BUFFER_RW, NULL);
    m.nf = kbn_attr_buf(self, MP_QSTR_nf, 0, cap, MP_BUFFER_RW, NULL);
    m.anchors = kbn_attr_buf(self, MP_QSTR_anchors, 'b', cap * kt * P * d, MP_BUFFER_RW, NULL);
    m.conn = kbn_attr_buf(self, MP_QSTR_conn, 0,
                          (mp_int_t)kb_assoc_conn_bytes(m.P, m.cap, m.kt, m.R), MP_BUFFER_RW,
                          NULL);
    m.near = kbn_attr_buf(self, MP_QSTR__k, 'H', -1, MP_BUFFER_RW, &n);
    if (n < 2u * (size_t)P)
        kbn_bad_state();
    m.dist = kbn_attr_buf(self, MP_QSTR__dist, 'i', -1, MP_BUFFER_RW, &n);
    if (n < 4u * (size_t)P)
        kbn_bad_state();
    /* the fill counters decide which anchor rows are read: none past a class's k~ rows */
    for (c = 0; c < m.cap; c++)
        if (m.nf[c] > 1u + (uint32_t)(m.kt - 1u) * m.P)
            kbn_bad_state();
    m.count = 0;
    m.changed = 0;
    pred = kbn_assoc_step(&m, u.buf, (int)y);
    if (pred == -2)
        kbn_raise("kbit native: class capacity full");
    kbn_set_int(self, MP_QSTR_count, m.count);
    if (y >= 0) {
        kbn_set_int(self, MP_QSTR_nc, m.nc);
        kbn_set_int(self, MP_QSTR_state, m.rng);
    }
    return mp_obj_new_int(pred);
}
static MP_DEFINE_CONST_FUN_OBJ_3(run_obj, run);

mp_obj_t mpy_init(mp_obj_fun_bc_t *self, size_t n_args, size_t n_kw, mp_obj_t *args)
{
    MP_DYNRUNTIME_INIT_ENTRY
    mp_store_global(MP_QSTR_ABI, MP_OBJ_NEW_SMALL_INT(KBN_ABI));
    mp_store_global(MP_QSTR_run, MP_OBJ_FROM_PTR(&run_obj));
    MP_DYNRUNTIME_INIT_EXIT
}
