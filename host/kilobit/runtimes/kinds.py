"""What the adapters share per model kind (kilobit.models.spec) beyond the learners': the
predictors' and the class learners' replays on device/kbit (CPython, MicroPython) and on the C
runtime built for the host. Each adapter's replay_predictor / replay_classes calls these.
"""
import os
import subprocess
import tempfile

from kilobit.core.paths import REPO
from kilobit.models import registry
from kilobit.runtimes.base import RuntimeFailure
from kilobit.runtimes.c.build import BUILD, build
from kilobit.runtimes.micropython.mpwasm import error_text

#: the replay scripts device/kbit runs on every MicroPython runtime (tools/replay)
MPREDICT = os.path.join(REPO, "tools", "replay", "replay_predict.py")
MPASSOC = os.path.join(REPO, "tools", "replay", "replay_assoc.py")


def _spec(model):
    return registry.peek(model)


def predictor_inputs(steps):
    """The inputs of a predictor's steps (all "P")."""
    for op, _, codes in steps:
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
        p = m.predict()
        row = []
        for a in spec.kbit_fields:
            v = getattr(m, a)
            row += [v] if isinstance(v, int) else list(v)
        out.append(tuple(row + [p]))
    return out


def mp_predictor(runtime, model, inputs):
    """device/kbit on a MicroPython (runtime.run): a predictor's rows."""
    miss = runtime.missing()
    if miss:
        raise RuntimeFailure("%s: missing %s" % (runtime.name, miss))
    with tempfile.TemporaryDirectory(prefix="kbit-mp-") as tmp:
        mpath, spath = os.path.join(tmp, "model.kb"), os.path.join(tmp, "steps.txt")
        with open(mpath, "wb") as f:
            f.write(bytes(model))
        with open(spath, "w") as f:
            for u in inputs:
                f.write("P %s\n" % " ".join(map(str, u)))
        try:
            p = runtime.run([MPREDICT, "/model.kb", "/steps.txt"],
                    files=[("/model.kb", mpath), ("/steps.txt", spath)], mpy=runtime.mpy)
        except subprocess.TimeoutExpired as e:
            raise RuntimeFailure("%s: timed out after %ds" % (runtime.name, e.timeout)) from None
        if p.returncode != 0:
            raise RuntimeFailure("%s: %s" % (runtime.name, error_text(p.stderr)))
    rows = [tuple(int(x) for x in line.split()) for line in p.stdout.splitlines() if line]
    if len(rows) != len(inputs):
        raise RuntimeFailure("%s: %d result lines for %d steps" % (runtime.name, len(rows),
                                                                   len(inputs)))
    return rows


def c_predictor(model, inputs):
    """kb_predict: a predictor's rows."""
    build()
    exe = os.path.join(BUILD, "host", "kb_predict")
    fd, path = tempfile.mkstemp(suffix=".kb", prefix="kilobit-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(bytes(model))
        text = "".join("P %s\n" % " ".join(map(str, u)) for u in inputs)
        r = subprocess.run([exe, path], input=text, capture_output=True, text=True)
    finally:
        os.unlink(path)
    if r.returncode != 0:
        err = r.stderr.strip()
        raise RuntimeFailure(err[len("error: "):] if err.startswith("error: ") else
                             err or "kb_predict exited with status %d" % r.returncode)
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
            pred = m.predict(u)
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
    miss = runtime.missing()
    if miss:
        raise RuntimeFailure("%s: missing %s" % (runtime.name, miss))
    with tempfile.TemporaryDirectory(prefix="kbit-mp-") as tmp:
        paths = {k: os.path.join(tmp, k) for k in ("model.kb", "steps.txt", "mem.bin")}
        with open(paths["model.kb"], "wb") as f:
            f.write(bytes(model))
        with open(paths["steps.txt"], "w") as f:
            write_class_steps(f, steps)
        try:
            p = runtime.run([MPASSOC, "/model.kb", "/steps.txt", "/mem.bin"],
                    files=[("/model.kb", paths["model.kb"]), ("/steps.txt", paths["steps.txt"])],
                    outs=[("/mem.bin", paths["mem.bin"])], mpy=runtime.mpy)
        except subprocess.TimeoutExpired as e:
            raise RuntimeFailure("%s: timed out after %ds" % (runtime.name, e.timeout)) from None
        if p.returncode != 0:
            raise RuntimeFailure("%s: %s" % (runtime.name, error_text(p.stderr)))
        with open(paths["mem.bin"], "rb") as f:
            mem = f.read()
    return parse_rows(p.stdout, len(steps), mem, runtime.name)


def c_classes(model, steps):
    """kb_assoc_replay: an assoc replay."""
    build()
    exe = os.path.join(BUILD, "host", "kb_assoc_replay")
    with tempfile.TemporaryDirectory(prefix="kilobit-") as tmp:
        path, mpath = os.path.join(tmp, "model.kb"), os.path.join(tmp, "mem.bin")
        with open(path, "wb") as f:
            f.write(bytes(model))
        with open(os.path.join(tmp, "steps.txt"), "w") as f:
            write_class_steps(f, steps)
        with open(os.path.join(tmp, "steps.txt")) as f:
            r = subprocess.run([exe, path, mpath], stdin=f, capture_output=True, text=True)
        if r.returncode != 0:
            err = r.stderr.strip()
            raise RuntimeFailure(err[len("error: "):] if err.startswith("error: ") else
                                 err or "kb_assoc_replay exited with status %d" % r.returncode)
        with open(mpath, "rb") as f:
            mem = f.read()
    return parse_rows(r.stdout, len(steps), mem, "c-host")
