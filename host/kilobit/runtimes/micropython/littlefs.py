"""kbit's checkpoints on littlefs with the power cut at every block write and every erase (issue
23): tools/littlefs/powercut.py on MicroPython's unix port (kbit_unix.run: littlefs v2 behind
vfs.VfsLfs2, the stack the rp2 port mounts on its flash), checked against the host integer
reference.

    r = littlefs.run("tests/golden/rkp-laplace-b4-t62-m2-a-6-s1.json", saves=40)
    r["tried"], r["recovered"], r["failures"]

The learner is a golden file's model, its examples the file's learning steps (again from the
first when a run needs more); a checkpoint is saved after every `every` examples, `saves` times,
each save cut at each of its block writes and erases, before it lands and torn (the script's
header says how). A cut counts as recovered when the restart loaded the last complete checkpoint
(the deployed model before the first) or the one under way, and from that state the next `cont`
learning steps and the checkpoint saved after them are the host reference's, bit for bit.
"""
import json
import os
import tempfile
import time
import zlib

from kilobit.core import paths
from kilobit.models import registry
from kilobit.runtimes.micropython import kbit_unix

SCRIPT = paths.tools("littlefs", "powercut.py")
#: 4096-byte blocks as on a Pico; 64 of them (256 KiB; a Pico's filesystem has 352)
BLOCKS = 64
#: VfsLfs2's progsize on the rp2 port (its _boot.py)
PROGSIZE = 256
CONT = 8


def missing():
    return kbit_unix.missing()


def _examples(spec, doc, n):
    """n learning steps (values, label) of a golden file, again from its first when it has
    fewer."""
    steps = [(list(codes), y) for op, y, codes in spec.golden.doc_steps(doc) if op == "L"]
    return [steps[i % len(steps)] for i in range(n)]


def _bytes(m, scaler):
    return m.to_bytes() if scaler is None else m.to_bytes(scaler=scaler)


class _Reference:
    """The host integer reference from a saved state: the learn results of the next steps and
    the state they leave (as kbit saves it, byte for byte)."""

    def __init__(self, spec, examples, cont):
        self.spec, self.examples, self.cont = spec, examples, cont
        self.memo = {}

    def after(self, state, learnt):
        key = (state, learnt)
        if key not in self.memo:
            m, scaler = self.spec.load(state)
            results = [int(m.learn(list(x), y)[0])
                       for x, y in self.examples[learnt:learnt + self.cont]]
            self.memo[key] = (results, zlib.crc32(_bytes(m, scaler)))
        return self.memo[key]


def run(golden_path, saves, every=4, cont=CONT, timeout=3600, pkgs=()):
    """Cut every save of a learner's checkpoints; a dict of the counts (tried, recovered, to the
    last complete checkpoint or the one under way), the block writes and erases of the uncut
    saves, bytes written where the flash was not erased (littlefs never does: 0), the first
    failures and the run time. pkgs: another kbit to run (kbit_unix.run's)."""
    from kilobit.core import goldenfile
    doc = goldenfile.load(golden_path)
    spec = registry.get(doc["model"])
    blob = bytes.fromhex(doc["model_file"])
    at = [every * (i + 1) for i in range(saves)]
    examples = _examples(spec, doc, at[-1] + cont)
    m, scaler = spec.load(blob)
    states, learnt = [], 0
    for n in at:  # the host's state at every save
        for x, y in examples[learnt:n]:
            m.learn(list(x), y)
        learnt = n
        states.append(_bytes(m, scaler))
    job = {"kbit": spec.kbit, "model": blob.hex(), "kind": spec.kind,
           "x": [x for x, _ in examples], "y": [y for _, y in examples], "saves": at,
           "cont": cont, "blocks": BLOCKS, "progsize": PROGSIZE}
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="kbit-littlefs-") as tmp:
        path = os.path.join(tmp, "job.json")
        with open(path, "w") as f:
            json.dump(job, f)
        p = kbit_unix.run([SCRIPT, path], timeout=timeout, heapsize=16 * BLOCKS * 4096,
                          pkgs=pkgs)
    ref = _Reference(spec, examples, cont)
    r = dict(model=os.path.basename(golden_path), name=spec.name, file_bytes=len(blob),
             saves=saves, every=every, ops=0, erases=0, tried=0, recovered=0, last=0,
             under_way=0, violations=None, failures=[], seconds=time.time() - t0)
    for line in p.stdout.splitlines():
        f = line.split()
        if f[:1] == ["S"]:
            i, ops, erases, crc = (int(v) for v in f[1:5])
            r["ops"] += ops
            r["erases"] += erases
            if crc != zlib.crc32(states[i]):
                r["failures"].append("save %d: the board's state differs from the host's" % i)
        elif f[:1] == ["C"]:
            r["tried"] += 1
            i, k, torn, which, crc = (int(v) for v in f[1:6])
            results, final = [int(v) for v in f[6:-1]], int(f[-1])
            last = states[i - 1] if i else blob
            got = (last, states[i])[which] if which in (0, 1) else None
            if got is None or crc != zlib.crc32(got):
                r["failures"].append("save %d, operation %d%s: loaded neither the last "
                                     "checkpoint nor the one under way" % (i, k, " torn" * torn))
            elif (results, final) != ref.after(got, at[i]):
                r["failures"].append("save %d, operation %d%s: after the restart the learner "
                                     "differs from the host" % (i, k, " torn" * torn))
            else:
                r["recovered"] += 1
                r["last" if which == 0 else "under_way"] += 1
        elif f[:1] == ["F"]:
            r["tried"] += 1
            r["failures"].append("save %s, operation %s%s: %s" % (
                f[1], f[2], " torn" * int(f[3]), " ".join(f[4:])))
        elif f[:1] == ["V"]:
            r["violations"] = int(f[1])
    if "littlefs power cuts: done" not in p.stdout:
        r["failures"].append("the script did not finish: %s" % (p.stderr.strip()[-300:] or
                                                                p.stdout[-300:]))
    return r
