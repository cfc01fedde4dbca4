// The emulated Pico that runs kilobit's minimal RP2040 port (MicroPython 1.23's core; not the
// official rp2 firmware): rp2040js's RP2040, started without a bootrom, plus two things that
// exist ONLY in this emulator, never on a real RP2040:
//  - KbEmu, a register block at 0x40070000 (past the last APB peripheral): the cycle counter,
//    the exit code, the boot mode, a byte channel to the host's stderr, and "flash programming"
//    (a real chip erases and programs its flash through the bootrom's flash_range_erase /
//    flash_range_program; the firmware's file table asks KbEmu instead, see fs.c);
//  - the run slot at flash offset 2 MiB (past the Pico's 2 MiB, inside rp2040js's 16 MiB), which
//    holds the script run.mjs runs.
// Used by run.mjs and board.mjs.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, "..", "..");
// kilobit's build folder (kilobit.core.paths.cache: build/ in a checkout, else KILOBIT_CACHE or
// the user's cache), which kilobit passes as KILOBIT_BUILD
export const BUILD_ROOT = process.env.KILOBIT_BUILD || path.join(REPO, "build");
export const FIRMWARE = path.join(BUILD_ROOT, "pico", "firmware.bin");
const RP2040JS = path.join(HERE, "node_modules", "rp2040js", "package.json");

/** null when the emulator can run, else a one-line message naming what to install or build. */
export function missing() {
  if (!fs.existsSync(RP2040JS)) {
    return "npm package rp2040js missing (bash scripts/setup.sh, or: cd tools/pico && npm ci)";
  }
  if (!fs.existsSync(FIRMWARE)) {
    return `${path.relative(REPO, FIRMWARE)} missing (make -C tools/pico)`;
  }
  return null;
}

// ---- the file table in flash (fs.c's layout; keep the two in step) ----
export const FS = { OFF: 0xa0000, END: 0x200000, BLK: 4096, NBLK: 352, NENT: 116, NAMEMAX: 53,
  MAGIC: 0x3146424b, NEXT: 16, ENT: 16 + 2 * 352, ENTSIZE: 64 };
const FREE = 0, END = 0xffff, T_FILE = 1, T_DIR = 2;

