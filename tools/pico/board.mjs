#!/usr/bin/env node
// A virtual Pico: MicroPython 1.23's core on kilobit's minimal RP2040 port (not the official rp2
// firmware), emulated by rp2040js, its UART0 as raw bytes on stdin/stdout, so that kilobit's
// `board virtual` can put it behind a pty for the real mpremote (run, exec, cp, ls, rm, repl).
//
//   node tools/pico/board.mjs [--flash FILE | --name NAME] [--power-cut N] [--check]
//
//   --flash FILE    keep this board's flash (its file table, flash 0x0A0000-0x200000, 1408 KiB)
//                   in FILE: loaded at start when FILE exists, written (a temporary file in
//                   FILE's folder, then renamed over FILE) at every filesystem update, that is
//                   whenever the firmware rewrites its table: a written file closed or flushed,
//                   remove, rename, mkdir, rmdir. FILE therefore always holds the filesystem as it
//                   was at the last update, whatever ends this process (end of stdin, a signal,
//                   SIGKILL, the death of the process that started it). A FILE that exists must
//                   be a regular file (a symlink is followed) holding such an image (status 2,
//                   one line on stderr, before anything runs); so must FILE's folder be writable.
//   --name NAME     the same with FILE = build/pico/boards/NAME.fs.
//   --power-cut N   lose power just after the N-th filesystem update since start: FILE keeps
//                   that update, the emulation stops there, status 4.
//   --check         only check FILE (and that it can be written) and exit: 0, or 2 and why.
//   Without --flash/--name the files live as long as this process.
//
// The firmware does all a board does itself: friendly and raw REPL (raw paste too), Ctrl-C,
// Ctrl-D soft reset ("MPY: soft reboot", fresh heap, files kept, back in the REPL mode it was
// in). stdin goes to UART0's 32-byte receive FIFO as fast as it has room; the emulator runs in
// slices and sleeps while the firmware waits in WFI for input. kbemu.exit(n) ends the process
// with status n; end of stdin ends it (after the firmware has taken all the input and gone idle);
// SIGTERM, SIGINT and SIGHUP end it at once (status 128 + the signal's number). Should the process
// that started this one die, this one stops at once as well (status 4), as a board whose power
// came from it: else it would run on, unseen, and keep writing FILE.
// Give this process pipes, not a tty (a tty would turn \n into \r\r\n).
import fs from "node:fs";
import path from "node:path";
import { BUILD_ROOT, FS, FlashFiles, imageProblem, missing, createPico, writeAll } from "./emu.mjs";

const POWER_CUT = 4;

function refuse(msg) {
  process.stderr.write(`board.mjs: ${msg}\n`);
  process.exit(2);
}

function usage(msg) {
  refuse(`${msg}\nusage: node board.mjs [--flash FILE | --name NAME] [--power-cut N] [--check]`);
}

/** What went wrong, in strerror's words (node's messages also name the syscall and path). */
const why = (e) => (/^[A-Z]+: ([^,]+)/.exec(e.message) || [null, e.message])[1];

/**
 * The board's flash in a host file. Every save goes to a temporary file beside FILE, renamed
 * over it, so that a process killed mid-save leaves the previous image whole (and at worst a
 * stray .FILE.PID.tmp); a name that is anything but a regular file is never replaced.
 */
