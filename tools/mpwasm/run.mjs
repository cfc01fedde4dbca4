#!/usr/bin/env node
// Run a script on the MicroPython WebAssembly build (a stand-in board for kilobit's tests).
//
//   node tools/mpwasm/run.mjs [options] script.py [args...]     (sys.argv = [script.py, args...])
//   node tools/mpwasm/run.mjs [options] -c "python code" [args...]
//
// options:
//   --heapsize N[k|m]   initial MicroPython heap (default 256k; this build grows it on demand)
//   --pkg DIR           copy the package DIR to /lib/<name of DIR> (repeatable; default
//                       device/kbit of this repository). Only *.py files are copied.
//   --mpy               compile the packages with mpy-cross and copy .mpy files instead
//   --mpy-cross CMD     mpy-cross command (default: $MPY_CROSS or "mpy-cross")
//   --file FS=HOST      copy the host file HOST into the MicroPython filesystem at FS
//   --out FS=HOST       after the run (also after a failure), copy FS back to HOST if it exists
//
// stdout of the Python code is streamed to stdout (flushed per line); sys.stdin reads this
// process's stdin (blocking); an uncaught exception prints MicroPython's traceback to stderr and
// exits 1; sys.exit(n) exits n.
//
// This build's gc.collect() only marks a collection pending: it runs when control is back at
// the top level (no C stack to scan). A script line "#mpwasm: top-level" splits the script into
// parts run one after the other (same globals, line numbers kept), so that a gc.collect() just
// before such a line has really collected when the next part starts.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..", "..");
const MP = path.join(HERE, "node_modules", "@micropython", "micropython-webassembly-pyscript",
  "micropython.mjs");

function usage(msg) {
  process.stderr.write(`run.mjs: ${msg}\nusage: node run.mjs [--heapsize N] [--pkg DIR]... [--mpy] ` +
    "[--file FS=HOST]... [--out FS=HOST]... (script.py | -c CODE) [args...]\n");
  process.exit(2);
}

function parseSize(s) {
  const m = /^(\d+)([kKmM]?)$/.exec(s);
  if (!m) usage(`bad size ${s}`);
  return parseInt(m[1], 10) * ({ k: 1024, m: 1048576 }[m[2].toLowerCase()] || 1);
}

function pair(s) {
  const i = s.indexOf("=");
  if (i <= 0) usage(`expected FS=HOST, got ${s}`);
  return [s.slice(0, i), s.slice(i + 1)];
}

const opt = { heapsize: 256 * 1024, pkgs: [], mpy: false, files: [], outs: [],
  mpyCross: process.env.MPY_CROSS || "mpy-cross" };
const argv = process.argv.slice(2);
let script = null, code = null;
while (argv.length) {
  const a = argv.shift();
  if (a === "--heapsize") opt.heapsize = parseSize(argv.shift() || "");
  else if (a === "--pkg") opt.pkgs.push(path.resolve(argv.shift() || usage("--pkg needs DIR")));
  else if (a === "--mpy") opt.mpy = true;
  else if (a === "--mpy-cross") opt.mpyCross = argv.shift();
  else if (a === "--file") opt.files.push(pair(argv.shift() || ""));
  else if (a === "--out") opt.outs.push(pair(argv.shift() || ""));
  else if (a === "-c") { code = argv.shift(); if (code === undefined) usage("-c needs CODE"); break; }
  else if (a.startsWith("--")) usage(`unknown option ${a}`);
  else { script = a; break; }
}
if (script === null && code === null) usage("no script");
// kilobit says where kbit is (an installed wheel has no device/kbit beside tools/)
if (!opt.pkgs.length) opt.pkgs.push(process.env.KILOBIT_KBIT || path.join(REPO, "device", "kbit"));
if (!fs.existsSync(MP)) {
  process.stderr.write(`run.mjs: ${MP} missing (cd tools/mpwasm && npm ci)\n`);
  process.exit(2);
}
const source = code !== null ? code : fs.readFileSync(script, "utf8");
const progName = code !== null ? "-c" : script;

