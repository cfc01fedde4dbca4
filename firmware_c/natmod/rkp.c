/*
 * _kb_rkp: kbit.rkp's score and learning step as a native module (kb_rkp.h, issue 20).
 *
 *     run(model, u, y)   y = -1: the score of codes u; y = 0 or 1: one learning step
 *                        (kb_rkp_learn), which stores count, state and mistake back into the
 *                        model. Returns the score (before learning), or None when u is not a
 *                        buffer of bytes: kbit then runs its bytecode.
 *     ABI                KBN_ABI (kbn.h)
 *
 * `model` is a kbit.rkp.RKP: its kernel, bits, dims, budget, C, state and count attributes,
 * its power table `table` and its support-vector memory `memory` (a bytearray of exactly
 * ceil(T*(M*B+1)/8) bytes) are what kb_rkp_t points at for the call.
 */
#include "kbn_mp.h"

static mp_obj_t run(mp_obj_t self, mp_obj_t u_in, mp_obj_t y_in)
{
    const mp_int_t y = mp_obj_get_int(y_in);
    mp_buffer_info_t u;
    kb_rkp_t m;
    mp_int_t kernel, bits, dims, budget, C, state, count;
    size_t ntab;
    uint8_t miss = 0;
    int32_t s;

    if (!kbn_bytes(u_in, &u, 0))
        return mp_const_none;
    kernel = kbn_int(self, MP_QSTR_kernel);
    bits = kbn_int(self, MP_QSTR_bits);
    dims = kbn_int(self, MP_QSTR_dims);
    budget = kbn_int(self, MP_QSTR_budget);
    C = kbn_int(self, MP_QSTR_C);
    state = kbn_int(self, MP_QSTR_state);
    count = kbn_int(self, MP_QSTR_count);
    if (kernel < 0 || kernel > KB_KERNEL_RBF || bits < 1 || bits > 8 || dims < 1 ||
        dims > 0xFFFF || budget < 1 || budget > 0xFFFF || C < 1 || C > 255 || state < 1 ||
        state > 0xFFFF || count < 0 || count > budget || (mp_int_t)u.len != dims || y < -1 ||
        y > 1)
        kbn_bad_state();
    m.kernel = (uint8_t)kernel;
    m.bits = (uint8_t)bits;
    m.dims = (uint16_t)dims;
    m.budget = (uint16_t)budget;
    m.width = 0; /* the host's; the kernel never reads it */
    m.C = (uint8_t)C;
    m.table = kbn_attr_buf(self, MP_QSTR_table, 0, -1, MP_BUFFER_READ, &ntab);
    if (ntab > KB_TABLE_MAX)
        kbn_bad_state();
    m.ntab = (uint8_t)ntab;
    m.mem = kbn_attr_buf(self, MP_QSTR_memory, 0,
                         (mp_int_t)kb_rkp_mem_bytes(m.budget, m.dims, m.bits), MP_BUFFER_RW, NULL);
    m.rng = (kb_rng_t)state;
    m.count = (kb_count_t)count;
    s = kbn_rkp_step(&m, u.buf, (int)y, &miss);
    if (y >= 0) {
        kbn_set_int(self, MP_QSTR_count, m.count);
        kbn_set_int(self, MP_QSTR_state, m.rng);
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
