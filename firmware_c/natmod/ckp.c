/*
 * _kb_ckp: kbit.ckp's score and learning step as a native module (kb_ckp.h, issue 20).
 *
 *     run(model, u, y)   y = -1: the score of codes u; y = 0 or 1: one learning step
 *                        (kb_ckp_learn), which stores count, state, norm, _b, _n1 and mistake
 *                        back into the model. Returns the score (before learning), or None
 *                        when u is not a buffer of bytes: kbit then runs its bytecode.
 *     ABI                KBN_ABI (kbn.h)
 *
 * `model` is a kbit.ckp.CKP: its bits, dims, L, C, qstart, qshift, state, norm and count
 * attributes, its power table `table`, loss table `q`, memory `memory` (ceil(L/8) bytes) and
 * `_c`, an array('H') of at least 2*dims entries: kb_ckp_t's scratch (the centres of the point
 * and of a replaced support vector). The schedule (b, n1) is recomputed from count.
 */
#include "kbn_mp.h"

static mp_obj_t run(mp_obj_t self, mp_obj_t u_in, mp_obj_t y_in)
{
    const mp_int_t y = mp_obj_get_int(y_in);
    mp_buffer_info_t u;
    kb_ckp_t m;
    mp_int_t bits, dims, L, C, qstart, qshift, state, norm, count, top;
    size_t n, nq;
    uint8_t miss = 0;
    int32_t s;

    if (!kbn_bytes(u_in, &u, 0))
        return mp_const_none;
    bits = kbn_int(self, MP_QSTR_bits);
    dims = kbn_int(self, MP_QSTR_dims);
    L = kbn_int(self, MP_QSTR_L);
    C = kbn_int(self, MP_QSTR_C);
    qstart = kbn_int(self, MP_QSTR_qstart);
    qshift = kbn_int(self, MP_QSTR_qshift);
    state = kbn_int(self, MP_QSTR_state);
    norm = kbn_int(self, MP_QSTR_norm);
    count = kbn_int(self, MP_QSTR_count);
    if (bits < 1 || bits > 8 || dims < 1 || L < dims + 1 || L > 0xFFFF || C < 1 || C > 255 ||
        qstart < 1 || qstart > 0xFFFF || qshift < 0 || qshift > 22 || state < 1 ||
        state > 0xFFFF || norm < KB_CKP_NORM_MIN || norm > KB_CKP_NORM_MAX || count < 0 ||
        count > L / (dims + 1) || (mp_int_t)u.len != dims || y < -1 || y > 1)
        kbn_bad_state();
    top = (2 << bits) - 1; /* the largest centre: distances stay below 2^30 */
    if (dims > (mp_int_t)(KB_CKP_DIST_MAX / (mp_uint_t)(top * top)))
        kbn_bad_state();
    m.bits = (uint8_t)bits;
    m.dims = (uint16_t)dims;
    m.L = (uint16_t)L;
    m.width = 0; /* the host's; the kernel never reads it */
    m.C = (uint8_t)C;
    m.table = kbn_attr_buf(self, MP_QSTR_table, 0, -1, MP_BUFFER_READ, &n);
    m.q = kbn_attr_buf(self, MP_QSTR_q, 0, -1, MP_BUFFER_READ, &nq);
    if (n > KB_TABLE_MAX || nq > 0xFFFF)
        kbn_bad_state();
    m.ntab = (uint8_t)n;
    m.qstart = (uint16_t)qstart;
    m.nq = (uint16_t)nq;
    m.qshift = (uint8_t)qshift;
    m.mem = kbn_attr_buf(self, MP_QSTR_memory, 0, (L + 7) / 8, MP_BUFFER_RW, NULL);
    m.scratch = kbn_attr_buf(self, MP_QSTR__c, 'H', -1, MP_BUFFER_RW, &n);
    if (n < 4u * (size_t)dims)
        kbn_bad_state();
    m.rng = (kb_rng_t)state;
    m.count = (kb_ckp_count_t)count;
    m.norm = (int32_t)norm;
    s = kbn_ckp_step(&m, u.buf, (int)y, &miss);
    if (y >= 0) {
        kbn_set_int(self, MP_QSTR_count, m.count);
        kbn_set_int(self, MP_QSTR_state, m.rng);
        kbn_set_int(self, MP_QSTR_norm, m.norm);
        kbn_set_int(self, MP_QSTR__b, m.b);
        kbn_set_int(self, MP_QSTR__n1, m.n1);
        mp_store_attr(self, MP_QSTR_mistake, mp_obj_new_bool(miss));
    }
    return mp_obj_new_int(s);
}
static MP_DEFINE_CONST_FUN_OBJ_3(run_obj, run);

mp_obj_t mpy_init(mp_obj_fun_bc_t *self, size_t n_args, size_t n_kw, mp_obj_t *args)
{
    MP_DYNRUNTIME_INIT_ENTRY
    mp_store_global(MP_QSTR_ABI, MP_OBJ_NEW_SMALL_INT(KBN_ABI));
    mp_store_global(MP_QSTR_run, MP_OBJ_FROM_PTR(&run_obj));
    MP_DYNRUNTIME_INIT_EXIT
}