// stdout: the build calls us once per byte; gather a line, then write it.
const out = { buf: Buffer.alloc(1 << 16), len: 0, closed: false };
process.stdout.on("error", (e) => {
  if (e.code !== "EPIPE") throw e;
  out.closed = true;  // the reader went away (e.g. | head): stop quietly
  process.exit(process.exitCode || 0);
});
function flush() {
  if (out.len && !out.closed) process.stdout.write(Buffer.from(out.buf.subarray(0, out.len)));
  out.len = 0;
}
function putc(u8) {
  out.buf[out.len++] = u8[0];
  if (u8[0] === 10 || out.len === out.buf.length) flush();
}

// stdin: the build asks for one byte at a time (null at end of input).
const inBuf = Buffer.alloc(1);
const nap = new Int32Array(new SharedArrayBuffer(4));
function getc() {
  for (;;) {
    try {
      return fs.readSync(0, inBuf, 0, 1, null) ? inBuf[0] : null;
    } catch (e) {
      if (e.code === "EAGAIN") { Atomics.wait(nap, 0, 0, 5); continue; }  // non-blocking fd
      if (e.code === "EOF") return null;
      throw e;
    }
  }
}

const { loadMicroPython } = await import(MP);
const mp = await loadMicroPython({ heapsize: opt.heapsize, stdin: getc, stdout: putc,
  stderr: (u8) => process.stderr.write(u8), linebuffer: false });
const FS = mp.FS;

function mkdirs(dir) {
  let cur = "";
  for (const part of dir.split("/").filter(Boolean)) {
    cur += "/" + part;
    try { FS.mkdir(cur); } catch (e) { /* exists */ }
  }
}

let tmp = null;
for (const pkg of opt.pkgs) {
  const name = path.basename(pkg);
  mkdirs(`/lib/${name}`);
  for (const f of fs.readdirSync(pkg).sort()) {
    if (!f.endsWith(".py")) continue;
    const src = path.join(pkg, f);
    if (opt.mpy) {
      tmp = tmp || fs.mkdtempSync(path.join(os.tmpdir(), "mpwasm-"));
      const dst = path.join(tmp, `${name}-${f.slice(0, -3)}.mpy`);
      try {
        execFileSync(opt.mpyCross, ["-o", dst, "-s", `${name}/${f}`, src], { stdio: ["ignore", "ignore", "pipe"] });
      } catch (e) {
        process.stderr.write(`run.mjs: ${opt.mpyCross} failed on ${src}: ${e.stderr || e.message}\n`);
        process.exit(2);
      }
      FS.writeFile(`/lib/${name}/${f.slice(0, -3)}.mpy`, fs.readFileSync(dst));
    } else {
      FS.writeFile(`/lib/${name}/${f}`, fs.readFileSync(src));
    }
  }
}
if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
for (const [dst, src] of opt.files) {
  mkdirs(path.posix.dirname(dst));
  FS.writeFile(dst, fs.readFileSync(src));
}

let status = 0;
try {
  mp.runPython("import sys\nif '/lib' not in sys.path: sys.path.append('/lib')\n" +
    `sys.argv[:] = ${JSON.stringify([progName, ...argv])}\ndel sys`);
  let line = 0;
  for (const part of source.split(/^#mpwasm: top-level[ \t]*$/m)) {
    mp.runPython("\n".repeat(line) + part);  // padded: tracebacks keep the script's line numbers
    line += part.split("\n").length - 1;
  }
} catch (e) {
  if (e.name !== "PythonError") throw e;
  const msg = String(e.message).replaceAll('File "<stdin>"', `File "${progName}"`);
  if (e.type === "SystemExit") {
    const arg = msg.trimEnd().split("\n").pop().replace(/^SystemExit:? ?/, "");
    if (arg === "" || arg === "None") status = 0;
    else if (/^-?\d+$/.test(arg)) status = parseInt(arg, 10) & 0xff;
    else { flush(); process.stderr.write(arg + "\n"); status = 1; }
  } else {
    flush();
    process.stderr.write(msg);
    status = 1;
  }
}
flush();
for (const [src, dst] of opt.outs) {
  let data = null;
  try { data = FS.readFile(src); } catch (e) { /* not written */ }
  if (data !== null) fs.writeFileSync(dst, data);
}
process.exitCode = status;
