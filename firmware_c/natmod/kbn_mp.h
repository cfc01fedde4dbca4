/*
 * kbn_mp.h - the MicroPython side shared by the glue files (<model>.c) of firmware_c/natmod;
 * kbn_bind.h holds what only binding and the slow paths need.
 *
 * Bound once. bind(model), at the model's construction, checks the model's parameters and
 * buffers against what the C code will index (what the old glue checked at every call),
 * fills the kernel's struct (kb_rkp_t, ...) with them and keeps it in a context object,
 * model._ctx, that Python can neither read nor write (a type of this module's own, without
 * attributes, buffer or constructor). For every model attribute the context was made from (a
 * "slot"), it remembers where the value sits in the instance's attribute map, the value, and
 * for a bytearray or array where its items were and how many.
 *
 * Called directly. kbit makes these modules' functions the model class's methods (score,
 * learn, ...): MP_DYNRUNTIME_MAKE_FUNCTION makes a viper function, which binds self like a
 * Python method (a builtin function in a class does not), so `m.learn(u, y)` enters the C code
 * with no Python frame between. The function finds the context in the model's map without a
 * name lookup (kbn_find), and before the kernel runs it checks, word for word, that nothing the
 * context was made from has changed (kbn_fresh): the map (not reallocated), each slot (same
 * key, same value object), each resizable buffer (same items, same length). Anything else --
 * an int set by hand, a buffer replaced or resized, an attribute deleted -- binds again from
 * the attributes, with every check and nothing allocated, before the kernel runs: Python's
 * view of the model stays the truth, and the kernel never sees a value that was not checked.
 * The ints the kernel changes (count, state, mistake, ...) go straight into their slots of the
 * map: Python reads them as plain attributes, and nothing is allocated.
 *
 * What this relies on from MicroPython (1.23 on the Pico, 1.29 on the unix port, alike): an
 * instance of a Python class is an mp_obj_instance_t (its attributes in `members`, a map with
 * open addressing), a bytearray/array an mp_obj_array_t, bytes are immutable. An object that
 * is not an instance of a Python class, or a model without its context, takes the Python
 * fallback (kbit's bytecode method), which the module finds by name in its own globals
 * (kbn_py), as it does for arguments the kernel does not take.
 */
#ifndef KBN_MP_H
#define KBN_MP_H

#include "py/dynruntime.h"
#include "py/objarray.h"
#include "py/objtype.h"
#include "py/smallint.h"

#include "kbn.h"

/* bytearray's buffer typecode (py/objarray.h's BYTEARRAY_TYPECODE) */
#define KBN_TC_BYTEARRAY 1

/* What the module learns of the running MicroPython at import. One object in bss, its type
 * first: the module's globals hold a pointer to it (bss start), which keeps the bss block alive
 * for the GC (MicroPython marks a block by a pointer to its first bytes only). bss, not static:
 * mpy_ld.py refuses static bss. */
typedef struct {
    mp_obj_full_type_t ctx_type; /* the contexts' type */
    const void *instance_make_new; /* the make_new of every Python class */
    const mp_obj_type_t *bytearray, *array, *bytes;
    mp_obj_t key_ctx; /* qstr _ctx */
    size_t hint;      /* where _ctx was in the last model's map */
    size_t hint_q;    /* where quantizer was in the last model's map (_kb_quant) */
    int quant_py;     /* _kb_quant: every m.quantize runs its bytecode (kbit.quant.use_native) */
} kbn_globals_t;

kbn_globals_t kbn_g;

#define KBN_CTX_TYPE ((const mp_obj_type_t *)&kbn_g.ctx_type)

/* mpy_init must come first in the text (kbn.h: 1.23's 11-bit entry jump), and GCC orders a
 * file's functions as it likes: every other function of the glue goes into the section
 * .text.kbn (KBN_TEXT), which follows .text. Hot helpers are inlined. */