class FlashFile {
  constructor(file) {
    let st = null;
    try {
      st = fs.lstatSync(file);
      if (st.isSymbolicLink()) {
        file = fs.realpathSync(file);
        st = fs.statSync(file);
      }
    } catch (e) {
      if (e.code !== "ENOENT" || st) refuse(`cannot use --flash ${file}: ${why(e)}`);
      st = null;
    }
    if (st && !st.isFile()) refuse(`--flash ${file} is not a regular file`);
    this.file = file;
    this.mode = st ? st.mode & 0o777 : 0o644;
    this.tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
    this.image = null;
    if (st) {
      try {
        fs.accessSync(file, fs.constants.W_OK);
        this.image = fs.readFileSync(file);
      } catch (e) {
        refuse(`cannot use --flash ${file}: ${why(e)}`);
      }
      const bad = imageProblem(this.image);
      if (bad) refuse(`--flash ${file} is not a flash image of the emulated Pico: ${bad}`);
    }
    try {  // the folder must take the temporary file, or no save would ever succeed
      fs.closeSync(this.create());
      fs.unlinkSync(this.tmp);
    } catch (e) {
      refuse(`cannot write --flash ${file} (in ${path.dirname(file)}): ${why(e)}`);
    }
  }
  create() {
    try {
      fs.unlinkSync(this.tmp);  // a dead process's of the same pid (unlink never follows a link)
    } catch (e) {
      if (e.code !== "ENOENT") throw e;
    }
    return fs.openSync(this.tmp, "wx", this.mode);
  }
  save(region) {
    const fd = this.create();
    try {
      for (let off = 0; off < region.length;) off += fs.writeSync(fd, region, off);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(this.tmp, this.file);
  }
}

let store = null, cutAt = 0, checkOnly = false;
const argv = process.argv.slice(2);
while (argv.length) {
  const a = argv.shift();
  if (a === "--flash") {
    const file = argv.shift();
    if (!file) usage("--flash needs FILE");
    store = file;
  } else if (a === "--name") {
    const name = argv.shift() || "";
    if (!/^[A-Za-z0-9_.-]+$/.test(name) || name.startsWith(".")) usage(`bad board name "${name}"`);
    store = path.join(BUILD_ROOT, "pico", "boards", `${name}.fs`);
    fs.mkdirSync(path.dirname(store), { recursive: true });
  } else if (a === "--power-cut") {
    cutAt = Number(argv.shift());
    if (!Number.isInteger(cutAt) || cutAt < 1) usage("--power-cut needs a count of updates >= 1");
  } else if (a === "--check") checkOnly = true;
  else usage(`unknown argument ${a}`);
}
if (store !== null) store = new FlashFile(store);
if (checkOnly) process.exit(0);
const miss = missing();
if (miss) refuse(miss);

let updates = 0;
function persist() {
  if (!store) return;
  try {
    store.save(flash.subarray(FS.OFF, FS.END));
  } catch (e) {  // a board that silently stopped keeping its files would be worse than none
    pico.flush();
    process.stderr.write(`board.mjs: cannot write --flash ${store.file}: ${why(e)}; stopped\n`);
    process.exit(3);
  }
}
// fs.c ends every table rewrite by programming the table at FS.OFF: the filesystem is whole
// there, so that is the moment to save (before the firmware runs on, and so before its answer
// reaches the host: once mpremote sees a command done, FILE has its effect).
function onFlashWrite(off, len, cmd) {
  if (cmd !== 2 || off !== FS.OFF) return;
  persist();
  if (++updates === cutAt) {
    pico.flush();
    process.stderr.write(`board.mjs: power cut after filesystem update ${updates} (--power-cut)\n`);
    process.exit(POWER_CUT);
  }
}
const pico = await createPico({
  bootmode: 0,
  onStdout: (b) => writeAll(1, b),
  onStderr: (b) => writeAll(2, b),
  onFlashWrite,
});
const flash = pico.mcu.flash;
if (store && store.image) flash.set(store.image, FS.OFF);
else {
  new FlashFiles(flash).mkdir("/lib");  // a fresh board has /lib
  persist();
}

const input = { chunks: [], pos: 0, ended: false, wake: null };
const poke = () => { if (input.wake) { const w = input.wake; input.wake = null; w(); } };
process.stdin.on("data", (d) => { input.chunks.push(d); poke(); });
process.stdin.on("end", () => { input.ended = true; poke(); });
process.stdin.on("error", () => { input.ended = true; poke(); });
function feedInput() {
  while (input.chunks.length) {
    input.pos += pico.feed(input.chunks[0], input.pos);
    if (input.pos < input.chunks[0].length) return;
    input.chunks.shift();
    input.pos = 0;
  }
}

function finish(status) {
  pico.flush();
  process.exit(status);
}
// signals wait for the slice under way, so a save is never cut in half by one
for (const [sig, n] of [["SIGTERM", 15], ["SIGINT", 2], ["SIGHUP", 1]]) {
  process.on(sig, () => finish(128 + n));
}
const PARENT = process.ppid;

const SLICE = 2000000;  // cycles between looks at stdin (~25 ms of wall time)
pico.boot();
for (;;) {
  feedInput();
  let state;
  try {
    state = pico.step(SLICE);
  } catch (e) {
    pico.flush();
    process.stderr.write(`board.mjs: the emulator stopped: ${e.message}\n`);
    finish(3);
  }
  pico.flush();
  if (process.ppid !== PARENT) process.exit(POWER_CUT);
  if (state === "exit") finish(pico.kb.exitCode);
  if (state === "idle") {
    feedInput();
    if (!pico.core.waiting) continue;
    if (input.ended && !input.chunks.length) finish(0);
    await new Promise((r) => { input.wake = r; });  // nothing to do until input arrives
  } else {
    await new Promise((r) => setImmediate(r));
  }
}
