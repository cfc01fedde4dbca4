#!/usr/bin/env node
// A virtual MicroPython board: the 1.27 WebAssembly build's REPL on stdin/stdout, byte for byte,
// as a board's USB serial port would carry it. kilobit's `kilobit board virtual` puts it behind
// a pty (or a TCP socket) so that the real mpremote drives it (run, exec, cp, ls, repl ...).
//
//   node tools/mpwasm/board.mjs [--heapsize N[k|m]] [--name NAME]
//
// What it does beyond the build's own replInit() + replProcessCharWithAsyncify(ch):
//  - soft reset (Ctrl-D at an empty friendly or raw REPL, or sys.exit()): prints
//    "MPY: soft reboot", starts a fresh MicroPython (new heap, nothing imported) that keeps the
//    filesystem, and returns to the REPL mode it was in, as a board does. So mpremote works
//    without `resume`.
//  - the filesystem: a board's (/ with /lib); Emscripten's /dev and /proc are left out of
//    listings of / (they stay usable), /tmp and /home are removed. Files survive soft resets.
//  - errno: this build's filesystem raises Emscripten's errno numbers (ENOENT is 44, not 2).
//    At every boot, os (sys.modules["os"]) and open() are wrapped so that their OSErrors carry
//    MicroPython's numbers (ENOENT 2, EEXIST 17, ...), as on a board; mpremote's file commands
//    rely on that ("OSError: [Errno 2] ENOENT").
//  - output: a bare \n becomes \r\n, as a board's print() writes it (this build's print() writes
//    \n alone); so binary written to sys.stdout.buffer is not byte-exact here. Give this process
//    pipes, not a tty (a tty would turn \n into \r\r\n).
//  - raw-paste mode: the build's raw REPL hangs on the raw-paste request (Ctrl-E A Ctrl-A: it
//    waits for input its event-driven REPL cannot give), so raw paste is done here: the request
//    is answered "R\x01" + a window size, the code is taken (with a Ctrl-A window
//    acknowledgement per window) up to Ctrl-D, acknowledged with Ctrl-D, and then fed to the raw
//    REPL as a classic raw REPL command (code + Ctrl-D, its "OK" held back, as raw paste has
//    none). mpremote then sends code without its classic-mode pauses (256 bytes every 10 ms).
// A running program cannot be interrupted (Ctrl-C waits until it ends): input is processed one
// byte after the other.
// The process ends at end of input.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MP = path.join(HERE, "node_modules", "@micropython", "micropython-webassembly-pyscript",
  "micropython.mjs");

function usage(msg) {
  process.stderr.write(`board.mjs: ${msg}\nusage: node board.mjs [--heapsize N[k|m]]\n`);
  process.exit(2);
}

let heapsize = 192 * 1024;
const argv = process.argv.slice(2);
while (argv.length) {
  const a = argv.shift();
  if (a === "--heapsize") {
    const m = /^(\d+)([kKmM]?)$/.exec(argv.shift() || "");
    if (!m) usage("bad --heapsize");
    heapsize = parseInt(m[1], 10) * ({ k: 1024, m: 1048576 }[m[2].toLowerCase()] || 1);
  } else usage(`unknown argument ${a}`);
}
if (!fs.existsSync(MP)) usage(`${MP} missing (cd tools/mpwasm && npm ci)`);

// ---- output: written synchronously, so a long-running program's prints stream out ----
const nap = new Int32Array(new SharedArrayBuffer(4));
const out = { buf: Buffer.alloc(4096), len: 0, mute: false, prev: 0 };
function writeAll(b) {
  let off = 0;
  while (off < b.length) {
    try {
      off += fs.writeSync(1, b, off, b.length - off);
    } catch (e) {
      if (e.code === "EAGAIN") { Atomics.wait(nap, 0, 0, 2); continue; }
      if (e.code === "EPIPE") process.exit(0);
      throw e;
    }
  }
}
function flush() {
  if (out.len) writeAll(out.buf.subarray(0, out.len));
  out.len = 0;
}
const RAW_BANNER = Buffer.from("raw REPL; CTRL-B to exit\r\n");
let tail = Buffer.alloc(0);  // last output bytes, to see the raw REPL banner
let raw = false;             // the REPL is in raw mode (seen from its own output)
function putc(u8) {
  const c = u8[0];
  tail = Buffer.concat([tail.subarray(tail.length >= 64 ? 1 : 0), u8]);
  if (c === 10 && tail.subarray(tail.length - RAW_BANNER.length).equals(RAW_BANNER)) raw = true;
  if (out.mute) return;
  if (out.swallow && out.swallow.length && c === out.swallow[0]) { out.swallow.shift(); return; }
  // print() on a board writes \r\n (the HAL's "cooked" output); this build writes a bare \n
  if (c === 10 && out.prev !== 13) out.buf[out.len++] = 13;
  out.prev = c;
  out.buf[out.len++] = c;
  if (c === 10 || out.len >= out.buf.length - 1) flush();
}

