#!/usr/bin/env node
// A virtual Pico: MicroPython 1.23's core on kilobit's minimal RP2040 port (not the official rp2
// firmware), emulated by rp2040js, its UART0 as raw bytes on stdin/stdout, so that kilobit's
// `board virtual` can put it behind a pty for the real mpremote (run, exec, cp, ls, rm, repl).
//
//   node tools/pico/board.mjs [--name NAME]
//
//   --name NAME   keep this board's file table in build/pico/boards/NAME.fs: loaded at start,
//                 saved whenever the firmware rewrites the table and at the end; without it the
//                 files live as long as this process.
//
// The firmware does all a board does itself: friendly and raw REPL (raw paste too), Ctrl-C,
// Ctrl-D soft reset ("MPY: soft reboot", fresh heap, files kept, back in the REPL mode it was
// in). stdin goes to UART0's 32-byte receive FIFO as fast as it has room; the emulator runs in
// slices and sleeps while the firmware waits in WFI for input. kbemu.exit(n) ends the process
// with status n; end of stdin ends it (after the firmware has taken all the input and gone idle).
// Give this process pipes, not a tty (a tty would turn \n into \r\r\n).
import fs from "node:fs";
import path from "node:path";
import { REPO, FS, FlashFiles, missing, createPico, writeAll } from "./emu.mjs";

function usage(msg) {
  process.stderr.write(`board.mjs: ${msg}\nusage: node board.mjs [--name NAME]\n`);
  process.exit(2);
}

let image = null;
const argv = process.argv.slice(2);
while (argv.length) {
  const a = argv.shift();
  if (a === "--name") {
    const name = argv.shift() || "";
    if (!/^[A-Za-z0-9_.-]+$/.test(name) || name.startsWith(".")) usage(`bad board name "${name}"`);
    image = path.join(REPO, "build", "pico", "boards", `${name}.fs`);
  } else usage(`unknown argument ${a}`);
}
const miss = missing();
if (miss) {
  process.stderr.write(`board.mjs: ${miss}\n`);
  process.exit(2);
}

// the saved image is rewritten when the table changes (files are closed, removed, renamed...),
// not after every data write, and at the end
let dirty = false, written = false;
const pico = await createPico({
  bootmode: 0,
  onStdout: (b) => writeAll(1, b),
  onStderr: (b) => writeAll(2, b),
  onFlashWrite: (off) => { written = true; if (off < FS.OFF + 2 * FS.BLK) dirty = true; },
});
const flash = pico.mcu.flash;
if (image && fs.existsSync(image)) {
  const saved = fs.readFileSync(image);
  if (saved.length === FS.END - FS.OFF) flash.set(saved, FS.OFF);
} else dirty = image !== null;
new FlashFiles(flash).mkdir("/lib");  // a fresh board has /lib (a saved one keeps its table)
function save(last) {
  if (!image || !(dirty || (last && written))) return;
  fs.mkdirSync(path.dirname(image), { recursive: true });
  fs.writeFileSync(image + ".tmp", flash.subarray(FS.OFF, FS.END));
  fs.renameSync(image + ".tmp", image);
  dirty = written = false;
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
  save(true);
  process.exit(status);
}

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
  save();
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
