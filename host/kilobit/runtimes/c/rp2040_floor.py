"""firmware_c's kernels as bare C on the emulated RP2040, without MicroPython: the runtime
`rp2040-c`, the floor that kbit's native modules on the emulated Pico are measured against
(issue 20).

tools/pico/floor builds one Cortex-M0+ program per model kind (arm-none-eabi-gcc
-mcpu=cortex-m0plus -mthumb -Os, C99, no float; `/` through the SIO divider as pico-sdk routes
it), on tools/pico's linker script, start-up and divider; tools/pico/floor/run.mjs boots one
under rp2040js with the model file and the steps in flash. Each program is the replay of a
firmware_c/host tool, so the rows are c-host's:

    learner   kb_replay's (RKP, CKP)        predict   kb_predict's (Bonsai, ProtoNN)
    assoc     kb_assoc_replay's, the memory in hex after its row instead of in a file

and every step is timed in emulated cycles around the kernel call alone (the step line is parsed
before the clock starts): after a replay, `times` is (overhead, [cycles per step]) as
kilobit.runtimes.kinds.mp_script leaves it on the MicroPython runtimes; the overhead is what two
reads of the counter back to back differ by (subtract it from every step). `timing` is there for
the same interface; these programs always time.

`calibrate()` runs loops of known instruction cost and says how rp2040js's counts compare with
the Cortex-M0+ manual's. Cycle figures are rp2040js's, not silicon's (tools/pico/README.md):
flash reads cost 1 cycle (no XIP cache misses), the divider 16 extra cycles per division.
"""
import io
import os
import shutil
import subprocess
import tempfile
import threading

from kilobit.core import paths
from kilobit.runtimes import kinds
from kilobit.runtimes.base import Runtime, RuntimeFailure
from kilobit.runtimes.c.c_host import format_steps, parse_output

PICO = paths.tools("pico")
FLOOR = os.path.join(PICO, "floor")
RUNNER = os.path.join(FLOOR, "run.mjs")
BUILD = paths.cache("pico-floor")
EMULATOR = os.path.join(PICO, "node_modules", "rp2040js", "package.json")
HZ = 125_000_000  # rp2040js's clk_sys, a Pico's default
#: what this target is, in every message and report
TITLE = ("firmware_c as bare C on the RP2040 (no MicroPython), emulated by rp2040js; "
         "cycle counts are rp2040js's estimates")

_lock = threading.Lock()
_built = {}


def missing():
    """None when the programs can be built and run here, else what to install (one line)."""
    if shutil.which("node") is None:
        return "node (Node.js 18+: apt-get install nodejs npm), for the RP2040 emulator"
    if not os.path.exists(EMULATOR):
        return "npm package rp2040js (%s)" % paths.npm_how(PICO)
    if shutil.which("arm-none-eabi-gcc") is None:
        return "arm-none-eabi-gcc (apt-get install gcc-arm-none-eabi)"
    if shutil.which("make") is None:
        return "make (apt-get install make)"
    return None


