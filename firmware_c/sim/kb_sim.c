/*
 * kb_sim: cycle-exact simavr harness for kilobit's AVR firmware.
 *
 *   kb_sim --mcu attiny2313|atmega328p --freq HZ [options] firmware.elf
 *
 * UART0 is bridged to stdin/stdout as raw bytes. stdin is treated as a recorded
 * line: bytes are handed to the chip's receiver only when simavr says the
 * receiver can take them (UART "xon"), never while it says "xoff", so none is
 * dropped; simavr then delivers them at the configured baud rate. Which bytes
 * enter the chip at which simulated cycle therefore depends only on the
 * firmware, never on how fast the host writes: runs are reproducible to the
 * cycle. Every byte the chip transmits is written to stdout at once.
 *
 * --rx-mode interactive is for a live line (a pty, a socket): a byte is handed
 * over only when it is there, and the simulation never waits for one while
 * the firmware is busy. A firmware that reads its receiver from an interrupt
 * (an Arduino sketch's HardwareSerial) never polls it between bytes: every
 * 4096 cycles, while the receiver has room, kb_sim hands over what stdin
 * holds, and notices the end of stdin. When the firmware has read every byte
 * handed over (counted at its data register) and has since polled its empty
 * receiver 16 times in a row with its transmitter idle (UDRE set; the last
 * poll in the last 64 cycles) -- it has read the whole input, sent its reply
 * and gone back to waiting -- kb_sim waits for stdin (up to 50 ms at a time, then it
 * lets the chip run on). Replies therefore come out as soon as the chip has
 * sent them, whatever the host does next; cycle counts then depend on the
 * pacing of the input, and while waiting the simulated clock stands still.
 *
 * The run stops when
 *   - the chip sleeps with interrupts off (cli; sleep)   -> stop "done", exit 0
 *   - the marker register receives the --done-marker value -> "done-marker", 0
 *   - stdin is at EOF, every byte of it was read by the firmware (RX fifo
 *     drained), and then --idle-cycles cycles pass without a transmitted byte
 *     or a marker write                                  -> "idle", exit 0
 *   - simavr reports a crash                             -> "crashed", exit 1
 *   - the stack pointer goes below the end of .data/.bss/.noinit (checked
 *     after every instruction)                           -> "stack-collision", 1
 *   - --max-cycles is reached                            -> "max-cycles", exit 3
 *   - the --cut-eeprom-write N-th EEPROM byte write starts -> "power-cut", exit 0
 * Usage or load errors exit 2.
 *
 * --eeprom FILE is the chip's EEPROM across runs: read at the start (a missing or empty file is
 * a blank EEPROM, every byte 0xFF) and written back, whole, when the run ends, however it ends.
 * --cut-eeprom-write N cuts the power as the N-th EEPROM byte write (counted from 1) starts: that
 * byte keeps its old value, or with --cut-value V holds V (a torn write: an erase-and-write
 * cycle stopped half-way leaves any value), and nothing after it runs. Restarting kb_sim with the
 * same --eeprom file is the chip coming back. The report counts the EEPROM byte writes
 * (eeprom_writes) and the most any one cell took (eeprom_cell_max, at eeprom_cell_max_addr).
 *
 * A JSON report goes to --report FILE (or to stderr as the last line):
 * cycles, markers [[value, cycle, min_sp_since_previous_marker], ...], min_sp,
 * ramend, ramstart, static_end, stack_bytes, data/bss sizes, stop reason, state.
 * A marker's cycle is avr->cycle when the writing instruction starts, so the
 * difference between two markers is the exact cycle count of the instructions
 * from the first marker write (included) to the second one (excluded).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_avr.h"
#include "sim_elf.h"
#include "sim_io.h"
#include "sim_irq.h"
#include "avr_uart.h"
#include "avr_eeprom.h"

#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2
#define EXIT_MAXCYCLES 3

/* ---- per-MCU facts simavr does not expose ---- */
struct mcu_info {
	const char *name;
	uint16_t ramstart;   /* first SRAM byte (data address) */
	uint16_t gpior1;     /* default marker register (data address) */
	uint16_t ucsra;      /* UART0 status register (data address); UDRE is bit 5 */
	uint16_t udr;        /* UART0 data register (data address) */
	uint16_t eecr;       /* EEPROM control register (data address); EEAR follows EEDR */
	uint16_t eeprom;     /* EEPROM bytes */
};

