// kilobit's minimal RP2040 port of MicroPython 1.23's core: its configuration.
// (Runs under rp2040js, emulated; not the official rp2 firmware. See README.md.)
#include <stdint.h>

#define MICROPY_CONFIG_ROM_LEVEL            (MICROPY_CONFIG_ROM_LEVEL_EXTRA_FEATURES)

// integer only: no float, big ints as MPZ
#define MICROPY_FLOAT_IMPL                  (MICROPY_FLOAT_IMPL_NONE)
#define MICROPY_LONGINT_IMPL                (MICROPY_LONGINT_IMPL_MPZ)

// native code: the Thumb emitter for Cortex-M0+ (armv6m), and .mpy files holding machine code
#define MICROPY_EMIT_THUMB                  (1)
#define MICROPY_EMIT_THUMB_ARMV7M           (0)
#define MICROPY_EMIT_INLINE_THUMB           (0)
#define MICROPY_PERSISTENT_CODE_LOAD        (1)
#define MICROPY_MAKE_POINTER_CALLABLE(p)    ((void *)((uintptr_t)(p) | 1))  // Thumb bit

// files: kilobit's flat file table in flash (fs.c), not MicroPython's VFS
#define MICROPY_VFS                         (0)
#define MICROPY_HAS_FILE_READER             (1)
#define MICROPY_PY_OS                       (0)  // extmod's; fs.c registers its own `os`
#define MICROPY_PY_TIME                     (0)  // extmod's; modkb.c registers its own `time`
#define MICROPY_PY_SELECT                   (0)
#define MICROPY_PY_UCTYPES                  (0)

#define MICROPY_OPT_COMPUTED_GOTO           (1)
#define MICROPY_ENABLE_GC                   (1)
#define MICROPY_ENABLE_FINALISER            (1)  // an unclosed file is closed when collected
#define MICROPY_GCREGS_SETJMP               (0)
#define MICROPY_STACK_CHECK                 (1)
#define MICROPY_KBD_EXCEPTION               (1)
#define MICROPY_HELPER_REPL                 (1)
#define MICROPY_REPL_INFO                   (0)
#define MICROPY_ENABLE_SOURCE_LINE          (1)
#define MICROPY_ERROR_REPORTING             (MICROPY_ERROR_REPORTING_NORMAL)
#define MICROPY_PY_SYS_PLATFORM             "rp2"
#define MICROPY_PY_SYS_STDFILES             (1)
#define MICROPY_PY_SYS_STDIO_BUFFER         (1)
#define MICROPY_PY_ERRNO                    (1)
#define MICROPY_PY_MICROPYTHON_HEAP_LOCKED  (1)
#define MICROPY_PY_THREAD                   (0)
#define MICROPY_USE_INTERNAL_PRINTF         (1)
#define MICROPY_ALLOC_PATH_MAX              (128)
#define MICROPY_READLINE_HISTORY_SIZE       (8)

#define MICROPY_HW_BOARD_NAME "kilobit minimal RP2040 port (emulated, not the official rp2 firmware)"
#define MICROPY_HW_MCU_NAME   "RP2040"

typedef intptr_t mp_int_t;
typedef uintptr_t mp_uint_t;
typedef long mp_off_t;
#define MP_SSIZE_MAX (0x7fffffff)

// the UART's receive interrupt and the timer's: a masked section is PRIMASK
#define MICROPY_BEGIN_ATOMIC_SECTION()      kb_irq_save()
#define MICROPY_END_ATOMIC_SECTION(state)   kb_irq_restore(state)
static inline uint32_t kb_irq_save(void) {
    uint32_t s;
    __asm volatile ("mrs %0, primask\n cpsid i" : "=r" (s) :: "memory");
    return s;
}
static inline void kb_irq_restore(uint32_t s) {
    __asm volatile ("msr primask, %0" :: "r" (s) : "memory");
}

// every REPL command (raw REPL included) ends with the heap unlocked, as the friendly REPL's
// input does: a command that leaves it locked would otherwise wedge the raw REPL
#define MICROPY_BOARD_AFTER_PYTHON_EXEC(kind, flags, ret_val, ret) \
    (MP_STATE_THREAD(gc_lock_depth) = 0)

#define MP_STATE_PORT MP_STATE_VM
#include <alloca.h>