def build():
    """make -C tools/pico/floor, once per process (make decides what is stale). Raises
    RuntimeFailure."""
    with _lock:
        if "floor" not in _built:
            miss = missing()
            if miss:
                _built["floor"] = "rp2040-c: missing %s" % miss
            else:
                r = subprocess.run(["make", "-s", "-C", FLOOR, "BUILD=" + BUILD],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                _built["floor"] = None if r.returncode == 0 else (
                    "rp2040-c: make -C tools/pico/floor failed:\n%s" % r.stdout.strip()[-3000:])
        if _built["floor"] is not None:
            raise RuntimeFailure(_built["floor"])
    return BUILD


def run(program, model=b"", steps_text="", timeout=600):
    """Run PROGRAM (learner, predict, assoc, calib) on the emulated RP2040: (stdout, overhead,
    [cycles per step]). RuntimeFailure carries the program's error text."""
    build()
    with tempfile.TemporaryDirectory(prefix="kilobit-floor-") as tmp:
        mpath, tpath = os.path.join(tmp, "model.kb"), os.path.join(tmp, "times.txt")
        with open(mpath, "wb") as f:
            f.write(bytes(model))
        cmd = ["node", RUNNER, "--times", tpath, "--timeout-s", str(int(timeout)), program]
        if program != "calib":
            cmd.append(mpath)
        try:
            r = subprocess.run(cmd, input=steps_text, capture_output=True, text=True,
                               timeout=timeout + 60, env=paths.child_env())
        except subprocess.TimeoutExpired:
            raise RuntimeFailure("rp2040-c: %s timed out after %ds" % (program, timeout)) from None
        if r.returncode != 0:
            err = r.stderr.strip()
            if err.startswith("error: "):
                err = err[len("error: "):]
            raise RuntimeFailure(err or "rp2040-c: %s exited with status %d"
                                 % (program, r.returncode))
        times = []
        if os.path.exists(tpath):
            with open(tpath) as f:
                times = f.read().split()
    if program == "calib":
        return r.stdout, None, []
    if len(times) < 2 or times[0] != "overhead":
        raise RuntimeFailure("rp2040-c: %s wrote no step times" % program)
    return r.stdout, int(times[1]), [int(t) for t in times[2:]]


class RP2040FloorRuntime(Runtime):
    name = "rp2040-c"
    timing = False  # the same interface as MicroPythonRuntime's; every replay is timed anyway
    #: after a replay: (overhead, [cycles per step]), the overhead not yet taken off
    times = None

    def missing(self):
        return missing()

    def _run(self, program, model, text, nsteps):
        out, overhead, steps = run(program, model, text)
        if len(steps) != nsteps:
            raise RuntimeFailure("rp2040-c: %d step times for %d steps" % (len(steps), nsteps))
        self.times = (overhead, steps)
        return out

    def replay_learner(self, model, steps):
        out = self._run("learner", model, format_steps(steps), len(steps))
        return parse_output(out, len(steps))

    def replay_predictor(self, model, steps):
        inputs = kinds.predictor_inputs(steps)
        out = self._run("predict", model,
                        "".join("P %s\n" % " ".join(map(str, u)) for u in inputs), len(inputs))
        rows = [tuple(int(x) for x in line.split()) for line in out.splitlines() if line]
        if len(rows) != len(inputs):
            raise RuntimeFailure("rp2040-c: %d result lines for %d steps" % (len(rows),
                                                                             len(inputs)))
        return rows

    def replay_classes(self, model, steps):
        f = io.StringIO()
        kinds.write_class_steps(f, steps)
        lines = self._run("assoc", model, f.getvalue(), len(steps)).splitlines()
        if not lines or not lines[-1].startswith("END "):
            raise RuntimeFailure("rp2040-c: the assoc replay ended early")
        rows, mem = [], []
        for line in lines[:-1]:
            f = line.split()
            if len(f) == 6:  # a learning step that changed the memory: the memory follows
                mem.append(bytes.fromhex(f[5]))
            rows.append(" ".join(f[:5]))
        mem.append(bytes.fromhex(lines[-1][4:]))
        return kinds.parse_rows("\n".join(rows), len(steps), b"".join(mem), self.name)


# ---- calibration: loops whose cost the Cortex-M0+ manual fixes (tools/pico/floor/calib.S) ----
#: per round, by the Cortex-M0+ Technical Reference Manual's instruction timings (zero wait
#: states; N in PUSH 1+N / POP-with-PC 3+N counting every listed register, LR and PC included)
#: and by rp2040js's accounting; a run of n rounds costs n * per round - 1 (the last BNE falls
#: through: 1 cycle, not 2)
LOOPS = {
    "loop": dict(code="SUBS r0, #1; BNE", manual=3, rp2040js=3,
                 why="SUBS 1, BNE taken 2 (the pipeline refill): rp2040js agrees"),
    "call": dict(code="BL leaf; SUBS; BNE  with leaf: PUSH {r4, lr}; POP {r4, pc}",
                 manual=14, rp2040js=12,
                 why="BL 3, PUSH {r4, lr} 1+2, POP {r4, pc} 3+2, SUBS 1, BNE 2; rp2040js "
                     "charges PUSH only for r0-r7 (LR's store is free) and POP-with-PC only "
                     "for r0-r7 plus 2: one cycle less each"),
    "div": dict(code="MOVS; MOVS; BL __aeabi_uidiv (divider.S, SIO divider); SUBS; BNE",
                manual=24, rp2040js=40,
                why="MOVS 1+1, BL 3, divider.S 16 (LDR literal 2, two STR to SIO 1+1, four "
                    "B 8, two LDR from SIO 1+1, BX 2), SUBS 1, BNE 2; rp2040js adds 8 cycles "
                    "for each write of the dividend and of the divisor (16 per division)"),
}


def calibrate():
    """Run the calibration loops on the emulated RP2040. Returns

        {"overhead": cycles of two counter reads back to back (the first LDR's),
         "exact": True when the SUBS/BNE loop costs exactly what the manual says at every n,
         "loops": {name: {"code", "why", "per_round": {"manual", "rp2040js"},
                          "runs": [{"n", "measured", "manual", "rp2040js"}, ...]}},
         "hz": 125 MHz}

    measured = cycles between the two counter reads minus the overhead. Raises RuntimeFailure
    when the emulator or the toolchain is missing."""
    out, _, _ = run("calib")
    overhead, loops = None, {}
    for line in out.splitlines():
        f = line.split()
        if f[:1] == ["overhead"]:
            overhead = int(f[1])
        elif len(f) == 3 and f[0] in LOOPS:
            spec, n, got = LOOPS[f[0]], int(f[1]), int(f[2])
            d = loops.setdefault(f[0], dict(code=spec["code"], why=spec["why"], runs=[],
                                            per_round=dict(manual=spec["manual"],
                                                           rp2040js=spec["rp2040js"])))
            d["runs"].append(dict(n=n, measured=got, manual=spec["manual"] * n - 1,
                                  rp2040js=spec["rp2040js"] * n - 1))
    if overhead is None or set(loops) != set(LOOPS):
        raise RuntimeFailure("rp2040-c: unreadable calibration output %r" % out[:200])
    exact = all(r["measured"] == r["manual"] for r in loops["loop"]["runs"])
    return dict(overhead=overhead, exact=exact, loops=loops, hz=HZ)