#define KBN_TEXT __attribute__((section(".text.kbn")))
#define KBN_INLINE static inline __attribute__((always_inline))
#define KBN_MAYBE_UNUSED __attribute__((unused)) /* kbn_bind.h: not every glue needs all */

static KBN_TEXT NORETURN void kbn_raise(const char *msg);
static KBN_TEXT NORETURN void kbn_bad_state(void);
static KBN_TEXT mp_map_elem_t *kbn_elem(mp_map_t *map, mp_obj_t key);
static KBN_TEXT mp_obj_t kbn_py(mp_obj_t fun, qstr name, size_t n_args, size_t n_kw,
                                const mp_obj_t *args);

/* ---- import: learn the types, make the contexts' type ---- */

KBN_INLINE void kbn_init(void)
{
    mp_obj_t a[3];
    mp_obj_t cls;
    kbn_g.ctx_type.base.type = (void *)&mp_type_type;
    kbn_g.ctx_type.flags = 0;
    kbn_g.ctx_type.name = MP_QSTR_context;
    /* a Python class of our own, type("kbn", (), {}): its make_new is every Python class's */
    a[0] = MP_OBJ_NEW_QSTR(MP_QSTR_kbn);
    a[1] = mp_obj_new_tuple(0, NULL);
    a[2] = mp_obj_new_dict(0);
    cls = mp_call_function_n_kw(MP_OBJ_FROM_PTR(&mp_type_type), 3, 0, a);
    kbn_g.instance_make_new =
        (const void *)MP_OBJ_TYPE_GET_SLOT_OR_NULL((mp_obj_type_t *)MP_OBJ_TO_PTR(cls), make_new);
    kbn_g.bytearray = mp_obj_get_type(mp_obj_new_bytearray_by_ref(0, NULL));
    kbn_g.bytes = mp_obj_get_type(mp_obj_new_bytes(NULL, 0));
    a[0] = mp_import_name(MP_QSTR_array, mp_const_none, MP_OBJ_NEW_SMALL_INT(0));
    kbn_g.array = MP_OBJ_TO_PTR(mp_load_attr(a[0], MP_QSTR_array));
    kbn_g.key_ctx = MP_OBJ_NEW_QSTR(MP_QSTR__ctx);
    kbn_g.hint = 0;
    kbn_g.hint_q = 0;
    kbn_g.quant_py = 0;
    mp_store_global(MP_QSTR_context, MP_OBJ_FROM_PTR(&kbn_g));
    mp_store_global(MP_QSTR_ABI, MP_OBJ_NEW_SMALL_INT(KBN_ABI));
}

/* ---- the context ---- */

/* A model attribute the context was made from. */
typedef struct {
    mp_map_elem_t *e;  /* its place in the model's attribute map */
    mp_obj_t key;      /* its name (a qstr object) */
    mp_obj_t v;        /* its value when bound, or as the kernel left it */
    const void *items; /* a bytearray's/array's items when bound; NULL: no buffer, or bytes */
    size_t len;        /* and its length in items */
} kbn_slot_t;

/* The head of every context. */
typedef struct {
    mp_obj_base_t base;
    mp_obj_t self;         /* the model */
    mp_map_elem_t *table;  /* its attribute map when bound (NULL: not bound) */
    size_t alloc;
    size_t n;              /* slots */
    kbn_slot_t *slot;      /* n slots, inside the context */
} kbn_head_t;

/* The map of attributes of x when x is an instance of a Python class, else NULL. */
KBN_INLINE mp_map_t *kbn_members(mp_obj_t x)
{
    const mp_obj_type_t *t;
    if (!mp_obj_is_obj(x))
        return NULL;
    t = ((mp_obj_base_t *)MP_OBJ_TO_PTR(x))->type;
    if (!t->slot_index_make_new || t->slots[t->slot_index_make_new - 1] != kbn_g.instance_make_new)
        return NULL;
    return &((mp_obj_instance_t *)MP_OBJ_TO_PTR(x))->members;
}

