"""Replays of host-trained predictors (Bonsai, ProtoNN) on every runtime.

A predictor's golden steps are ("P", None, codes): the D codes of one input, streamed feature by
feature in index order, then a prediction. A replay returns, per step, the golden fields as a
tuple of ints (Bonsai: P[0..d-1], leaf, scores[0..L-1], prediction; ProtoNN: P, D[0..m-1],
k[0..m-1], scores, prediction); a runtime that does not report a field gives None in its place
(kilobit.golden.compare). Each runtime adapter hands a model file of a predictor type here
(`handles(model)`), by the type in its header.
"""
import os
import subprocess
import tempfile

from kilobit.core.errors import KilobitError
from kilobit.models import predictor, registry
from kilobit.runtimes import REPO, RuntimeFailure

MPREPLAY = os.path.join(REPO, "tools", "mpwasm", "replay_predict.py")


def _spec(model):
    """The registry's spec of a predictor model file (by its header's type), or None."""
    spec = registry.peek(model)
    return spec if spec is not None and spec.kind == predictor.KIND else None


def handles(model):
    return _spec(model) is not None


def _host_model(model):
    from kilobit.core.errors import ModelFileError
    try:
        return _spec(model).load(model)[0]
    except ModelFileError as e:
        raise RuntimeFailure(str(e)) from None


def _codes(steps):
    for op, _, codes in steps:
        if op != "P":
            raise RuntimeFailure("a predictor replays P steps only, got %r" % op)
    return [list(codes) for _, _, codes in steps]


def replay(runtime, model, steps):
    inputs = _codes(steps)
    name = runtime.name
    if name == "host":
        m = _host_model(model)
        return [tuple(r) for r in m.field_rows(inputs)] if inputs else []
    if name == "kbit-cpython":
        return _kbit(model, inputs)
    if name.startswith("kbit-micropython"):
        return _micropython(runtime, model, inputs)
    if name == "c-host":
        return _c_host(model, inputs)
    if name.endswith("-sim"):
        from kilobit.runtimes import fw_predict as predict_fw
        try:
            rows, runtime.last_result, runtime.last_sizes = predict_fw.replay(
                model, inputs, runtime.board)
        except KilobitError as e:
            raise RuntimeFailure(str(e)) from None
        return [tuple(r) for r in rows]
    raise RuntimeFailure("%s does not run predictor models" % name)


def _kbit(model, inputs):
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


def _micropython(runtime, model, inputs):
    from kilobit.runtimes.micropython import error_text, run
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
            p = run([MPREPLAY, "/model.kb", "/steps.txt"],
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


def _c_host(model, inputs):
    from kilobit.runtimes.c_host import BUILD, build
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