static const struct mcu_info MCUS[] = {
	/* GPIOR1 = I/O 0x14, UCSRA/UDR = I/O 0x0B/0x0C, EECR/EEDR/EEAR = I/O 0x1C/0x1D/0x1E */
	{"attiny2313", 0x60, 0x34, 0x2B, 0x2C, 0x3C, 128},
	{"attiny4313", 0x60, 0x34, 0x2B, 0x2C, 0x3C, 256}, /* the 2313 with 4 KB flash, 256 B RAM */
	/* GPIOR1 = I/O 0x2A, UCSR0A = 0xC0, UDR0 = 0xC6, EECR/EEDR/EEARL/EEARH = I/O 0x1F..0x22 */
	{"atmega328p", 0x100, 0x4A, 0xC0, 0xC6, 0x3F, 1024},
	{"atmega328", 0x100, 0x4A, 0xC0, 0xC6, 0x3F, 1024},
	{NULL, 0, 0, 0, 0, 0, 0},
};

/* ---- options ---- */
static const char *opt_mcu = NULL;
static uint32_t opt_freq = 0;
static long opt_marker = -1;
static uint64_t opt_max_cycles = 4000000000ULL;
static uint64_t opt_idle_cycles = 5000000ULL;
static long opt_done_marker = -1;
static int opt_rx_byte_mode = 0;
static int opt_rx_interactive = 0;
static const char *opt_report = NULL;
static int opt_verbose = 0;
static const char *opt_elf = NULL;
static const char *opt_eeprom = NULL;
static uint64_t opt_cut_write = 0;   /* 0: no power cut */
static long opt_cut_value = -1;      /* -1: the cut byte keeps its old value */
static const char *opt_profile = NULL; /* cycles per instruction address, written to this file */
static uint8_t profile_open[256];      /* markers after which cycles count (all if none given) */
static int profile_any = 1;

/* ---- state ---- */
static avr_t *avr;

struct marker { uint8_t value; uint64_t cycle; uint16_t min_sp; };
static struct marker *markers;
static size_t n_markers, cap_markers;

static uint16_t min_sp;          /* lowest SP seen after any instruction */
static uint16_t seg_min_sp;      /* lowest SP since the previous marker */
static uint16_t collision_sp;    /* SP must stay >= this */
static uint16_t static_end;      /* first byte after .data/.bss/.noinit */

static int stop_requested;       /* set by callbacks */
static const char *stop_reason;

static int xoff;                 /* receiver says: no more bytes */
static int in_eof;               /* stdin is at EOF */
static unsigned char inbuf[4096];
static size_t in_pos, in_len;
static uint64_t rx_fed;          /* bytes handed to the UART */
static uint64_t tx_bytes;        /* bytes the chip transmitted */
static int out_ok = 1;           /* stdout still writable */
static int drained;              /* EOF and the firmware has read every byte */
static uint64_t last_activity;   /* cycle of the last TX / marker / drain */
static int rx_seen;              /* the firmware ever enabled its receiver */
static int starving;             /* interactive: polls of the empty receiver in a row, UDRE set */
static struct avr_irq_t *irq_rx; /* UART0 input */
static uint16_t ucsra_addr;      /* UART0 status register, 0 when unknown */
static uint64_t last_xon;        /* cycle of the last xon */
static uint64_t next_offer;      /* interactive: the cycle stdin is offered again */
static uint64_t rx_read;         /* interactive: reads of the data register */
static avr_io_read_t udr_read_next; /* simavr's own UDR read handler */
static void *udr_read_param;

/* EEPROM: writes counted at the control register, in front of simavr's own handler */
#define EE_EEPE 0x02
#define EE_EEMPE 0x04
static const struct mcu_info *ee_mcu;
static avr_io_write_t eecr_write_next;
static void *eecr_write_param;
static uint64_t ee_writes;
static uint32_t *ee_cell;        /* writes per cell */
static long ee_cut_addr = -1;    /* the cell of the write the power cut stopped */

/* Interactive mode: count the firmware's reads of UDR, then let simavr answer. */
static uint8_t udr_read(struct avr_t *a, avr_io_addr_t addr, void *param)
{
	(void)param;
	if (rx_read < rx_fed && ++rx_read == rx_fed)
		starving = 0; /* count the polls from here on */
	return udr_read_next ? udr_read_next(a, addr, udr_read_param) : a->data[addr];
}

static void die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "kb_sim: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(code);
}

/* simavr's default logger prints to stdout, which carries the UART bytes. */
static void logger(avr_t *a, const int level, const char *fmt, va_list ap)
{
	int limit = opt_verbose ? LOG_TRACE : LOG_ERROR;
	if (level > limit)
		return;
	(void)a;
	vfprintf(stderr, fmt, ap);
}