/** The host's side of the table: preload files before boot, read them back after a run. */
export class FlashFiles {
  constructor(flash) {
    this.flash = flash;
    this.dv = new DataView(flash.buffer, flash.byteOffset, flash.byteLength);
    const h = (i) => this.dv.getUint32(FS.OFF + 4 * i, true);
    if (h(0) !== FS.MAGIC || h(1) !== FS.NBLK || h(2) !== FS.NENT) this.format();
  }
  format() {
    const tableEnd = FS.OFF + FS.ENT + FS.NENT * FS.ENTSIZE;
    this.flash.fill(0xff, FS.OFF, FS.OFF + 2 * FS.BLK);
    this.flash.fill(0, FS.OFF, tableEnd);
    [FS.MAGIC, FS.NBLK, FS.NENT].forEach((v, i) => this.dv.setUint32(FS.OFF + 4 * i, v, true));
    this.setNext(0, END);
    this.setNext(1, END);
  }
  next(b) { return this.dv.getUint16(FS.OFF + FS.NEXT + 2 * b, true); }
  setNext(b, v) { this.dv.setUint16(FS.OFF + FS.NEXT + 2 * b, v, true); }
  entry(i) {
    const at = FS.OFF + FS.ENT + i * FS.ENTSIZE;
    const raw = this.flash.subarray(at, at + FS.NAMEMAX + 1);
    return { i, at, name: Buffer.from(raw.subarray(0, raw.indexOf(0))).toString("utf8"),
      type: this.flash[at + 54], size: this.dv.getUint32(at + 56, true),
      first: this.dv.getUint16(at + 60, true) };
  }
  entries() {
    const all = [];
    for (let i = 0; i < FS.NENT; i++) { const e = this.entry(i); if (e.type) all.push(e); }
    return all;
  }
  find(name) { return this.entries().find((e) => e.name === name) || null; }
  setEntry(i, name, type, size, first) {
    const at = FS.OFF + FS.ENT + i * FS.ENTSIZE;
    const b = Buffer.from(name, "utf8");
    if (!name.startsWith("/") || b.length > FS.NAMEMAX) {
      throw new Error(`${name}: a path in the file table is absolute and at most ${FS.NAMEMAX} bytes`);
    }
    this.flash.fill(0, at, at + FS.ENTSIZE);
    this.flash.set(b, at);
    this.flash[at + 54] = type;
    this.dv.setUint32(at + 56, size, true);
    this.dv.setUint16(at + 60, first, true);
  }
  freeSlot() {
    for (let i = 0; i < FS.NENT; i++) if (!this.entry(i).type) return i;
    throw new Error("the file table is full");
  }
  mkdir(name) {
    if (!this.find(name)) this.setEntry(this.freeSlot(), name, T_DIR, 0, END);
  }
  put(name, data) {
    let e = this.find(name);
    if (e && e.type === T_DIR) throw new Error(`${name} is a directory`);
    if (e) this.freeChain(e.first);
    const slot = e ? e.i : this.freeSlot();
    let first = END, last = END;
    for (let off = 0; off < data.length; off += FS.BLK) {
      let b = 2;
      while (b < FS.NBLK && this.next(b) !== FREE) b++;
      if (b === FS.NBLK) throw new Error(`no room left in the file table's flash for ${name}`);
      this.setNext(b, END);
      if (last === END) first = b; else this.setNext(last, b);
      last = b;
      const at = FS.OFF + b * FS.BLK;
      this.flash.fill(0xff, at, at + FS.BLK);
      this.flash.set(data.subarray(off, off + FS.BLK), at);
    }
    this.setEntry(slot, name, T_FILE, data.length, first);
  }
  freeChain(b) {
    while (b !== END && b !== FREE) { const n = this.next(b); this.setNext(b, FREE); b = n; }
  }
  get(name) {
    const e = this.find(name);
    if (!e || e.type !== T_FILE) return null;
    const out = Buffer.alloc(e.size);
    for (let off = 0, b = e.first; off < e.size; off += FS.BLK, b = this.next(b)) {
      const at = FS.OFF + b * FS.BLK;
      out.set(this.flash.subarray(at, at + Math.min(FS.BLK, e.size - off)), off);
    }
    return out;
  }
}

/**
 * Why `img` (the flash from FS.OFF to FS.END) is not a file table that fs.c can mount, or null.
 * A host file offered as a board's flash is checked with this before boot: fs.c trusts its table
 * (links and sizes index flash straight), so a corrupt one would read or free the wrong blocks.
 */
export function imageProblem(img) {
  const size = FS.END - FS.OFF;
  if (img.length !== size) return `${img.length} bytes where the file table's flash is ${size}`;
  const dv = new DataView(img.buffer, img.byteOffset, img.byteLength);
  if (dv.getUint32(0, true) !== FS.MAGIC || dv.getUint32(4, true) !== FS.NBLK ||
      dv.getUint32(8, true) !== FS.NENT) {
    return `no file table (the header is not KBF1, ${FS.NBLK} blocks, ${FS.NENT} entries)`;
  }
  const next = (b) => dv.getUint16(FS.NEXT + 2 * b, true);
  const block = (b) => b >= 2 && b < FS.NBLK;
  if (next(0) !== END || next(1) !== END) return "blocks 0-1 (the table's) are not reserved";
  for (let b = 2; b < FS.NBLK; b++) {
    const n = next(b);
    if (n !== FREE && n !== END && !block(n)) return `block ${b} links to ${n}`;
  }
  const owner = new Int16Array(FS.NBLK).fill(-1), names = new Set();
  for (let i = 0; i < FS.NENT; i++) {
    const at = FS.ENT + i * FS.ENTSIZE, type = img[at + 54];
    if (!type) continue;
    const nul = img.subarray(at, at + FS.NAMEMAX + 1).indexOf(0);
    const name = Buffer.from(img.subarray(at, at + Math.max(nul, 0))).toString("latin1");
    if (nul < 2 || name[0] !== "/" || names.has(name)) return `entry ${i}: a bad or repeated path`;
    names.add(name);
    const bytes = dv.getUint32(at + 56, true), first = dv.getUint16(at + 60, true);
    if (type === T_DIR) {
      if (bytes || first !== END) return `${name}: a directory with data`;
      continue;
    }
    if (type !== T_FILE) return `${name}: type ${type}`;
    let blocks = 0;
    for (let b = first; b !== END; b = next(b), blocks++) {
      if (!block(b) || owner[b] >= 0) {
        return `${name}: its chain meets block ${b} (free, foreign or a loop)`;
      }
      owner[b] = i;
    }
    if (blocks !== Math.ceil(bytes / FS.BLK)) return `${name}: ${bytes} bytes in ${blocks} blocks`;
  }
  return null;
}