/* The context of model `self`, or NULL when it has none of this module's (or one copied from
 * another model). Not checked against the model: see kbn_fresh. */
KBN_INLINE kbn_head_t *kbn_find(mp_obj_t self)
{
    mp_map_t *map = kbn_members(self);
    mp_map_elem_t *e;
    mp_obj_t c;
    kbn_head_t *h;
    if (map == NULL)
        return NULL;
    e = map->table + kbn_g.hint;
    if (kbn_g.hint >= map->alloc || e->key != kbn_g.key_ctx) {
        e = kbn_elem(map, kbn_g.key_ctx);
        if (e == NULL)
            return NULL;
        kbn_g.hint = (size_t)(e - map->table);
    }
    c = e->value;
    if (!mp_obj_is_obj(c) || ((mp_obj_base_t *)MP_OBJ_TO_PTR(c))->type != KBN_CTX_TYPE)
        return NULL;
    h = MP_OBJ_TO_PTR(c);
    return h->self == self ? h : NULL;
}

/* 1 when nothing the context was bound from has changed since (see the top of this file). */
KBN_INLINE int kbn_fresh(const kbn_head_t *h)
{
    const mp_map_t *map = &((const mp_obj_instance_t *)MP_OBJ_TO_PTR(h->self))->members;
    const kbn_slot_t *s = h->slot, *end = s + h->n;
    if (map->table != h->table || map->alloc != h->alloc)
        return 0;
    for (; s < end; s++) {
        if (s->e->key != s->key || s->e->value != s->v)
            return 0;
        if (s->items) {
            const mp_obj_array_t *a = MP_OBJ_TO_PTR(s->v);
            if (a->items != s->items || a->len != s->len)
                return 0;
        }
    }
    return 1;
}

/* A context type: its head, then its slots, then the kernel's struct. */
#define KBN_CTX(nslots, kernel_t) \
    typedef struct {              \
        kbn_head_t h;             \
        kbn_slot_t s[nslots];     \
        kernel_t k;               \
    } ctx_t

/* Slot i gets value v (an int or bool the kernel changed): the model's attribute and the
 * context's copy, nothing allocated. */
KBN_INLINE void kbn_put(kbn_head_t *h, size_t i, mp_obj_t v)
{
    h->slot[i].e->value = v;
    h->slot[i].v = v;
}

KBN_INLINE mp_obj_t kbn_small(mp_int_t v)
{
    return MP_OBJ_NEW_SMALL_INT(v);
}

/* Any int (a score): small, else a long int. */
KBN_INLINE mp_obj_t kbn_int(mp_int_t v)
{
    return MP_SMALL_INT_FITS(v) ? MP_OBJ_NEW_SMALL_INT(v) : mp_obj_new_int(v);
}

/* ---- arguments ---- */

/* Codes: a bytearray or array('B') (read in place), else any buffer of bytes (bytes, ...;
 * with sign: array('b')). NULL when o is none of them (a list, a str: the bytecode runs it). */
KBN_INLINE const void *kbn_codes(mp_obj_t o, size_t *len, int sign)
{
    mp_buffer_info_t b;
    if (mp_obj_is_obj(o)) {
        const mp_obj_array_t *a = MP_OBJ_TO_PTR(o);
        if ((a->base.type == kbn_g.bytearray && !sign) ||
            (a->base.type == kbn_g.array && a->typecode == (sign ? 'b' : 'B'))) {
            *len = a->len;
            return a->items;
        }
    }
    /* a str lends its UTF-8 bytes as a buffer of 'B' too, but kbit's bytecode refuses text
     * (TypeError): NULL sends it there, so both paths raise the same error */
    if (mp_obj_is_qstr(o) || (mp_obj_is_obj(o) && mp_obj_get_type(o) == &mp_type_str))
        return NULL;
    if (!mp_get_buffer(o, &b, MP_BUFFER_READ))
        return NULL;
    if (sign ? b.typecode != 'b' : (b.typecode != 'B' && b.typecode != KBN_TC_BYTEARRAY))
        return NULL;
    *len = b.len;
    return b.buf;
}