/* Sleeping is simulated time only: never usleep() to track wall time. */
static void no_sleep(avr_t *a, avr_cycle_count_t how_long)
{
	(void)a;
	(void)how_long;
}

/* ---- EEPROM ---- */
static uint16_t ee_address(avr_t *a)
{
	const uint16_t eear = (uint16_t)(ee_mcu->eecr + 2); /* EEAR(L), after EEDR */
	uint16_t v = a->data[eear];
	if (ee_mcu->eeprom > 256)
		v = (uint16_t)(v | a->data[eear + 1] << 8);
	return (uint16_t)(v & (ee_mcu->eeprom - 1));
}

static void ee_io(avr_t *a, uint8_t *buf, int set)
{
	avr_eeprom_desc_t d;
	d.ee = buf;
	d.offset = 0;
	d.size = ee_mcu->eeprom;
	/* simavr's EEPROM ioctl does its work and returns -1 all the same: no status to check */
	(void)avr_ioctl(a, set ? AVR_IOCTL_EEPROM_SET : AVR_IOCTL_EEPROM_GET, &d);
	if (!set && d.ee != buf) /* some simavr versions hand out their buffer instead */
		memcpy(buf, d.ee, ee_mcu->eeprom);
}

/* A write to EECR that sets EEPE while EEMPE is set starts a byte write (simavr's condition). */
static void eecr_write(struct avr_t *a, avr_io_addr_t addr, uint8_t v, void *param)
{
	(void)param;
	if ((v & EE_EEPE) && (a->data[addr] & EE_EEMPE)) {
		const uint16_t cell = ee_address(a);
		ee_writes++;
		ee_cell[cell]++;
		if (ee_writes == opt_cut_write) {
			if (opt_cut_value >= 0) {
				uint8_t buf[4096];
				ee_io(a, buf, 0);
				buf[cell] = (uint8_t)opt_cut_value;
				ee_io(a, buf, 1);
			}
			ee_cut_addr = cell;
			stop_requested = 1;
			stop_reason = "power-cut";
			return; /* the write never lands */
		}
	}
	if (eecr_write_next)
		eecr_write_next(a, addr, v, eecr_write_param);
	else
		a->data[addr] = v;
}

static void ee_load(avr_t *a)
{
	uint8_t buf[4096];
	FILE *f = fopen(opt_eeprom, "rb");
	memset(buf, 0xFF, sizeof buf);
	if (f) {
		const size_t n = fread(buf, 1, ee_mcu->eeprom + 1u, f);
		const int bad = ferror(f);
		fclose(f);
		if (bad)
			die(EXIT_USAGE, "cannot read %s", opt_eeprom);
		if (n != 0 && n != ee_mcu->eeprom)
			die(EXIT_USAGE, "%s has %zu bytes; the EEPROM of %s has %u", opt_eeprom, n,
			    ee_mcu->name, (unsigned)ee_mcu->eeprom);
	} else if (errno != ENOENT) {
		die(EXIT_USAGE, "cannot read %s: %s", opt_eeprom, strerror(errno));
	}
	ee_io(a, buf, 1);
}

/* Written to FILE.tmp, then renamed over FILE: a killed kb_sim leaves the old image whole. */
static void ee_save(avr_t *a)
{
	uint8_t buf[4096];
	char tmp[4096];
	FILE *f;
	ee_io(a, buf, 0);
	snprintf(tmp, sizeof tmp, "%s.tmp%ld", opt_eeprom, (long)getpid());
	f = fopen(tmp, "wb");
	if (!f || fwrite(buf, 1, ee_mcu->eeprom, f) != ee_mcu->eeprom || fclose(f) != 0 ||
	    rename(tmp, opt_eeprom) != 0)
		die(EXIT_USAGE, "cannot write %s: %s", opt_eeprom, strerror(errno));
}

/* ---- marker register ---- */
static void marker_write(avr_t *a, avr_io_addr_t addr, uint8_t v, void *param)
{
	(void)param;
	a->data[addr] = v;
	if (n_markers == cap_markers) {
		cap_markers = cap_markers ? cap_markers * 2 : 1024;
		markers = realloc(markers, cap_markers * sizeof *markers);
		if (!markers)
			die(EXIT_USAGE, "out of memory");
	}
	markers[n_markers].value = v;
	markers[n_markers].cycle = a->cycle;
	markers[n_markers].min_sp = seg_min_sp;
	n_markers++;
	seg_min_sp = a->data[R_SPL] | (a->data[R_SPH] << 8);
	last_activity = a->cycle;
	if (opt_done_marker >= 0 && v == (uint8_t)opt_done_marker && !stop_requested) {
		stop_requested = 1;
		stop_reason = "done-marker";
	}
}

