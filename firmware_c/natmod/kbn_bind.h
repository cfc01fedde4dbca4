/*
 * kbn_bind.h - binding a context to its model (kbn_mp.h), and what only the slow paths call.
 * Each glue file includes it after mpy_init (kbn.h: mpy_init first in the text).
 */
#ifndef KBN_BIND_H
#define KBN_BIND_H

#include "kbn_mp.h"

static KBN_TEXT KBN_MAYBE_UNUSED NORETURN void kbn_raise(const char *msg)
{
    mp_raise_ValueError(msg);
    for (;;) {
    }
}

static KBN_TEXT KBN_MAYBE_UNUSED NORETURN void kbn_bad_state(void)
{
    kbn_raise("kbit native: model state outside the contract");
}

/* The slot of `key` in a map, or NULL (a linear search: key objects compare by identity, qstrs
 * are interned). */
static KBN_TEXT KBN_MAYBE_UNUSED mp_map_elem_t *kbn_elem(mp_map_t *map, mp_obj_t key)
{
    mp_map_elem_t *e = map->table, *end = e + map->alloc;
    for (; e < end; e++)
        if (e->key == key)
            return e;
    return NULL;
}

/* The Python fallback: the function this module's global `name` holds (kbit sets them at import:
 * its bytecode methods), called with the same arguments. */
static KBN_TEXT KBN_MAYBE_UNUSED mp_obj_t kbn_py(mp_obj_t fun, qstr name, size_t n_args,
                                                 size_t n_kw, const mp_obj_t *args)
{
    const mp_obj_fun_bc_t *f = MP_OBJ_TO_PTR(fun);
    const mp_obj_t py = mp_load_attr(MP_OBJ_FROM_PTR(&f->context->module), name);
    return mp_call_function_n_kw(py, n_args, n_kw, args);
}

/* Method lookups on a model (m.learn, ...) first miss in the instance's attribute map, and a
 * miss probes until an empty slot, with a division per probe (MicroPython's map.c): in a map
 * that is three quarters full, as MicroPython leaves them (it grows a map only when it is
 * full), that is hundreds of cycles per call on a Cortex-M0+. The model's map is therefore
 * rebuilt once, at most half full: the same entries where MicroPython's lookup looks for
 * them (hash % alloc, then the next slots), with one of MicroPython's own table sizes. */
static KBN_TEXT KBN_MAYBE_UNUSED void kbn_spread(mp_map_t *map)
{
    static const uint16_t sizes[] = {17, 23, 29, 37, 47, 59, 73, 97, 127, 167, 223, 293, 389};
    mp_map_elem_t *t, *old = map->table;
    size_t i, n = 0, alloc = 0;
    if (map->is_fixed || map->is_ordered || !map->all_keys_are_qstrs)
        return;
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && !alloc; i++)
        if (sizes[i] >= 2 * map->used)
            alloc = sizes[i];
    if (alloc == 0 || alloc <= map->alloc)
        return;
    t = m_malloc(alloc * sizeof(mp_map_elem_t));
    for (i = 0; i < alloc; i++)
        t[i].key = t[i].value = MP_OBJ_NULL;
    for (i = 0; i < map->alloc; i++) {
        const mp_obj_t k = old[i].key;
        size_t pos;
        if (k == MP_OBJ_NULL || k == MP_OBJ_SENTINEL)
            continue;
        pos = (size_t)MP_OBJ_SMALL_INT_VALUE(mp_unary_op(MP_UNARY_OP_HASH, k)) % alloc;
        while (t[pos].key != MP_OBJ_NULL)
            pos = pos + 1 == alloc ? 0 : pos + 1;
        t[pos] = old[i];
        n++;
    }
    map->table = t;
    map->alloc = alloc;
    map->used = n;
}

/* A new context of `size` bytes (a struct that starts with a kbn_head_t and its n slots) for
 * model self, stored as self._ctx before anything is bound (storing may reallocate the map). */
static KBN_TEXT KBN_MAYBE_UNUSED kbn_head_t *kbn_new(mp_obj_t self, size_t size, size_t n)
{
    kbn_head_t *h;
    size_t i;
    if (kbn_members(self) == NULL)
        kbn_raise("kbit native: not a model");
    h = m_malloc(size);
    for (i = 0; i < size / sizeof(mp_uint_t); i++)
        ((mp_uint_t *)h)[i] = 0;
    h->base.type = KBN_CTX_TYPE;
    h->self = self;
    h->n = n;
    h->slot = (kbn_slot_t *)(h + 1);
    mp_store_attr(self, MP_QSTR__ctx, MP_OBJ_FROM_PTR(h));
    kbn_spread(kbn_members(self));
    return h;
}

