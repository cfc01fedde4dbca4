// kilobit's minimal RP2040 port: what main.c, modkb.c and fs.c share.
#ifndef KBPORT_H
#define KBPORT_H
#include <stdint.h>
#include "py/obj.h"
#include "kbemu.h"

// the run slot (run.mjs): past the Pico's 2 MiB of flash, where rp2040js's 16 MiB still answer;
// emulator only. Header words: magic 'KBRN', argc, bytes of the argv strings (each
// NUL-terminated, argv[0] the script's name), bytes of source; then the strings, then the source.
#define KB_RUN_SLOT ((const uint32_t *)0x10200000u)
#define KB_RUN_MAGIC 0x4e52424bu

extern int kb_cooked;                 // \n -> \r\n on stdout (the REPL), or not (run.mjs)
void kb_stderr_strn(void *env, const char *s, size_t n);
void kb_fs_load(void);                // the file table from flash, at every (soft) boot
#endif