/* ---- UART bridge ---- */
static void uart_out(struct avr_irq_t *irq, uint32_t value, void *param)
{
	(void)irq;
	(void)param;
	unsigned char c = (unsigned char)value;
	tx_bytes++;
	last_activity = avr->cycle;
	while (out_ok) {
		ssize_t w = write(STDOUT_FILENO, &c, 1);
		if (w == 1)
			break;
		if (w < 0 && errno == EINTR)
			continue;
		out_ok = 0; /* reader went away: keep simulating, drop output */
	}
}

/* Next input byte, blocking only when the buffer is empty; -1 at EOF. */
static int next_input(void)
{
	if (in_pos == in_len) {
		if (in_eof)
			return -1;
		for (;;) {
			ssize_t r = read(STDIN_FILENO, inbuf, sizeof inbuf);
			if (r > 0) {
				in_pos = 0;
				in_len = (size_t)r;
				break;
			}
			if (r < 0 && errno == EINTR)
				continue;
			in_eof = 1; /* EOF or error */
			return -1;
		}
	}
	return inbuf[in_pos++];
}

/* Interactive mode: wait up to timeout_ms for stdin and read what is there
 * (never blocking once something is buffered). 1: bytes buffered, 0: none
 * yet, -1: EOF. */
static int fill_input(int timeout_ms)
{
	if (in_pos < in_len)
		return 1;
	if (in_eof)
		return -1;
	struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
	int r = poll(&pfd, 1, timeout_ms);
	if (r < 0 && errno == EINTR)
		return 0;
	if (r <= 0)
		return r < 0 ? (in_eof = 1, -1) : 0;
	for (;;) {
		ssize_t n = read(STDIN_FILENO, inbuf, sizeof inbuf);
		if (n > 0) {
			in_pos = 0;
			in_len = (size_t)n;
			return 1;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		in_eof = 1; /* EOF, or EIO: the pty's other side is gone */
		return -1;
	}
}

/* Interactive mode: hand over what stdin has now, as far as the fifo takes it. */
static int feed_available(int timeout_ms)
{
	int fed = 0;
	while (!xoff) {
		if (opt_rx_byte_mode && fed)
			break;
		if (fill_input(fed ? 0 : timeout_ms) <= 0)
			break;
		avr_raise_irq(irq_rx, inbuf[in_pos++]);
		rx_fed++;
		fed++;
	}
	if (fed)
		starving = 0;
	return fed;
}

static void uart_xoff(struct avr_irq_t *irq, uint32_t value, void *param)
{
	(void)irq;
	(void)param;
	xoff = value != 0;
}

/* simavr raises xon whenever the receiver's fifo is empty and the firmware
 * enables RX, polls the status register or reads the last byte. */
static void uart_xon(struct avr_irq_t *irq, uint32_t value, void *param)
{
	(void)value;
	struct avr_irq_t *in = (struct avr_irq_t *)param;
	(void)irq;
	rx_seen = 1;
	xoff = 0;
	int fed = 0;
	if (opt_rx_interactive) {
		last_xon = avr->cycle;
		fed = feed_available(0);
		if (!fed) {
			/* a poll while a byte goes out is the transmitter's wait, not idleness */
			if (!ucsra_addr || (avr->data[ucsra_addr] & (1u << 5))) {
				if (starving < 1000000)
					starving++;
			}
			else
				starving = 0;
		}
		if (!fed && in_eof && in_pos == in_len && !drained) {
			drained = 1;
			last_activity = avr->cycle;
		}
		return;
	}
	while (!xoff) {
		if (opt_rx_byte_mode && fed)
			break;
		int c = next_input();
		if (c < 0)
			break;
		avr_raise_irq(in, (uint32_t)c);
		rx_fed++;
		fed++;
	}
	if (!fed && in_eof && in_pos == in_len && !drained) {
		/* the fifo is empty (that is what xon means) and stdin is done */
		drained = 1;
		last_activity = avr->cycle;
	}
}

/* ---- ELF: end of static RAM ---- */
static uint16_t elf_static_end(const char *path, uint16_t ramstart, uint32_t *data_sz,
                               uint32_t *bss_sz, uint32_t *noinit_sz)
{
	uint32_t end = ramstart;
	*data_sz = *bss_sz = *noinit_sz = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		die(EXIT_USAGE, "libelf too old");
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		die(EXIT_USAGE, "cannot open %s: %s", path, strerror(errno));
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		die(EXIT_USAGE, "%s: %s", path, elf_errmsg(-1));
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		die(EXIT_USAGE, "%s: %s", path, elf_errmsg(-1));
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_size == 0)
			continue;
		if (sh.sh_addr < 0x800000 || sh.sh_addr >= 0x810000)
			continue; /* not SRAM (flash, eeprom, fuses, .mmcu) */
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		uint32_t a = (uint32_t)(sh.sh_addr - 0x800000);
		uint32_t z = a + (uint32_t)sh.sh_size;
		if (z > end)
			end = z;
		if (name && strcmp(name, ".data") == 0)
			*data_sz += (uint32_t)sh.sh_size;
		else if (name && strcmp(name, ".bss") == 0)
			*bss_sz += (uint32_t)sh.sh_size;
		else if (name && strcmp(name, ".noinit") == 0)
			*noinit_sz += (uint32_t)sh.sh_size;
		else
			*bss_sz += (uint32_t)sh.sh_size;
	}
	elf_end(e);
	close(fd);
	return (uint16_t)(end > 0xffff ? 0xffff : end);
}