/* The context already stored on model self, or a new one (kbn_new): what a learner's bind
 * then binds again, so that binding twice never stores a second context. */
KBN_INLINE kbn_head_t *kbn_find_or_new(mp_obj_t self, size_t size, size_t n)
{
    kbn_head_t *h = kbn_find(self);
    return h != NULL ? h : kbn_new(self, size, n);
}

/* Start binding h: forget the old binding (until kbn_bound), take the map as it is now. */
static KBN_TEXT KBN_MAYBE_UNUSED mp_map_t *kbn_rebind(kbn_head_t *h)
{
    mp_map_t *map = &((mp_obj_instance_t *)MP_OBJ_TO_PTR(h->self))->members;
    h->table = NULL;
    return map;
}

/* Bind slot i to the model's attribute q: its value (AttributeError when it has none;
 * ValueError when it is not the instance's own). */
static KBN_TEXT KBN_MAYBE_UNUSED mp_obj_t kbn_slot(kbn_head_t *h, mp_map_t *map, size_t i,
                                                   qstr q)
{
    kbn_slot_t *s = &h->slot[i];
    s->key = MP_OBJ_NEW_QSTR(q);
    s->e = kbn_elem(map, s->key);
    if (s->e == NULL) {
        mp_load_attr(h->self, q); /* raises AttributeError when missing */
        kbn_raise("kbit native: a model attribute is not the model's own");
    }
    s->v = s->e->value;
    s->items = NULL;
    s->len = 0;
    return s->v;
}

/* Slot i as an int in lo..hi, else ValueError. */
static KBN_TEXT KBN_MAYBE_UNUSED mp_int_t kbn_slot_int(kbn_head_t *h, mp_map_t *map, size_t i,
                                                      qstr q, mp_int_t lo, mp_int_t hi)
{
    const mp_obj_t v = kbn_slot(h, map, i, q);
    mp_int_t x;
    if (!mp_obj_is_small_int(v))
        kbn_bad_state();
    x = MP_OBJ_SMALL_INT_VALUE(v);
    if (x < lo || x > hi)
        kbn_bad_state();
    return x;
}

/* Slot i as a buffer of items with typecode `tc` (0: bytes, from bytes, bytearray or
 * array('B')) and exactly `len` bytes (any length when len < 0; the length goes to *got), of
 * the kind `mode` says: KBN_RO a bytes, bytearray or array (read), KBN_RW a bytearray or array
 * (read and written), KBN_FIXED a bytes (what the kernel reads is checked once: its contents
 * cannot change). ValueError otherwise, and for any other object (a memoryview, say: what it
 * views could be resized behind it). */
#define KBN_RO 0
#define KBN_RW 1
#define KBN_FIXED 2
static KBN_TEXT KBN_MAYBE_UNUSED void *kbn_slot_buf(kbn_head_t *h, mp_map_t *map, size_t i,
                                                    qstr q, int tc, mp_int_t len, int mode,
                                                    size_t *got)
{
    const mp_obj_t v = kbn_slot(h, map, i, q);
    const mp_obj_type_t *t;
    mp_buffer_info_t b;
    int kind_ok;
    if (!mp_obj_is_obj(v))
        kbn_raise("kbit native: a model buffer has the wrong item type");
    t = ((mp_obj_base_t *)MP_OBJ_TO_PTR(v))->type;
    if (t == kbn_g.bytes)
        kind_ok = mode != KBN_RW;
    else
        kind_ok = (t == kbn_g.bytearray || t == kbn_g.array) && mode != KBN_FIXED;
    if (!kind_ok || !mp_get_buffer(v, &b, mode == KBN_RW ? MP_BUFFER_RW : MP_BUFFER_READ) ||
        (tc ? (int)b.typecode != tc : (b.typecode != 'B' && b.typecode != KBN_TC_BYTEARRAY)))
        kbn_raise("kbit native: a model buffer has the wrong item type");
    if (len >= 0 && (mp_int_t)b.len != len)
        kbn_raise("kbit native: a model buffer has the wrong length");
    if (t != kbn_g.bytes) {
        const mp_obj_array_t *a = MP_OBJ_TO_PTR(v);
        h->slot[i].items = a->items;
        h->slot[i].len = a->len;
    }
    if (got)
        *got = b.len;
    return b.buf;
}

/* Binding done: the map as it is now. */
static KBN_TEXT KBN_MAYBE_UNUSED void kbn_bound(kbn_head_t *h, mp_map_t *map)
{
    h->table = map->table;
    h->alloc = map->alloc;
}

#endif /* KBN_BIND_H */
