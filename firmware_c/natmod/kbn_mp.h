/*
 * kbn_mp.h - the MicroPython side shared by the glue files (<model>.c) of firmware_c/natmod.
 *
 * The model's state stays in the kbit object: its parameters are int attributes and its tables
 * and memory bytearrays/arrays, read at every call (a few map lookups, nothing allocated) and
 * checked against what the C code will index, so a model changed by hand cannot make the
 * kernel read or write outside its buffers. Only int attributes that already exist are stored
 * back (count, state, ...): replacing a value in an instance's map allocates nothing.
 */
#ifndef KBN_MP_H
#define KBN_MP_H

#include "py/dynruntime.h"

#include "kbn.h"

/* bytearray's buffer typecode (py/objarray.h's BYTEARRAY_TYPECODE) */
#define KBN_TC_BYTEARRAY 1

static inline NORETURN void kbn_raise(const char *msg)
{
    mp_raise_ValueError(msg);
    for (;;) {
    }
}

/* A model attribute as a C integer. */
static inline mp_int_t kbn_int(mp_obj_t self, qstr attr)
{
    return mp_obj_get_int(mp_load_attr(self, attr));
}

static inline void kbn_set_int(mp_obj_t self, qstr attr, mp_int_t v)
{
    mp_store_attr(self, attr, mp_obj_new_int(v));
}

/* 1 when o is a buffer of bytes (bytes, bytearray, array('B') or, with sign, array('b')). */
static inline int kbn_bytes(mp_obj_t o, mp_buffer_info_t *b, int sign)
{
    if (!mp_get_buffer(o, b, MP_BUFFER_READ))
        return 0;
    if (sign)
        return b->typecode == 'b';
    return b->typecode == 'B' || b->typecode == KBN_TC_BYTEARRAY;
}

/* The buffer of attribute `attr`: exactly `len` bytes (any length when len < 0) of items with
 * typecode `tc` (0: bytes, from bytes, bytearray or array('B')); ValueError otherwise. Its
 * length in bytes goes to *got when got is not NULL. */
static inline void *kbn_attr_buf(mp_obj_t self, qstr attr, int tc, mp_int_t len,
                                 mp_uint_t flags, size_t *got)
{
    mp_buffer_info_t b;
    mp_get_buffer_raise(mp_load_attr(self, attr), &b, flags);
    if (tc ? b.typecode != tc : (b.typecode != 'B' && b.typecode != KBN_TC_BYTEARRAY))
        kbn_raise("kbit native: a model buffer has the wrong item type");
    if (len >= 0 && (mp_int_t)b.len != len)
        kbn_raise("kbit native: a model buffer has the wrong length");
    if (got)
        *got = b.len;
    return b.buf;
}

static inline NORETURN void kbn_bad_state(void)
{
    kbn_raise("kbit native: model state outside the contract");
}

#endif /* KBN_MP_H */