/* ---- report ---- */
static const char *state_name(int s)
{
	switch (s) {
	case cpu_Limbo: return "cpu_Limbo";
	case cpu_Stopped: return "cpu_Stopped";
	case cpu_Running: return "cpu_Running";
	case cpu_Sleeping: return "cpu_Sleeping";
	case cpu_Step: return "cpu_Step";
	case cpu_StepDone: return "cpu_StepDone";
	case cpu_Done: return "cpu_Done";
	case cpu_Crashed: return "cpu_Crashed";
	default: return "unknown";
	}
}

static void write_report(FILE *f, int ok, const char *message, uint32_t data_sz,
                         uint32_t bss_sz, uint32_t noinit_sz, uint16_t ramstart,
                         uint16_t marker_addr)
{
	fprintf(f, "{\"ok\": %s, \"stop\": \"%s\", \"state\": \"%s\", \"message\": \"",
	        ok ? "true" : "false", stop_reason, state_name(avr->state));
	for (const char *p = message; p && *p; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', f);
		fputc((unsigned char)*p >= ' ' ? *p : ' ', f);
	}
	fprintf(f, "\", \"mcu\": \"%s\", \"freq\": %" PRIu32 ", \"cycles\": %" PRIu64
	        ", \"pc\": %" PRIu32 ", \"marker_reg\": %u"
	        ", \"min_sp\": %u, \"ramend\": %u, \"ramstart\": %u, \"static_end\": %u"
	        ", \"stack_bytes\": %d, \"stack_headroom\": %d"
	        ", \"data_bytes\": %" PRIu32 ", \"bss_bytes\": %" PRIu32
	        ", \"noinit_bytes\": %" PRIu32
	        ", \"rx_bytes\": %" PRIu64 ", \"rx_eof\": %s, \"rx_drained\": %s"
	        ", \"tx_bytes\": %" PRIu64,
	        opt_mcu, avr->frequency, (uint64_t)avr->cycle, (uint32_t)avr->pc,
	        (unsigned)marker_addr, (unsigned)min_sp, (unsigned)avr->ramend,
	        (unsigned)ramstart, (unsigned)static_end,
	        (int)avr->ramend - (int)min_sp, (int)min_sp + 1 - (int)static_end,
	        data_sz, bss_sz, noinit_sz, rx_fed, in_eof ? "true" : "false",
	        drained ? "true" : "false", tx_bytes);
	uint32_t cmax = 0;
	long cmax_addr = -1;
	for (unsigned i = 0; ee_cell && i < ee_mcu->eeprom; i++)
		if (ee_cell[i] > cmax) {
			cmax = ee_cell[i];
			cmax_addr = (long)i;
		}
	fprintf(f, ", \"eeprom_writes\": %" PRIu64 ", \"eeprom_cell_max\": %" PRIu32
	        ", \"eeprom_cell_max_addr\": %ld, \"eeprom_cut_addr\": %ld, \"markers\": [",
	        ee_writes, cmax, cmax_addr, ee_cut_addr);
	for (size_t i = 0; i < n_markers; i++)
		fprintf(f, "%s[%u, %" PRIu64 ", %u]", i ? ", " : "", (unsigned)markers[i].value,
		        markers[i].cycle, (unsigned)markers[i].min_sp);
	fprintf(f, "]}\n");
}

