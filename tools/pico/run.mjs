#!/usr/bin/env node
// Run a script on the emulated Pico: MicroPython 1.23's core on kilobit's minimal RP2040 port
// (build/pico/firmware.bin, `make -C tools/pico`), under rp2040js; not the official rp2
// firmware. The contract of tools/mpwasm/run.mjs:
//
//   node tools/pico/run.mjs [options] script.py [args...]     (sys.argv = [script.py, args...])
//   node tools/pico/run.mjs [options] -c "python code" [args...]
//
// options:
//   --pkg DIR           copy the package DIR to /lib/<name of DIR> (repeatable; default
//                       device/kbit of this repository). Only its *.py files are copied.
//   --mpy               compile the packages with mpy-cross -march=armv6m, copy .mpy files
//   --mpy-cross CMD     mpy-cross command (default: $MPY_CROSS or "mpy-cross")
//   --file FS=HOST      put the host file HOST into the flash file table at FS before boot
//   --out FS=HOST       after the run (also after a failure), copy FS back to HOST if it exists
//   --timeout-s S       stop a firmware still running after S seconds of wall time (default
//                       600): a message on stderr, exit status 124
//
// The firmware boots in run mode (KbEmu's boot-mode word): it compiles and runs the script from
// the run slot and writes its exit status to KbEmu. stdout of the script is UART0 (streamed);
// an uncaught exception prints MicroPython's traceback to stderr and exits 1; sys.exit(n) exits
// n; sys.stdin reads this process's stdin (read only once the script waits for input).
// Exit status 2: bad usage or a missing emulator/firmware (one line naming what to do).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO, missing, createPico, writeRunSlot, writeAll } from "./emu.mjs";

function usage(msg) {
  process.stderr.write(`run.mjs: ${msg}\nusage: node run.mjs [--pkg DIR]... [--mpy] [--mpy-cross CMD] ` +
    "[--file FS=HOST]... [--out FS=HOST]... [--timeout-s S] (script.py | -c CODE) [args...]\n");
  process.exit(2);
}

function pair(s) {
  const i = s.indexOf("=");
  if (i <= 0) usage(`expected FS=HOST, got ${s}`);
  const fsPath = s.slice(0, i);
  return [fsPath.startsWith("/") ? fsPath : "/" + fsPath, s.slice(i + 1)];
}

const opt = { pkgs: [], mpy: false, files: [], outs: [], timeout: 600,
  mpyCross: process.env.MPY_CROSS || "mpy-cross" };
const argv = process.argv.slice(2);
let script = null, code = null;
while (argv.length) {
  const a = argv.shift();
  if (a === "--pkg") opt.pkgs.push(path.resolve(argv.shift() || usage("--pkg needs DIR")));
  else if (a === "--mpy") opt.mpy = true;
  else if (a === "--mpy-cross") opt.mpyCross = argv.shift() || usage("--mpy-cross needs CMD");
  else if (a === "--file") opt.files.push(pair(argv.shift() || ""));
  else if (a === "--out") opt.outs.push(pair(argv.shift() || ""));
  else if (a === "--timeout-s") {
    opt.timeout = Number(argv.shift());
    if (!(opt.timeout > 0)) usage("--timeout-s needs a positive number of seconds");
  } else if (a === "-c") { code = argv.shift(); if (code === undefined) usage("-c needs CODE"); break; }
  else if (a.startsWith("--")) usage(`unknown option ${a}`);
  else { script = a; break; }
}
if (script === null && code === null) usage("no script");
// kilobit says where kbit is (an installed wheel has no device/kbit beside tools/)
if (!opt.pkgs.length) opt.pkgs.push(process.env.KILOBIT_KBIT || path.join(REPO, "device", "kbit"));
const miss = missing();
if (miss) {
  process.stderr.write(`run.mjs: ${miss}\n`);
  process.exit(2);
}
let source = code;
if (source === null) {
  try {
    source = fs.readFileSync(script, "utf8");
  } catch (e) {
    usage(`cannot read ${script}: ${e.message}`);
  }
}
const progName = code !== null ? "-c" : script;

const pico = await createPico({
  bootmode: 1,
  onStdout: (b) => writeAll(1, b),
  onStderr: (b) => writeAll(2, b),
});
const files = pico.files;

// the packages and files, in the flash file table before boot
files.mkdir("/lib");
let tmp = null;
for (const pkg of opt.pkgs) {
  const name = path.basename(pkg);
  files.mkdir(`/lib/${name}`);
  for (const f of fs.readdirSync(pkg).sort()) {
    if (!f.endsWith(".py")) continue;
    const src = path.join(pkg, f);
    if (opt.mpy) {
      tmp = tmp || fs.mkdtempSync(path.join(os.tmpdir(), "pico-"));
      const dst = path.join(tmp, `${name}-${f.slice(0, -3)}.mpy`);
      try {
        execFileSync(opt.mpyCross, ["-march=armv6m", "-o", dst, "-s", `${name}/${f}`, src],
          { stdio: ["ignore", "ignore", "pipe"] });
      } catch (e) {
        process.stderr.write(`run.mjs: ${opt.mpyCross} failed on ${src}: ${e.stderr || e.message}\n`);
        process.exit(2);
      }
      files.put(`/lib/${name}/${f.slice(0, -3)}.mpy`, fs.readFileSync(dst));
    } else {
      files.put(`/lib/${name}/${f}`, fs.readFileSync(src));
    }
  }
}
if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
for (const [dst, src] of opt.files) files.put(dst, fs.readFileSync(src));
writeRunSlot(pico.mcu.flash, [progName, ...argv], source);

// stdin, only once the firmware waits for it
const input = { chunks: [], pos: 0, ended: false, started: false, wake: null };
function startInput() {
  input.started = true;
  process.stdin.on("data", (d) => { input.chunks.push(d); if (input.wake) input.wake(); });
  process.stdin.on("end", () => { input.ended = true; if (input.wake) input.wake(); });
  process.stdin.on("error", () => { input.ended = true; if (input.wake) input.wake(); });
}
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
  for (const [src, dst] of opt.outs) {
    const data = files.get(src);
    if (data !== null) fs.writeFileSync(dst, data);
  }
  process.exit(status);
}

const deadline = Date.now() + opt.timeout * 1000;
const SLICE = 4000000;  // cycles between looks at the outside world (~30 ms of wall time)
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
  if (Date.now() > deadline) {
    process.stderr.write(`run.mjs: timed out after ${opt.timeout} s: the firmware had not finished ` +
      `(${pico.core.cycles} cycles emulated)\n`);
    finish(124);
  }
  if (state === "idle") {  // asleep with nothing ahead: the script reads stdin
    if (!input.started) startInput();
    feedInput();
    if (!pico.core.waiting) continue;
    if (input.ended) {
      process.stderr.write("run.mjs: the script waits for input after the end of stdin\n");
      finish(1);
    }
    await new Promise((r) => {
      input.wake = r;
      setTimeout(r, Math.max(0, deadline - Date.now()) + 10);
    });
    input.wake = null;
    feedInput();
  } else {
    await new Promise((r) => setImmediate(r));
  }
}