// ---- the run slot (main.c's KB_RUN_SLOT) ----
export const RUN_SLOT = 0x200000;
export function writeRunSlot(flash, argv, source) {
  const strs = Buffer.concat(argv.map((a) => Buffer.from(a + "\0", "utf8")));
  const src = Buffer.from(source, "utf8");
  const head = Buffer.alloc(16);
  [0x4e52424b, argv.length, strs.length, src.length].forEach((v, i) => head.writeUInt32LE(v, 4 * i));
  flash.set(Buffer.concat([head, strs, src]), RUN_SLOT);
}

// ---- time: derived from the cycle counter (125 MHz), plus the time skipped while asleep ----
// rp2040js's own SimulationClock is ticked after every instruction; this one is not ticked at
// all: the stepping loop compares core.cycles with `due` and fires alarms then.
class CycleClock {
  constructor() {
    this.core = null;
    this.skew = 0;          // cycles slept through in WFI (the core's counter does not count them)
    this.alarms = new Set();
    this.due = Infinity;    // in core.cycles: when the next alarm fires
  }
  get now() { return this.core ? this.core.cycles + this.skew : 0; }
  get nanos() { return this.now * 8; }
  get micros() { return this.nanos / 1000; }
  createAlarm(callback) {
    const clock = this;
    return {
      at: 0,
      callback,
      schedule(deltaNanos) { this.at = clock.now + Math.ceil(deltaNanos / 8); clock.alarms.add(this); clock.update(); },
      cancel() { clock.alarms.delete(this); clock.update(); },
    };
  }
  update() {
    let at = Infinity;
    for (const a of this.alarms) if (a.at < at) at = a.at;
    this.due = at - this.skew;
  }
  fire() {
    for (let again = true; again;) {
      again = false;
      for (const a of this.alarms) {
        if (a.at <= this.now) { this.alarms.delete(a); a.callback(); again = true; break; }
      }
    }
    this.update();
  }
  /** Asleep with an alarm ahead: jump to it. False when no alarm is set. */
  skip() {
    if (!this.alarms.size) return false;
    this.skew += Math.max(0, this.due - this.core.cycles);
    this.fire();
    return true;
  }
}

/**
 * A Pico running firmware.bin. bootmode 0: the REPL on UART0; 1: run the script in the run slot.
 * onStdout(bytes) gets UART0's output at the end of every slice, onStderr(bytes) KbEmu's.
 * `firmware`: another image to boot (floor/run.mjs boots the bare-C programs).
 */
