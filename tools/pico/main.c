// kilobit's minimal RP2040 port of MicroPython 1.23's core: start-up, UART0 stdio, ticks, the
// REPL and the run mode. Emulated by rp2040js (emu.mjs); not the official rp2 firmware.
#include <string.h>
#include "py/compile.h"
#include "py/runtime.h"
#include "py/gc.h"
#include "py/stackctrl.h"
#include "py/mphal.h"
#include "py/stream.h"
#include "shared/runtime/gchelper.h"
#include "shared/runtime/pyexec.h"
#include "shared/readline/readline.h"
#include "kbport.h"

// The GC heap: exactly 192 KiB (196,608 bytes), the figure boards/rp2040.json gives a real
// Pico's MicroPython heap. The GC's tables take 4,503 bytes of it (2 bits of allocation table
// and 1 bit of finaliser table per 16-byte block, 1 gap byte) and 41 are left over:
// gc.mem_free() + gc.mem_alloc() == 12,004 blocks * 16 == 192,064 bytes.
#define KB_HEAP_BYTES (192 * 1024)
static uint32_t kb_heap[KB_HEAP_BYTES / 4] __attribute__((aligned(16)));

extern uint32_t _ebss, _estack;

// ---- registers ----
#define UART0_DR    KB_REG(0x40034000u)
#define UART0_FR    KB_REG(0x40034018u)   // bit 4 RXFE, bit 5 TXFF
#define UART0_IBRD  KB_REG(0x40034024u)
#define UART0_FBRD  KB_REG(0x40034028u)
#define UART0_LCR_H KB_REG(0x4003402cu)
#define UART0_CR    KB_REG(0x40034030u)
#define UART0_IMSC  KB_REG(0x40034038u)
#define UART_RX_IRQS 0x50u                // RXIM | RTIM
#define TIMER_ALARM0 KB_REG(0x40054010u)
#define TIMER_INTR   KB_REG(0x40054034u)
#define TIMER_INTE   KB_REG(0x40054038u)
#define RESETS_CLR   KB_REG(0x4000f000u)  // RESETS_RESET, atomic-clear alias
#define NVIC_ISER    KB_REG(0xe000e100u)
#define IRQ_TIMER0   0
#define IRQ_UART0    20

int kb_cooked = 1;

// ---- UART0: received bytes go through an interrupt into a ring; Ctrl-C raises at once ----
static volatile uint8_t rx_ring[256];
static volatile uint8_t rx_head, rx_tail;

void kb_isr_uart0(void) {
    while (!(UART0_FR & (1u << 4))) {
        if ((uint8_t)(rx_head + 1) == rx_tail) {  // ring full: stop listening until it drains
            UART0_IMSC = 0;
            return;
        }
        int c = UART0_DR & 0xff;
        if (c == mp_interrupt_char) {
            mp_sched_keyboard_interrupt();
        } else {
            rx_ring[rx_head] = c;
            rx_head = rx_head + 1;
        }
    }
}

void kb_isr_timer0(void) {
    TIMER_INTR = 1;  // the alarm only wakes mp_hal_delay_us from its WFI
}

int mp_hal_stdin_rx_chr(void) {
    for (;;) {
        if (rx_tail != rx_head) {
            int c = rx_ring[rx_tail];
            rx_tail = rx_tail + 1;
            UART0_IMSC = UART_RX_IRQS;
            return c;
        }
        if (mp_interrupt_char >= 0) {
            mp_handle_pending(true);
        }
        __asm volatile ("cpsid i");      // sleep unless a byte came in meanwhile; a masked
        if (rx_tail == rx_head) {        // interrupt still ends the WFI
            __asm volatile ("wfi");
        }
        __asm volatile ("cpsie i");
    }
}

uintptr_t mp_hal_stdio_poll(uintptr_t poll_flags) {
    uintptr_t ret = poll_flags & MP_STREAM_POLL_WR;
    if ((poll_flags & MP_STREAM_POLL_RD) && rx_tail != rx_head) {
        ret |= MP_STREAM_POLL_RD;
    }
    return ret;
}

mp_uint_t mp_hal_stdout_tx_strn(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        while (UART0_FR & (1u << 5)) {
        }
        UART0_DR = (uint8_t)s[i];
    }
    return n;
}

void mp_hal_stdout_tx_strn_cooked(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n' && kb_cooked) {
            mp_hal_stdout_tx_strn("\r", 1);
        }
        mp_hal_stdout_tx_strn(s + i, 1);
    }
}

void mp_hal_stdout_tx_str(const char *s) {
    mp_hal_stdout_tx_strn(s, strlen(s));
}

void kb_stderr_strn(void *env, const char *s, size_t n) {
    (void)env;
    while (n--) {
        KBEMU->err = (uint8_t)*s++;
    }
}

// ---- time: the RP2040 TIMER (1 MHz) ----
mp_uint_t mp_hal_ticks_ms(void) {
    uint32_t hi, lo;
    do {
        hi = KB_TIMERAWH;
        lo = KB_TIMERAWL;
    } while (hi != KB_TIMERAWH);
    return (mp_uint_t)((((uint64_t)hi << 32) | lo) / 1000);
}

