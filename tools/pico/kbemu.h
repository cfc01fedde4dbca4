// KbEmu: a register block that exists ONLY in the emulator (tools/pico/emu.mjs, KbEmu), at
// 0x40070000, just past the last APB peripheral of a real RP2040 (TBMAN, 0x4006c000). Shared by
// every image for the emulated Pico: the MicroPython port and the bare-C floor (floor/).
#ifndef KBEMU_H
#define KBEMU_H
#include <stdint.h>

typedef struct {
    volatile uint32_t id;        // 0x00 RO 'KBEM' (0x4b42454d)
    volatile uint32_t cycles;    // 0x04 RO the core's cycle counter, low 32 bits
    volatile uint32_t exit;      // 0x08 WO ends the emulation with this exit code
    volatile uint32_t bootmode;  // 0x0c RO 0: REPL on UART0; 1: run the script in the run slot
    volatile uint32_t err;       // 0x10 WO one byte to the host's stderr
    volatile uint32_t flash_off; // 0x14 flash programming: offset in flash,
    volatile uint32_t flash_src; // 0x18   source address (program),
    volatile uint32_t flash_len; // 0x1c   byte count,
    volatile uint32_t flash_cmd; // 0x20   WO 1: erase (4 KiB sectors), 2: program (bits 1->0)
} kbemu_t;
#define KBEMU ((kbemu_t *)0x40070000u)
#define KBEMU_ID 0x4b42454du
#endif