static void usage(void)
{
	fprintf(stderr,
	        "usage: kb_sim --mcu attiny2313|atmega328p --freq HZ [--marker-reg ADDR]\n"
	        "              [--max-cycles N] [--idle-cycles N] [--done-marker V]\n"
	        "              [--rx-mode stream|byte|interactive] [--report FILE] [-v]\n"
	        "              [--eeprom FILE] [--cut-eeprom-write N [--cut-value V]]\n"
	        "              [--profile FILE [--profile-open V,V...]]\n"
	        "              firmware.elf\n"
	        "  ADDR is a data-space address (attiny2313 GPIOR1 = 0x34, atmega328p = 0x4A)\n"
	        "  --profile: the cycles spent at each flash address (\"address cycles\" lines), counted\n"
	        "  while the latest marker is one of --profile-open (any, when not given)\n");
	exit(EXIT_USAGE);
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || !*s || *end || s[0] == '-')
		die(EXIT_USAGE, "bad %s: %s", what, s);
	return (uint64_t)v;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
#define ARG() (i + 1 < argc ? argv[++i] : (usage(), ""))
		if (!strcmp(a, "--mcu"))
			opt_mcu = ARG();
		else if (!strcmp(a, "--freq"))
			opt_freq = (uint32_t)parse_u64(ARG(), "--freq");
		else if (!strcmp(a, "--marker-reg"))
			opt_marker = (long)parse_u64(ARG(), "--marker-reg");
		else if (!strcmp(a, "--max-cycles"))
			opt_max_cycles = parse_u64(ARG(), "--max-cycles");
		else if (!strcmp(a, "--idle-cycles"))
			opt_idle_cycles = parse_u64(ARG(), "--idle-cycles");
		else if (!strcmp(a, "--done-marker"))
			opt_done_marker = (long)(parse_u64(ARG(), "--done-marker") & 0xff);
		else if (!strcmp(a, "--rx-mode")) {
			const char *m = ARG();
			if (!strcmp(m, "stream"))
				opt_rx_byte_mode = 0;
			else if (!strcmp(m, "byte"))
				opt_rx_byte_mode = 1;
			else if (!strcmp(m, "interactive"))
				opt_rx_interactive = 1;
			else
				usage();
		} else if (!strcmp(a, "--profile"))
			opt_profile = ARG();
		else if (!strcmp(a, "--profile-open")) {
			char *list = strdup(ARG()), *tok, *save = NULL;
			profile_any = 0;
			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
				profile_open[parse_u64(tok, "--profile-open") & 0xff] = 1;
			free(list);
		} else if (!strcmp(a, "--report"))
			opt_report = ARG();
		else if (!strcmp(a, "--eeprom"))
			opt_eeprom = ARG();
		else if (!strcmp(a, "--cut-eeprom-write"))
			opt_cut_write = parse_u64(ARG(), "--cut-eeprom-write");
		else if (!strcmp(a, "--cut-value"))
			opt_cut_value = (long)(parse_u64(ARG(), "--cut-value") & 0xff);
		else if (!strcmp(a, "-v"))
			opt_verbose = 1;
		else if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			usage();
		else if (a[0] == '-')
			die(EXIT_USAGE, "unknown option %s", a);
		else if (!opt_elf)
			opt_elf = a;
		else
			usage();