// ---- boot: a fresh MicroPython, with the filesystem of the previous one ----
const ERRNO_FIX = `
import sys
def _boot():
    import os as _os, builtins as _b
    # Emscripten errno -> MicroPython errno (py/mperrno.h), for the filesystem's errors
    m = {63: 1, 44: 2, 29: 5, 8: 9, 48: 12, 2: 13, 10: 16, 20: 17, 75: 18, 43: 19, 54: 20,
         31: 21, 28: 22, 33: 24, 22: 27, 51: 28, 69: 30, 37: 36, 55: 39, 52: 38, 138: 95}
    def fix(f):
        def g(*a):
            if a and a[0] == "":  # a board's VFS takes "" for the current directory
                a = (_os.getcwd(),) + a[1:]
            try:
                return f(*a)
            except OSError as e:
                n = e.errno
                if n in m:
                    raise OSError(m[n])
                raise
        return g
    class OS:
        def __init__(self):
            for k in dir(_os):
                v = getattr(_os, k)
                setattr(self, k, fix(v) if k in ("stat", "listdir", "ilistdir", "mkdir",
                        "rmdir", "remove", "unlink", "rename", "chdir", "statvfs", "getcwd")
                        else v)
        def __repr__(self):
            return "<module 'os'>"
    os = OS()
    ilistdir = os.ilistdir
    def ilistdir_sized(*a):  # (name, type, inode, size), as on a board's filesystem
        d = a[0] if a else _os.getcwd()
        for e in ilistdir(*a):
            p = (d.rstrip("/") + "/" if d else "") + e[0]
            if p in ("/dev", "/proc"):  # Emscripten's own: not on a board
                continue
            if len(e) == 3:
                n = 0
                if e[1] == 0x8000:
                    try:
                        n = _os.stat(p)[6]
                    except OSError:
                        pass
                e = (e[0], e[1], e[2], n)
            yield e
    os.ilistdir = ilistdir_sized
    os.listdir = lambda *a: [e[0] for e in ilistdir_sized(*a)]
    sys.modules["os"] = os
    _b.open = fix(_b.open)
_boot()
del _boot
`;

const { loadMicroPython } = await import(MP);
let mp = null;

function listFiles(FS, dir, acc) {
  for (const name of FS.readdir(dir)) {
    if (name === "." || name === "..") continue;
    const p = dir === "/" ? `/${name}` : `${dir}/${name}`;
    if (dir === "/" && (name === "dev" || name === "proc")) continue;
    const st = FS.stat(p);
    if (FS.isDir(st.mode)) { acc.push([p, null]); listFiles(FS, p, acc); }
    else if (FS.isFile(st.mode)) acc.push([p, FS.readFile(p)]);
  }
  return acc;
}

async function boot(files, first) {
  mp = await loadMicroPython({ heapsize, stdout: putc, linebuffer: false });
  for (const [p, data] of files) {
    if (data === null) { try { mp.FS.mkdir(p); } catch (e) { /* exists */ } }
    else mp.FS.writeFile(p, data);
  }
  // a board's filesystem has /lib, not Emscripten's /home/web_user and /tmp (unless made by you)
  const kept = new Set(files.map(([p]) => p));
  for (const d of ["/home/web_user", "/home", "/tmp"]) {
    if (!kept.has(d)) { try { mp.FS.rmdir(d); } catch (e) { /* absent, or not empty */ } }
  }
  if (first) { try { mp.FS.mkdir("/lib"); } catch (e) { /* exists */ } }
  mp.FS.chdir("/");
  mp.runPython(ERRNO_FIX);
}

async function softReset() {
  const wasRaw = raw;
  flush();
  const files = listFiles(mp.FS, "/", []);
  writeAll(Buffer.from("MPY: soft reboot\r\n"));
  await boot(files);
  raw = false;
  if (wasRaw) {  // a board in raw mode comes back in raw mode: no friendly banner
    out.mute = true;
    mp.replInit();
    await mp.replProcessCharWithAsyncify(1);
    out.mute = false;
    writeAll(Buffer.concat([RAW_BANNER, Buffer.from(">")]));
  } else {
    mp.replInit();
  }
  flush();
}

await boot([], true);
mp.replInit();
flush();

// ---- input: one byte after the other ----
const chunks = [];
let pos = 0, wake = null, ended = false;
function poke() { if (wake) { const w = wake; wake = null; w(); } }
process.stdin.on("data", (d) => { chunks.push(d); poke(); });
process.stdin.on("end", () => { ended = true; poke(); });
process.stdin.on("error", () => { ended = true; poke(); });

let paste = [];
const WINDOW = 2048;
let pasting = false, pasted = [], window = 0;
async function feed(c) {
  if (raw && c === 2) raw = false;  // Ctrl-B leaves the raw REPL
  const r = await mp.replProcessCharWithAsyncify(c);
  if (r) await softReset();
}

for (;;) {
  if (!chunks.length) {
    flush();
    if (ended) break;
    await new Promise((r) => { wake = r; });
    continue;
  }
  const c = chunks[0][pos++];
  if (pos >= chunks[0].length) { chunks.shift(); pos = 0; }
  if (pasting) {  // raw-paste data, up to Ctrl-D
    if (c === 4) {
      pasting = false;
      writeAll(Buffer.from([4]));
      out.swallow = [79, 75];  // the "OK" the classic raw REPL prints on Ctrl-D
      for (const b of pasted) await feed(b);
      pasted = [];
      await feed(4);
      out.swallow = null;
    } else {
      pasted.push(c);
      if (++window === WINDOW) { window = 0; writeAll(Buffer.from([1])); }
    }
    continue;
  }
  if (raw && (paste.length || c === 5)) {  // Ctrl-E A Ctrl-A: the raw-paste request
    paste.push(c);
    const want = [5, 65, 1];
    if (paste.every((b, i) => b === want[i])) {
      if (paste.length === 3) {
        paste = [];
        pasting = true;
        window = 0;
        writeAll(Buffer.from([82, 1, WINDOW & 255, WINDOW >> 8]));  // "R\x01", window u16
      }
      continue;
    }
    const held = paste;
    paste = [];
    for (const b of held) await feed(b);  // not the request: the REPL gets the bytes
    continue;
  }
  await feed(c);
}
flush();
process.exit(0);
