#!/usr/bin/env node
// Run one of the bare-C programs of tools/pico/floor (firmware_c's kernels without MicroPython,
// build/pico-floor/*.bin from `make -C tools/pico/floor`) on the emulated Pico (emu.mjs).
//
//   node tools/pico/floor/run.mjs [--times FILE] [--timeout-s S] PROGRAM [MODEL.kb] < steps
//
// PROGRAM: learner, predict, assoc (the replays of firmware_c/host's kb_replay, kb_predict,
// kb_assoc_replay), calib (the calibration loops; no model, no steps), or a path to an image.
// The model file and the steps (stdin, read whole) go into flash at 2 MiB before boot
// (floor/floor.h's layout). UART0 is the program's stdout, KbEmu's byte channel its stderr, and
// UART1, the per-step cycles, goes to --times FILE ("overhead N", then one number a line).
// Exit status: the program's own (0 ok, 2 model refused, 3 malformed step, 4 assoc class
// capacity full); 2 also for bad usage or a missing emulator/image (one line saying what to do),
// 3 when the emulator stopped on an error, 124 after --timeout-s seconds (default 600).
import fs from "node:fs";
import path from "node:path";
import { BUILD_ROOT, REPO, RUN_SLOT, createPico, writeAll } from "../emu.mjs";

const HERE = path.dirname(new URL(import.meta.url).pathname);
const BUILD = path.join(BUILD_ROOT, "pico-floor");
const RP2040JS = path.join(HERE, "..", "node_modules", "rp2040js", "package.json");
const PROGRAMS = ["learner", "predict", "assoc", "calib"];

function usage(msg) {
  process.stderr.write(`run.mjs: ${msg}\nusage: node tools/pico/floor/run.mjs [--times FILE] ` +
    `[--timeout-s S] (${PROGRAMS.join("|")}|IMAGE.bin) [MODEL.kb] < steps\n`);
  process.exit(2);
}

const argv = process.argv.slice(2);
const opt = { times: null, timeout: 600 };
while (argv.length && argv[0].startsWith("--")) {
  const a = argv.shift();
  if (a === "--times") opt.times = argv.shift() || usage("--times needs FILE");
  else if (a === "--timeout-s") {
    opt.timeout = Number(argv.shift());
    if (!(opt.timeout > 0)) usage("--timeout-s needs a positive number of seconds");
  } else usage(`unknown option ${a}`);
}
const [program, modelPath] = argv;
if (!program) usage("no program");
if (argv.length > 2) usage("too many arguments");
const image = PROGRAMS.includes(program) ? path.join(BUILD, `${program}.bin`) : program;
if (!fs.existsSync(RP2040JS)) {
  process.stderr.write("run.mjs: npm package rp2040js missing (bash scripts/setup.sh, or: " +
    "cd tools/pico && npm ci)\n");
  process.exit(2);
}
if (!fs.existsSync(image)) {
  process.stderr.write(`run.mjs: ${path.relative(REPO, image)} missing (make -C tools/pico/floor)\n`);
  process.exit(2);
}
let model = Buffer.alloc(0), steps = Buffer.alloc(0);
if (program !== "calib") {
  if (!modelPath) usage(`${program} needs MODEL.kb`);
  try {
    model = fs.readFileSync(modelPath);
  } catch (e) {
    usage(`cannot read ${modelPath}: ${e.message}`);
  }
  steps = fs.readFileSync(0);
}

const times = [];
const pico = await createPico({
  firmware: image,
  onStdout: (b) => writeAll(1, b),
  onStderr: (b) => writeAll(2, b),
});
pico.mcu.uart[1].onByte = (b) => times.push(b);

// the input (floor.h): 'KBFL', model bytes, steps bytes; the model padded to 4; the steps + NUL
const head = Buffer.alloc(12);
[0x4c46424b, model.length, steps.length].forEach((v, i) => head.writeUInt32LE(v, 4 * i));
const pad = Buffer.alloc((4 - (model.length % 4)) % 4);
const input = Buffer.concat([head, model, pad, steps, Buffer.alloc(1)]);
if (RUN_SLOT + input.length > pico.mcu.flash.length) usage("model and steps do not fit the flash");
pico.mcu.flash.set(input, RUN_SLOT);

function finish(status) {
  pico.flush();
  if (opt.times) fs.writeFileSync(opt.times, Buffer.from(times));
  process.exit(status);
}

const deadline = Date.now() + opt.timeout * 1000;
const SLICE = 4000000;  // cycles between looks at the clock and the output (~50 ms of wall time)
pico.boot();
for (;;) {
  let state;
  try {
    state = pico.step(SLICE);
  } catch (e) {
    pico.flush();
    process.stderr.write(`run.mjs: the emulator stopped: ${e.message}\n`);
    finish(3);
  }
  pico.flush();
  if (state === "exit") finish(pico.kb.exitCode);
  if (state === "idle") {
    process.stderr.write("run.mjs: the program sleeps with nothing to wake it\n");
    finish(3);
  }
  if (Date.now() > deadline) {
    process.stderr.write(`run.mjs: timed out after ${opt.timeout} s (${pico.core.cycles} cycles ` +
      "emulated)\n");
    finish(124);
  }
}