#undef ARG
	}
	if (!opt_elf || !opt_mcu)
		usage();

	signal(SIGPIPE, SIG_IGN);
	avr_global_logger_set(logger);

	const struct mcu_info *mi = NULL;
	for (const struct mcu_info *m = MCUS; m->name; m++)
		if (!strcmp(m->name, opt_mcu))
			mi = m;

	elf_firmware_t fw;
	memset(&fw, 0, sizeof fw);
	if (access(opt_elf, R_OK) != 0)
		die(EXIT_USAGE, "cannot read %s: %s", opt_elf, strerror(errno));
	if (elf_read_firmware(opt_elf, &fw) != 0)
		die(EXIT_USAGE, "cannot load ELF %s", opt_elf);
	if (fw.mmcu[0] && strcmp(fw.mmcu, opt_mcu) != 0)
		die(EXIT_USAGE, "%s is tagged for %s, not %s", opt_elf, fw.mmcu, opt_mcu);
	if (!opt_freq)
		opt_freq = fw.frequency;
	if (!opt_freq)
		die(EXIT_USAGE, "--freq is required (the ELF has no frequency tag)");
	fw.frequency = opt_freq;
	strncpy(fw.mmcu, opt_mcu, sizeof fw.mmcu - 1);

	avr = avr_make_mcu_by_name(opt_mcu);
	if (!avr)
		die(EXIT_USAGE, "simavr does not know mcu %s", opt_mcu);
	avr->frequency = opt_freq;
	avr->log = opt_verbose ? LOG_TRACE : LOG_ERROR;
	avr_init(avr);
	avr->frequency = opt_freq;
	avr->sleep = no_sleep;
	avr_load_firmware(avr, &fw);
	avr->sleep = no_sleep;
	if (fw.flashbase)
		avr->pc = fw.flashbase;

	uint16_t ramstart = mi ? mi->ramstart : (uint16_t)(avr->ioend + 1);
	if (opt_marker < 0) {
		if (!mi)
			die(EXIT_USAGE, "--marker-reg is required for mcu %s", opt_mcu);
		opt_marker = mi->gpior1;
	}
	if (opt_marker < 32 || opt_marker >= 32 + MAX_IOs || opt_marker >= ramstart)
		die(EXIT_USAGE, "--marker-reg 0x%lx is not an I/O register of %s", opt_marker, opt_mcu);

	uint32_t data_sz, bss_sz, noinit_sz;
	static_end = elf_static_end(opt_elf, ramstart, &data_sz, &bss_sz, &noinit_sz);
	/* bytes are pushed at SP and SP is then decremented: the lowest byte the
	 * stack has touched is min_sp + 1, which must not reach static RAM */
	collision_sp = static_end ? (uint16_t)(static_end - 1) : 0;
	if (static_end > avr->ramend + 1)
		die(EXIT_USAGE, "%s needs %u bytes of static RAM, %s has %u", opt_elf,
		    (unsigned)(static_end - ramstart), opt_mcu, (unsigned)(avr->ramend + 1 - ramstart));

	avr_register_io_write(avr, (avr_io_addr_t)opt_marker, marker_write, NULL);

	if (mi && mi->eeprom) {
		unsigned io = AVR_DATA_TO_IO(mi->eecr);
		ee_mcu = mi;
		ee_cell = calloc(mi->eeprom, sizeof *ee_cell);
		if (!ee_cell)
			die(EXIT_USAGE, "out of memory");
		eecr_write_next = avr->io[io].w.c;
		eecr_write_param = avr->io[io].w.param;
		avr->io[io].w.c = eecr_write;
		avr->io[io].w.param = NULL;
		if (opt_eeprom)
			ee_load(avr);
	} else if (opt_eeprom || opt_cut_write) {
		die(EXIT_USAGE, "--eeprom does not know mcu %s", opt_mcu);
	}

	/* UART0: no console printing, no usleep while the firmware polls */
	uint32_t flags = 0;
	avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
	struct avr_irq_t *irq_in = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
	struct avr_irq_t *irq_out = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT);
	struct avr_irq_t *irq_xon = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON);
	struct avr_irq_t *irq_xoff = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF);
	if (!irq_in || !irq_out || !irq_xon || !irq_xoff)
		die(EXIT_USAGE, "mcu %s has no UART0 in simavr", opt_mcu);
	avr_irq_register_notify(irq_out, uart_out, NULL);
	avr_irq_register_notify(irq_xon, uart_xon, irq_in);
	irq_rx = irq_in;
	ucsra_addr = mi ? mi->ucsra : 0;
	if (opt_rx_interactive) {
		if (!mi)
			die(EXIT_USAGE, "--rx-mode interactive does not know mcu %s", opt_mcu);
		unsigned io = AVR_DATA_TO_IO(mi->udr);
		udr_read_next = avr->io[io].r.c;
		udr_read_param = avr->io[io].r.param;
		avr->io[io].r.c = udr_read;
		avr->io[io].r.param = NULL;
	}
	avr_irq_register_notify(irq_xoff, uart_xoff, NULL);

	min_sp = seg_min_sp = (uint16_t)(avr->data[R_SPL] | (avr->data[R_SPH] << 8));
	stop_reason = "running";
	const char *message = "";
	int code = EXIT_OK;
	char msgbuf[256];

	uint64_t *prof = NULL;
	if (opt_profile && !(prof = calloc(1u << 16, sizeof *prof)))
		die(EXIT_USAGE, "out of memory for --profile");
	for (;;) {
		const avr_flashaddr_t pc0 = avr->pc;
		const uint64_t c0 = avr->cycle;
		int state = avr_run(avr);
		if (prof && (profile_any ||
		             (n_markers > 0 && profile_open[markers[n_markers - 1].value])))
			prof[(pc0 >> 1) & 0xFFFFu] += avr->cycle - c0;
		uint16_t sp = (uint16_t)(avr->data[R_SPL] | (avr->data[R_SPH] << 8));
		if (sp < min_sp) {
			min_sp = sp;
			if (sp < collision_sp) {
				stop_reason = "stack-collision";
				snprintf(msgbuf, sizeof msgbuf,
				         "stack collision: SP=0x%04x below end of static RAM 0x%04x "
				         "(pc=0x%04x, cycle %" PRIu64 ")",
				         sp, static_end, (unsigned)avr->pc, (uint64_t)avr->cycle);
				message = msgbuf;
				code = EXIT_FAIL;
				break;
			}
		}
		if (sp < seg_min_sp)
			seg_min_sp = sp;
		if (state == cpu_Done) {
			stop_reason = "done";
			break;
		}
		if (state == cpu_Crashed) {
			stop_reason = "crashed";
			snprintf(msgbuf, sizeof msgbuf, "simavr: cpu crashed at pc=0x%04x, cycle %" PRIu64,
			         (unsigned)avr->pc, (uint64_t)avr->cycle);
			message = msgbuf;
			code = EXIT_FAIL;
			break;
		}
		if (state != cpu_Running && state != cpu_Sleeping) {
			stop_reason = "crashed";
			snprintf(msgbuf, sizeof msgbuf, "simavr: unexpected cpu state %s at pc=0x%04x",
			         state_name(state), (unsigned)avr->pc);
			message = msgbuf;
			code = EXIT_FAIL;
			break;
		}
		if (stop_requested)
			break;
		if (opt_rx_interactive && rx_seen && !xoff && avr->cycle >= next_offer) {
			next_offer = avr->cycle + 4096;
			feed_available(0);
			if (in_eof && in_pos == in_len && !drained && rx_read == rx_fed) {
				drained = 1;
				last_activity = avr->cycle;
			}
		}
		if (opt_rx_interactive && starving >= 16 && !in_eof && rx_read == rx_fed &&
		    avr->cycle - last_xon < 64 && (avr->data[ucsra_addr] & (1u << 5))) {
			/* the firmware waits for input: wait for the host too */
			if (feed_available(50) == 0 && in_eof && !drained) {
				drained = 1;
				last_activity = avr->cycle;
			}
		}
		if (drained && avr->cycle - last_activity >= opt_idle_cycles) {
			stop_reason = "idle";
			break;
		}
		if (avr->cycle >= opt_max_cycles) {
			stop_reason = "max-cycles";
			snprintf(msgbuf, sizeof msgbuf, "stopped after --max-cycles %" PRIu64
			         " (pc=0x%04x, %s)", opt_max_cycles, (unsigned)avr->pc,
			         rx_seen && !drained ? "input not consumed" : "firmware did not stop");
			message = msgbuf;
			code = EXIT_MAXCYCLES;
			break;
		}
	}

	if (opt_eeprom)
		ee_save(avr);
	if (prof) {
		FILE *f = fopen(opt_profile, "w");
		if (!f)
			die(EXIT_USAGE, "cannot write %s: %s", opt_profile, strerror(errno));
		for (uint32_t w = 0; w < (1u << 16); w++)
			if (prof[w])
				fprintf(f, "0x%05x %" PRIu64 "\n", (unsigned)(w << 1), prof[w]);
		if (fclose(f) != 0)
			die(EXIT_USAGE, "cannot write %s: %s", opt_profile, strerror(errno));
		free(prof);
	}
	if (code != EXIT_OK)
		fprintf(stderr, "kb_sim: %s\n", message);
	if (opt_report) {
		FILE *f = fopen(opt_report, "w");
		if (!f)
			die(EXIT_USAGE, "cannot write %s: %s", opt_report, strerror(errno));
		write_report(f, code == EXIT_OK, message, data_sz, bss_sz, noinit_sz, ramstart,
		             (uint16_t)opt_marker);
		if (fclose(f) != 0)
			die(EXIT_USAGE, "cannot write %s: %s", opt_report, strerror(errno));
	} else {
		write_report(stderr, code == EXIT_OK, message, data_sz, bss_sz, noinit_sz, ramstart,
		             (uint16_t)opt_marker);
	}
	return code;
}
