"""What the adapters share per model kind (kilobit.models.spec) beyond the learners': the
predictors' and the class learners' replays on device/kbit (CPython, MicroPython) and on the C
runtime built for the host. Each adapter's replay_predictor / replay_classes calls these.
"""
import io
import os
import subprocess
import tempfile

from kilobit.core import paths
from kilobit.models import registry
from kilobit.runtimes.base import RuntimeFailure
from kilobit.runtimes.c.build import BUILD, build
from kilobit.runtimes.micropython import natmod
from kilobit.runtimes.micropython.mpwasm import error_text

#: the replay scripts device/kbit runs on every MicroPython runtime (tools/replay)
MPREDICT = paths.tools("replay", "replay_predict.py")
MPASSOC = paths.tools("replay", "replay_assoc.py")
MPFEATURES = paths.tools("replay", "replay_features.py")


def _spec(model):
    return registry.peek(model)


def predictor_inputs(steps):
    """The inputs of a predictor's steps (all "P")."""
    for op, _, _ in steps:
        if op != "P":
            raise RuntimeFailure("a predictor replays P steps only, got %r" % op)
    return [list(codes) for _, _, codes in steps]


def kbit_predictor(model, inputs):
    """device/kbit under CPython: a predictor's rows."""
    from kbit.kbfile import ModelFileError
    spec = _spec(model)
    try:
        m = spec.kbit_class().load(bytes(model))
    except ModelFileError as e:
        raise RuntimeFailure("ModelFileError: %s" % e) from None
    out = []
    for u in inputs:
        for j, c in enumerate(u):
            m.update(j, c)
        p = m._predict_id()  # the class id: predict() answers the file's label
        row = []
        for a in spec.kbit_fields:
            v = getattr(m, a)
            row += [v] if isinstance(v, int) else list(v)
        out.append(tuple(row + [p]))
    return out


def mp_script(runtime, script, model, steps_text, mem=False):
    """Run a replay script of tools/replay on a MicroPython runtime (runtime.run): the model
    file and the steps go in as /model.kb and /steps.txt (on a user's board, the runner's private
    folder's: kilobit.runtimes.boards.remote); returns (stdout, the bytes the script
    wrote to /mem.bin or None). With runtime.timing set, the script also times each step and
    runtime.times becomes (the clock's own overhead, [ticks per step]) in kbit.compat's unit.
    With runtime.natmod_arch set, kbit's native modules of that architecture go onto the board
    beside it, as `kilobit deploy` puts them there. The script's first line says which path ran
    ("path native" or "path bytecode: why"): it becomes runtime.path, and what kbit printed
    before it (a refused native module, one line each) runtime.said."""
    miss = runtime.missing()
    if miss:
        raise RuntimeFailure("%s: missing %s" % (runtime.name, miss))
    timing = getattr(runtime, "timing", False)
    with tempfile.TemporaryDirectory(prefix="kbit-mp-") as tmp:
        names = ["model.kb", "steps.txt"] + (["mem.bin"] if mem else []) + (
            ["times.txt"] if timing else [])
        paths = {k: os.path.join(tmp, k) for k in names}
        with open(paths["model.kb"], "wb") as f:
            f.write(bytes(model))
        with open(paths["steps.txt"], "w") as f:
            f.write(steps_text)
        outs = [("/" + k, paths[k]) for k in names[2:]]
        try:
            arch = getattr(runtime, "natmod_arch", None)
            p = runtime.run([script, "/model.kb", "/steps.txt"] + [fs for fs, _ in outs],
                            files=[("/model.kb", paths["model.kb"]),
                                   ("/steps.txt", paths["steps.txt"])]
                            + (natmod.files(arch) if arch else []),
                            outs=outs, mpy=runtime.mpy)
        except subprocess.TimeoutExpired as e:
            raise RuntimeFailure("%s: timed out after %ds" % (runtime.name, e.timeout)) from None
        if p.returncode != 0:
            raise RuntimeFailure("%s: %s" % (runtime.name, error_text(p.stderr)))
        out = {}
        for k in names[2:]:
            if not os.path.exists(paths[k]):
                raise RuntimeFailure("%s: the replay wrote no %s" % (runtime.name, k))
            with open(paths[k], "rb") as f:
                out[k] = f.read()
    # kbit may say something first (a native module refused on import: one line each)
    said, _, stdout = p.stdout.partition("path ")
    if said and not said.endswith("\n"):
        raise RuntimeFailure("%s: the replay did not say which path ran" % runtime.name)
    runtime.said = said.splitlines()
    head, _, stdout = stdout.partition("\n")
    runtime.path = head.strip()
    if timing:
        lines = out["times.txt"].decode().split()
        if len(lines) < 2 or lines[0] != "overhead":
            raise RuntimeFailure("%s: unreadable step times" % runtime.name)
        runtime.times = (int(lines[1]), [int(x) for x in lines[2:]])
    return stdout, out.get("mem.bin")