export async function createPico({ bootmode = 0, onStdout, onStderr, onFlashWrite,
  firmware = FIRMWARE }) {
  const { RP2040, BasePeripheral, ConsoleLogger, LogLevel } = await import("rp2040js");

  // The emulator's own register block (see the top of this file).
  class KbEmu extends BasePeripheral {
    constructor(mcu) {
      super(mcu, "KBEMU");
      this.exitCode = null;
      this.regs = { 0x14: 0, 0x18: 0, 0x1c: 0 };
      this.err = [];
    }
    readUint32(offset) {
      switch (offset) {
        case 0x00: return 0x4b42454d;                       // 'KBEM'
        case 0x04: return this.rp2040.core.cycles >>> 0;
        case 0x0c: return bootmode;
        case 0x14: case 0x18: case 0x1c: return this.regs[offset];
      }
      return 0;
    }
    writeUint32(offset, value) {
      switch (offset) {
        case 0x08: if (this.exitCode === null) this.exitCode = value & 0xff; break;
        case 0x10: this.err.push(value & 0xff); break;
        case 0x14: case 0x18: case 0x1c: this.regs[offset] = value >>> 0; break;
        case 0x20: this.flashCommand(value); break;
      }
    }
    flashCommand(cmd) {
      const off = this.regs[0x14], src = this.regs[0x18], len = this.regs[0x1c];
      const { flash } = this.rp2040;
      if (off < FS.OFF || off + len > FS.END || (cmd === 1 && (off | len) % FS.BLK)) {
        process.stderr.write(`kbemu: flash command ${cmd} at 0x${off.toString(16)}+${len} refused\n`);
        return;
      }
      if (cmd === 1) flash.fill(0xff, off, off + len);              // erase: sectors to 0xFF
      else if (cmd === 2) {                                        // program: bits 1 -> 0 only
        const mcu = this.rp2040;
        for (let i = 0; i < len; i++) flash[off + i] &= mcu.readUint8(src + i);
      }
      if (onFlashWrite) onFlashWrite(off, len, cmd);
    }
  }

  const clock = new CycleClock();
  const mcu = new RP2040(clock);
  clock.core = mcu.core;
  mcu.logger = new ConsoleLogger(LogLevel.Warn, true);  // Info/Debug would go to stdout
  const kb = new KbEmu(mcu);
  mcu.peripherals[(0x40070000 >>> 14) << 2] = kb;
  mcu.flash.set(fs.readFileSync(firmware), 0);
  const out = [];
  mcu.uart[0].onByte = (b) => out.push(b);
  const core = mcu.core;

  const pico = {
    mcu, core, kb, clock,
    files: new FlashFiles(mcu.flash),
    boot() {
      core.VTOR = 0x10000000;  // no bootrom, no boot2: the vector table at the start of flash
      core.reset();            // SP and PC from it
    },
    /** Bytes to UART0's receive FIFO while it has room (32 entries); how many were taken. */
    feed(buf, pos) {
      const uart = mcu.uart[0];
      let n = 0;
      while (pos + n < buf.length && !uart.rxFIFO.full) uart.feedByte(buf[pos + n++]);
      return n;
    },
    flush() {
      if (out.length) { onStdout(Buffer.from(out)); out.length = 0; }
      if (kb.err.length) { onStderr(Buffer.from(kb.err)); kb.err.length = 0; }
    },
    /**
     * Run up to `budget` instructions. Returns "exit" (KbEmu's exit register was written and
     * the core sleeps), "idle" (asleep in WFI with no interrupt pending and no alarm ahead: it
     * waits for UART input) or "run".
     */
    step(budget) {
      const end = core.cycles + budget;
      while (core.cycles < end) {
        if (core.waiting) {
          if ((core.pendingInterrupts & core.enabledInterrupts) && core.checkForInterrupts()) {
            core.waiting = false;
            continue;
          }
          if (kb.exitCode !== null) return "exit";
          if (clock.skip()) continue;
          return "idle";
        }
        while (!core.waiting && core.cycles < end) {
          core.executeInstruction();
          if (core.cycles >= clock.due) clock.fire();
        }
      }
      return kb.exitCode !== null && core.waiting ? "exit" : "run";
    },
  };
  return pico;
}

/** Write all of buf to a descriptor, synchronously (stdout may be a non-blocking pipe). */
const nap = new Int32Array(new SharedArrayBuffer(4));
export function writeAll(fd, buf) {
  for (let off = 0; off < buf.length;) {
    try {
      off += fs.writeSync(fd, buf, off, buf.length - off);
    } catch (e) {
      if (e.code === "EAGAIN") { Atomics.wait(nap, 0, 0, 2); continue; }
      if (e.code === "EPIPE") process.exit(process.exitCode || 0);
      throw e;
    }
  }
}
