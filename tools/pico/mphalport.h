// kilobit's minimal RP2040 port: the HAL (UART0 stdio, the TIMER's ticks). See main.c.
#include "shared/runtime/interrupt_char.h"

#define mp_hal_pin_obj_t void *   // no pins here (extmod/virtpin.h is not in the sdist)

#define KB_REG(addr) (*(volatile uint32_t *)(addr))
#define KB_TIMERAWH  KB_REG(0x40054024u)
#define KB_TIMERAWL  KB_REG(0x40054028u)   // the RP2040 TIMER's microseconds, low word

static inline mp_uint_t mp_hal_ticks_us(void) { return KB_TIMERAWL; }
static inline mp_uint_t mp_hal_ticks_cpu(void) { return KB_TIMERAWL; }
