// kilobit's minimal RP2040 port: its own `time` (ticks from the RP2040 TIMER) and `kbemu` (the
// link to the emulator: kbemu exists only under rp2040js, see emu.mjs).
#include "py/runtime.h"
#include "py/mphal.h"
#include "kbport.h"

// ticks wrap at 2**30, so that every value is a small int (as MicroPython's own time module)
#define TICKS_MASK ((1u << 30) - 1)
#define TICKS_HALF (1 << 29)

static mp_obj_t kb_ticks_ms(void) {
    return MP_OBJ_NEW_SMALL_INT(mp_hal_ticks_ms() & TICKS_MASK);
}
static MP_DEFINE_CONST_FUN_OBJ_0(kb_ticks_ms_obj, kb_ticks_ms);

static mp_obj_t kb_ticks_us(void) {
    return MP_OBJ_NEW_SMALL_INT(mp_hal_ticks_us() & TICKS_MASK);
}
static MP_DEFINE_CONST_FUN_OBJ_0(kb_ticks_us_obj, kb_ticks_us);

static mp_obj_t kb_ticks_diff(mp_obj_t end, mp_obj_t start) {
    mp_uint_t d = (mp_obj_get_int_truncated(end) - mp_obj_get_int_truncated(start) + TICKS_HALF)
        & TICKS_MASK;
    return MP_OBJ_NEW_SMALL_INT((mp_int_t)d - TICKS_HALF);
}
static MP_DEFINE_CONST_FUN_OBJ_2(kb_ticks_diff_obj, kb_ticks_diff);

static mp_obj_t kb_ticks_add(mp_obj_t t, mp_obj_t delta) {
    return MP_OBJ_NEW_SMALL_INT((mp_obj_get_int_truncated(t) + mp_obj_get_int_truncated(delta))
        & TICKS_MASK);
}
static MP_DEFINE_CONST_FUN_OBJ_2(kb_ticks_add_obj, kb_ticks_add);

static mp_obj_t kb_sleep_ms(mp_obj_t ms) {
    mp_int_t n = mp_obj_get_int(ms);
    if (n > 0) {
        mp_hal_delay_ms(n);
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(kb_sleep_ms_obj, kb_sleep_ms);

static mp_obj_t kb_sleep_us(mp_obj_t us) {
    mp_int_t n = mp_obj_get_int(us);
    if (n > 0) {
        mp_hal_delay_us(n);
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(kb_sleep_us_obj, kb_sleep_us);

static mp_obj_t kb_sleep(mp_obj_t s) {  // whole seconds: no float here
    return kb_sleep_ms(MP_OBJ_NEW_SMALL_INT(mp_obj_get_int(s) * 1000));
}
static MP_DEFINE_CONST_FUN_OBJ_1(kb_sleep_obj, kb_sleep);

static const mp_rom_map_elem_t kb_time_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_time) },
    { MP_ROM_QSTR(MP_QSTR_ticks_ms), MP_ROM_PTR(&kb_ticks_ms_obj) },
    { MP_ROM_QSTR(MP_QSTR_ticks_us), MP_ROM_PTR(&kb_ticks_us_obj) },
    { MP_ROM_QSTR(MP_QSTR_ticks_cpu), MP_ROM_PTR(&kb_ticks_us_obj) },  // the 1 MHz TIMER
    { MP_ROM_QSTR(MP_QSTR_ticks_diff), MP_ROM_PTR(&kb_ticks_diff_obj) },
    { MP_ROM_QSTR(MP_QSTR_ticks_add), MP_ROM_PTR(&kb_ticks_add_obj) },
    { MP_ROM_QSTR(MP_QSTR_sleep_ms), MP_ROM_PTR(&kb_sleep_ms_obj) },
    { MP_ROM_QSTR(MP_QSTR_sleep_us), MP_ROM_PTR(&kb_sleep_us_obj) },
    { MP_ROM_QSTR(MP_QSTR_sleep), MP_ROM_PTR(&kb_sleep_obj) },
};
static MP_DEFINE_CONST_DICT(kb_time_globals, kb_time_globals_table);
const mp_obj_module_t kb_time_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&kb_time_globals,
};
MP_REGISTER_MODULE(MP_QSTR_time, kb_time_module);

// kbemu.cycles(): the emulated core's cycle counter (instructions executed, as rp2040js charges
// them; not the time spent asleep in WFI), wrapped to 30 bits like the ticks: measure with
// time.ticks_diff(b, a), good for spans under 2**29 cycles (4.2 s at 125 MHz).
static mp_obj_t kbemu_cycles(void) {
    return MP_OBJ_NEW_SMALL_INT(KBEMU->cycles & TICKS_MASK);
}
static MP_DEFINE_CONST_FUN_OBJ_0(kbemu_cycles_obj, kbemu_cycles);

// kbemu.exit(code): ends the emulation; the emulator process exits with `code` (0..255).
static mp_obj_t kbemu_exit(mp_obj_t code) {
    KBEMU->exit = mp_obj_get_int(code) & 0xff;
    for (;;) {
        __asm volatile ("wfi");
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(kbemu_exit_obj, kbemu_exit);

static const mp_rom_map_elem_t kbemu_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_kbemu) },
    { MP_ROM_QSTR(MP_QSTR_cycles), MP_ROM_PTR(&kbemu_cycles_obj) },
    { MP_ROM_QSTR(MP_QSTR_exit), MP_ROM_PTR(&kbemu_exit_obj) },
};
static MP_DEFINE_CONST_DICT(kbemu_globals, kbemu_globals_table);
const mp_obj_module_t kbemu_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&kbemu_globals,
};
MP_REGISTER_MODULE(MP_QSTR_kbemu, kbemu_module);