def mp_predictor(runtime, model, inputs):
    """device/kbit on a MicroPython (runtime.run): a predictor's rows."""
    stdout, _ = mp_script(runtime, MPREDICT, model,
                          "".join("P %s\n" % " ".join(map(str, u)) for u in inputs))
    rows = [tuple(int(x) for x in line.split()) for line in stdout.splitlines() if line]
    if len(rows) != len(inputs):
        raise RuntimeFailure("%s: %d result lines for %d steps" % (runtime.name, len(rows),
                                                                   len(inputs)))
    return rows


def tool_failure(r, tool):
    """The RuntimeFailure of a C tool's failed run: its "error: ..." line without the prefix."""
    err = r.stderr.strip()
    return RuntimeFailure(err[len("error: "):] if err.startswith("error: ") else
                          err or "%s exited with status %d" % (tool, r.returncode))


def c_predictor(model, inputs, raw=False):
    """kb_predict: a predictor's rows (`raw`: inputs of raw readings, kb_predict -r)."""
    build()
    exe = os.path.join(BUILD, "host", "kb_predict")
    fd, path = tempfile.mkstemp(suffix=".kb", prefix="kilobit-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(bytes(model))
        text = "".join("P %s\n" % " ".join(map(str, u)) for u in inputs)
        r = subprocess.run([exe] + ["-r"] * raw + [path], input=text, capture_output=True,
                           text=True)
    finally:
        os.unlink(path)
    if r.returncode != 0:
        raise tool_failure(r, "kb_predict")
    rows = [tuple(int(x) for x in line.split()) for line in r.stdout.splitlines() if line]
    if len(rows) != len(inputs):
        raise RuntimeFailure("kb_predict printed %d lines for %d steps" % (len(rows),
                                                                           len(inputs)))
    return rows


def kbit_classes(model, steps):
    """device/kbit under CPython: an assoc replay."""
    from array import array

    from kbit.kbfile import ModelFileError
    try:
        m = _spec(model).kbit_class().load(bytes(model))
    except ModelFileError as e:
        raise RuntimeFailure("ModelFileError: %s" % e) from None
    u = array("b", bytes(m.T))
    out = []
    for op, y, values in steps:
        for j, v in enumerate(values):
            u[j] = v
        if op == "L":
            try:
                pred = m.learn(u, y)
            except ValueError as e:
                raise RuntimeFailure("ValueError: %s" % e) from None
        else:
            pred = m._predict_id(u)  # the class id: predict() answers the file's label
        out.append((pred, m.count, m.nc, m.stored(), memory(m) if op == "L" else None))
    if out:
        out[-1] = out[-1][:4] + (memory(m),)
    return out


def memory(m):
    """The memory of a kbit.assoc.Assoc as the contract lays it out."""
    return bytes(m.labels) + bytes(m.nf) + bytes(m.anchors) + bytes(m.conn)


def write_class_steps(f, steps):
    for op, y, values in steps:
        head = "L %d " % y if op == "L" else "Q "
        f.write(head + " ".join(str(int(v)) for v in values) + "\n")


def parse_rows(text, nsteps, mem, name):
    """Rows "pred count classes anchors learnt" + the memory snapshots (one per learning step
    and one at the end, back to back) -> the replay tuples."""
    rows = [tuple(int(x) for x in line.split()) for line in text.splitlines() if line.strip()]
    if len(rows) != nsteps or any(len(r) != 5 for r in rows):
        raise RuntimeFailure("%s: %d result lines for %d steps" % (name, len(rows), nsteps))
    nmem = sum(r[4] for r in rows) + 1
    size, rest = divmod(len(mem), nmem)
    if rest:
        raise RuntimeFailure("%s: memory output of %d bytes for %d snapshots"
                             % (name, len(mem), nmem))
    out, k = [], 0
    for r in rows:
        mm = None
        if r[4]:
            mm = mem[k * size:(k + 1) * size]
            k += 1
        out.append(r[:4] + (mm,))
    if out:
        out[-1] = out[-1][:4] + (mem[k * size:],)
    return out


def mp_classes(runtime, model, steps):
    """device/kbit on a MicroPython (runtime.run): an assoc replay."""
    f = io.StringIO()
    write_class_steps(f, steps)
    stdout, mem = mp_script(runtime, MPASSOC, model, f.getvalue(), mem=True)
    return parse_rows(stdout, len(steps), mem, runtime.name)


def c_classes(model, steps, raw=False):
    """kb_assoc_replay: an assoc replay (`raw`: steps of raw readings, kb_assoc_replay -r)."""
    build()
    exe = os.path.join(BUILD, "host", "kb_assoc_replay")
    with tempfile.TemporaryDirectory(prefix="kilobit-") as tmp:
        path, mpath = os.path.join(tmp, "model.kb"), os.path.join(tmp, "mem.bin")
        with open(path, "wb") as f:
            f.write(bytes(model))
        with open(os.path.join(tmp, "steps.txt"), "w") as f:
            write_class_steps(f, steps)
        with open(os.path.join(tmp, "steps.txt")) as f:
            r = subprocess.run([exe] + ["-r"] * raw + [path, mpath], stdin=f,
                               capture_output=True, text=True)
        if r.returncode != 0:
            raise tool_failure(r, "kb_assoc_replay")
        with open(mpath, "rb") as f:
            mem = f.read()
    return parse_rows(r.stdout, len(steps), mem, "c-host")


def _windows_text(windows):
    return "".join(" ".join(str(int(v)) for v in w) + "\n" for w in windows)


def _feature_rows(text, nwindows, name):
    rows = [[int(v) for v in line.split()] for line in text.splitlines() if line.strip()]
    if len(rows) != nwindows:
        raise RuntimeFailure("%s: %d result lines for %d windows" % (name, len(rows), nwindows))
    return rows


def mp_features(runtime, jobs):
    """device/kbit on a MicroPython (runtime.run): the features of each window of every job
    (selection (axes, n, mask, p, bands), windows), all in one run of the script; the selections
    go in where the other scripts take a model file. A list of rows per job."""
    head = "".join(" ".join(str(int(v)) for v in sel) + " %d\n" % len(ws) for sel, ws in jobs)
    stdout, _ = mp_script(runtime, MPFEATURES, head.encode(),
                          "".join(_windows_text(ws) for _, ws in jobs))
    rows = _feature_rows(stdout, sum(len(ws) for _, ws in jobs), runtime.name)
    out = []
    for _, ws in jobs:
        out.append(rows[:len(ws)])
        rows = rows[len(ws):]
    return out


def c_features(windows, selection):
    """kb_features_replay (kb_features_extract): the features of each window; its first input
    line is the selection (axes, n, mask, p, bands)."""
    build()
    exe = os.path.join(BUILD, "host", "kb_features_replay")
    text = " ".join(str(int(v)) for v in selection) + "\n" + _windows_text(windows)
    r = subprocess.run([exe], input=text, capture_output=True, text=True)
    if r.returncode != 0:
        raise tool_failure(r, "kb_features_replay")
    return _feature_rows(r.stdout, len(windows), "c-host")
