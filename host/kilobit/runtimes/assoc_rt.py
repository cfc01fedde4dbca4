"""Replays of the binary associative memory (`assoc`, docs/contract.md section 9) on every
runtime. Each runtime adapter hands a model file of the assoc type here (`handles(model)`).

Steps are ("L", label, values) or ("Q", None, values), values the T int8 inputs. A replay
returns per step (prediction, count, classes, anchors, memory or None): the label predicted
(before learning, for "L"; -1 when no class is known yet), its count, the class slots in use and
the anchors stored after the step, and the memory (labels | nf | anchors | connections) after
every learning step and after the last step.
"""
import os
import subprocess
import tempfile

from kilobit.core.errors import KilobitError
from kilobit.models import registry
from kilobit.runtimes import REPO, RuntimeFailure

MPREPLAY = os.path.join(REPO, "tools", "mpwasm", "replay_assoc.py")


def handles(model):
    spec = registry.peek(model)
    return spec is not None and spec.kind == "classes"


def replay(runtime, model, steps):
    name = runtime.name
    if name == "host":
        from kilobit.models.assoc import golden
        try:
            return golden.replay(model, steps)
        except KilobitError as e:
            raise RuntimeFailure(str(e)) from None
    if name == "kbit-cpython":
        return _kbit(model, steps)
    if name.startswith("kbit-micropython"):
        return _micropython(runtime, model, steps)
    if name == "c-host":
        return _c_host(model, steps)
    if name.endswith("-sim"):
        from kilobit.runtimes import fw_assoc as assoc_fw
        try:
            out, runtime.last_result, runtime.last_sizes = assoc_fw.replay(
                model, steps, runtime.board)
        except KilobitError as e:
            raise RuntimeFailure(str(e)) from None
        return out
    raise RuntimeFailure("%s does not run assoc models" % name)


def _kbit(model, steps):
    from array import array

    from kbit.assoc import Assoc
    from kbit.kbfile import ModelFileError
    try:
        m = Assoc.load(bytes(model))
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


def write_steps(f, steps):
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


def _micropython(runtime, model, steps):
    from kilobit.runtimes.micropython import error_text, run
    miss = runtime.missing()
    if miss:
        raise RuntimeFailure("%s: missing %s" % (runtime.name, miss))
    with tempfile.TemporaryDirectory(prefix="kbit-mp-") as tmp:
        paths = {k: os.path.join(tmp, k) for k in ("model.kb", "steps.txt", "mem.bin")}
        with open(paths["model.kb"], "wb") as f:
            f.write(bytes(model))
        with open(paths["steps.txt"], "w") as f:
            write_steps(f, steps)
        try:
            p = run([MPREPLAY, "/model.kb", "/steps.txt", "/mem.bin"],
                    files=[("/model.kb", paths["model.kb"]), ("/steps.txt", paths["steps.txt"])],
                    outs=[("/mem.bin", paths["mem.bin"])], mpy=runtime.mpy)
        except subprocess.TimeoutExpired as e:
            raise RuntimeFailure("%s: timed out after %ds" % (runtime.name, e.timeout)) from None
        if p.returncode != 0:
            raise RuntimeFailure("%s: %s" % (runtime.name, error_text(p.stderr)))
        with open(paths["mem.bin"], "rb") as f:
            mem = f.read()
    return parse_rows(p.stdout, len(steps), mem, runtime.name)


def _c_host(model, steps):
    from kilobit.runtimes.c_host import BUILD, build
    build()
    exe = os.path.join(BUILD, "host", "kb_assoc_replay")
    with tempfile.TemporaryDirectory(prefix="kilobit-") as tmp:
        path, mpath = os.path.join(tmp, "model.kb"), os.path.join(tmp, "mem.bin")
        with open(path, "wb") as f:
            f.write(bytes(model))
        with open(os.path.join(tmp, "steps.txt"), "w") as f:
            write_steps(f, steps)
        with open(os.path.join(tmp, "steps.txt")) as f:
            r = subprocess.run([exe, path, mpath], stdin=f, capture_output=True, text=True)
        if r.returncode != 0:
            err = r.stderr.strip()
            raise RuntimeFailure(err[len("error: "):] if err.startswith("error: ") else
                                 err or "kb_assoc_replay exited with status %d" % r.returncode)
        with open(mpath, "rb") as f:
            mem = f.read()
    return parse_rows(r.stdout, len(steps), mem, "c-host")