void mp_hal_delay_us(mp_uint_t us) {
    uint32_t t0 = KB_TIMERAWL;
    for (;;) {
        uint32_t gone = KB_TIMERAWL - t0;
        if (gone >= us) {
            return;
        }
        if (us - gone > 10) {  // sleep until ALARM0 (or another interrupt)
            __asm volatile ("cpsid i");
            TIMER_ALARM0 = KB_TIMERAWL + (us - gone) - 2;
            __asm volatile ("wfi\n cpsie i");
        }
    }
}

void mp_hal_delay_ms(mp_uint_t ms) {
    while (ms) {
        mp_uint_t n = ms > 1000 ? 1000 : ms;
        mp_hal_delay_us(n * 1000);
        ms -= n;
        mp_handle_pending(true);
    }
}

// ---- the core's hooks ----
void gc_collect(void) {
    gc_collect_start();
    gc_helper_collect_regs_and_stack();
    gc_collect_end();
}

void nlr_jump_fail(void *val) {
    (void)val;
    mp_hal_stdout_tx_str("FATAL: uncaught NLR\r\n");
    KBEMU->exit = 3;
    for (;;) {
        __asm volatile ("wfi");
    }
}

// ---- run mode: the script in the run slot, its exception to stderr, its exit code ----
static int kb_run_slot(void) {
    const uint32_t *h = KB_RUN_SLOT;
    const char *p = (const char *)(h + 4);
    for (uint32_t i = 0; i < h[1]; i++) {
        size_t n = strlen(p);
        mp_obj_list_append(mp_sys_argv, mp_obj_new_str(p, n));
        p += n + 1;
    }
    const char *src = (const char *)(h + 4) + h[2];
    qstr name = qstr_from_str((const char *)(h + 4));
    mp_print_t err = {NULL, kb_stderr_strn};
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_lexer_t *lex = mp_lexer_new_from_str_len(name, src, h[3], 0);
        mp_parse_tree_t tree = mp_parse(lex, MP_PARSE_FILE_INPUT);
        mp_call_function_0(mp_compile(&tree, name, false));
        nlr_pop();
        return 0;
    }
    mp_obj_t exc = MP_OBJ_FROM_PTR(nlr.ret_val);
    if (mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(exc)),
        MP_OBJ_FROM_PTR(&mp_type_SystemExit))) {
        mp_obj_t code = mp_obj_exception_get_value(exc);
        if (code == mp_const_none) {
            return 0;
        }
        if (mp_obj_is_small_int(code)) {
            return MP_OBJ_SMALL_INT_VALUE(code) & 0xff;
        }
        mp_obj_print_helper(&err, code, PRINT_STR);
        mp_print_str(&err, "\n");
        return 1;
    }
    mp_obj_print_exception(&err, exc);
    return 1;
}

// ---- main ----
int main(void) {
    RESETS_CLR = (1u << 22) | (1u << 21);  // UART0 and TIMER out of reset
    UART0_IBRD = 67;                       // 115200 baud from clk_peri = 125 MHz (rp2040js
    UART0_FBRD = 52;                       // sends bytes without baud timing)
    UART0_LCR_H = 0x70;                    // 8N1, FIFOs on
    UART0_CR = 0x301;                      // UARTEN, TXE, RXE
    UART0_IMSC = UART_RX_IRQS;
    TIMER_INTE = 1;
    NVIC_ISER = (1u << IRQ_UART0) | (1u << IRQ_TIMER0);

    int run = KBEMU->id == KBEMU_ID && KBEMU->bootmode == 1 && KB_RUN_SLOT[0] == KB_RUN_MAGIC;
    kb_cooked = !run;
    for (;;) {
        mp_stack_set_top(&_estack);
        mp_stack_set_limit((char *)&_estack - (char *)&_ebss - 1024);
        gc_init(kb_heap, (char *)kb_heap + KB_HEAP_BYTES);
        mp_init();
        mp_obj_list_append(mp_sys_path, mp_obj_new_str("/lib", 4));
        readline_init0();
        kb_fs_load();
        if (run) {
            KBEMU->exit = kb_run_slot();
            for (;;) {
                __asm volatile ("wfi");
            }
        }
        pyexec_file_if_exists("boot.py");
        if (pyexec_mode_kind == PYEXEC_MODE_FRIENDLY_REPL) {
            pyexec_file_if_exists("main.py");
        }
        for (;;) {
            MP_STATE_THREAD(gc_lock_depth) = 0;  // a script may end with the heap locked
            if (pyexec_mode_kind == PYEXEC_MODE_RAW_REPL) {
                if (pyexec_raw_repl() != 0) {
                    break;
                }
            } else if (pyexec_friendly_repl() != 0) {
                break;
            }
        }
        mp_printf(&mp_plat_print, "MPY: soft reboot\n");
        gc_sweep_all();
        mp_deinit();
    }
}

// ---- start-up (startup.c: the vector table, the reset handler, the two handlers above) ----
void kb_fault(void) {
    mp_hal_stdout_tx_str("\r\nFATAL: unexpected exception (hard fault?)\r\n");
}