/* 1 when every code u[0..n-1] is in 0..top, top = 2^B - 1 (so their OR is compared once): what
 * kbit's score, learn and predict refuse otherwise (their bytecode raises the error). */
KBN_INLINE int kbn_codes_fit(const uint8_t *u, size_t n, unsigned top)
{
    const uint8_t *const end = u + n;
    unsigned any = 0;
    while (u < end)
        any |= *u++;
    return any <= top;
}

/* 1 when every value u[0..n-1] is a B-bit int8 value, -2^(B-1) .. 2^(B-1)-1 (assoc's inputs):
 * each shifted by 2^(B-1) into 0 .. 2^B-1, a value below the range wrapping far above it. */
KBN_INLINE int kbn_values_fit(const int8_t *u, size_t n, unsigned bits)
{
    const int8_t *const end = u + n;
    const int half = 1 << (bits - 1);
    unsigned any = 0;
    if (bits >= 8)
        return 1; /* every int8 value */
    while (u < end)
        any |= (unsigned)(*u++ + half);
    return any < 2u * (unsigned)half;
}

/* A small int in lo..hi (True/False as 1/0), else -1 - lo (lo >= 0). */
KBN_INLINE mp_int_t kbn_arg(mp_obj_t o, mp_int_t lo, mp_int_t hi)
{
    mp_int_t v;
    if (mp_obj_is_small_int(o))
        v = MP_OBJ_SMALL_INT_VALUE(o);
    else if (o == mp_const_false)
        v = 0;
    else if (o == mp_const_true)
        v = 1;
    else
        return -1 - lo;
    return v < lo || v > hi ? -1 - lo : v;
}

/* The signature of a function MP_DYNRUNTIME_MAKE_FUNCTION makes: it binds self (args[0]). */
#define KBN_FUN(name) \
    static KBN_TEXT mp_obj_t name(mp_obj_t fun, size_t n_args, size_t n_kw, mp_obj_t *args)

/* The module's entry, written once for every glue: its functions (KBN_FUN) and bind (kbn_bind.h
 * or kbn_predictor.h) declared, then mpy_init, which stores them as the module's globals. A glue
 * lists its functions as an X-macro, X(MP_QSTR_name, function) each, the qstrs spelt out in the
 * glue itself (mpy_ld.py finds a module's qstrs in its sources' text), and writes
 * KBN_MODULE(list) where mpy_init must be: first in the text (kbn.h). */
#define KBN_DECLARE_(q, fn) KBN_FUN(fn);
#define KBN_STORE_(q, fn) mp_store_global(q, MP_DYNRUNTIME_MAKE_FUNCTION(fn));
#define KBN_MODULE(funs)                                                                      \
    static KBN_TEXT mp_obj_t bind(mp_obj_t self);                                             \
    funs(KBN_DECLARE_)                                                                        \
    static MP_DEFINE_CONST_FUN_OBJ_1(bind_obj, bind);                                         \
    mp_obj_t mpy_init(mp_obj_fun_bc_t *self, size_t n_args, size_t n_kw, mp_obj_t *args)      \
    {                                                                                         \
        MP_DYNRUNTIME_INIT_ENTRY                                                              \
        kbn_init();                                                                           \
        rc.children = (void *)&kbn_g; /* each function keeps the bss (kbn_g) alive */         \
        mp_store_global(MP_QSTR_bind, MP_OBJ_FROM_PTR(&bind_obj));                            \
        funs(KBN_STORE_)                                                                      \
        MP_DYNRUNTIME_INIT_EXIT                                                               \
    }

#endif /* KBN_MP_H */
