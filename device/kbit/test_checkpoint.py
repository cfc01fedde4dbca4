"""Checkpoints cut by a power failure at every write (kbit.checkpoint), micropython-lib style:
pytest runs this under CPython, and the same file runs as a script on MicroPython
(`node tools/mpwasm/run.mjs device/kbit/test_checkpoint.py`, or the unix port). The filesystem is
a stand-in that applies writes one by one and can die half-way through any of them; after each
cut the learner restarts from what the stand-in holds, which must be the last complete save or
the one being written, and then goes on learning exactly as that saved state does.
"""
from array import array

from kbit.assoc import Assoc
from kbit.checkpoint import Checkpoint
from kbit.kernel import power_table
from kbit.rkp import RKP

TABLE = power_table(4, 255)  # laplace, width 0, 4 bits: e = 4


class PowerCut(Exception):
    pass


class FakeFS:
    """Files as bytes; each write() lands in order, and the one at `cut` lands half and the power
    goes: a rename at `cut` never happens (littlefs's rename is atomic), and every operation after
    the cut dies too (restart() brings the power back). `full`: the write at that operation
    fails with OSError ENOSPC instead, and the board lives on."""

    def __init__(self, cut=-1, full=-1):
        self.files, self.ops, self.cut, self.full = {}, 0, cut, full
        self.dead = False

    def _op(self):
        if self.dead:
            raise PowerCut()
        self.ops += 1
        if self.ops - 1 == self.full:
            raise OSError(28, "no space left")
        self.dead = self.ops - 1 == self.cut
        return self.dead

    def restart(self):
        self.dead, self.cut = False, -1
        return self

    def open(self, path, mode):
        if self.dead:
            raise PowerCut()
        if "w" in mode:
            self.files[path] = bytearray()
            return _Writer(self, path)
        if path not in self.files:
            raise OSError(2, "no such file")
        return _Reader(bytes(self.files[path]))

    def rename(self, a, b):
        if self._op():
            raise PowerCut()
        self.files[b] = self.files.pop(a)

    def remove(self, path):
        if self.dead:
            raise PowerCut()
        del self.files[path]


class _Writer:
    def __init__(self, fs, path):
        self.fs, self.path = fs, path

    def write(self, b):
        if self.fs._op():
            self.fs.files[self.path] += bytes(b)[:len(b) // 2]
            raise PowerCut()
        self.fs.files[self.path] += bytes(b)

    def close(self):
        pass


class _Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def read(self, n=-1):
        end = len(self.data) if n < 0 else min(len(self.data), self.pos + n)
        out = self.data[self.pos:end]
        self.pos = end
        return out

    def readinto(self, buf):
        b = self.read(len(buf))
        buf[:len(b)] = b
        return len(b)

    def close(self):
        pass


def learner():
    return RKP("laplace", 4, 2, 6, 0, 255, TABLE, state=5, any_table=True)


def steps(n, seed):
    """Deterministic inputs (a small generator of the test's own)."""
    out, x = [], seed
    for _ in range(n):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out.append((bytearray(((x >> 8) & 15, (x >> 12) & 15)), (x >> 16) & 1))
    return out


def state(m):
    return (m.count, m.state, bytes(m.memory))


def test_save_and_load_round_trip():
    fs = FakeFS()
    cp = Checkpoint(RKP, "/m.kb", fs=fs)
    m = learner()
    for u, y in steps(20, 1):
        m.learn(u, y)
    cp.save(m)
    assert "/m.kb" in fs.files and "/m.kb.new" not in fs.files
    assert state(Checkpoint(RKP, "/m.kb", fs=fs).load()) == state(m)


def test_every_n_mistakes():
    fs = FakeFS()
    cp = Checkpoint(RKP, "/m.kb", every=3, fs=fs)
    cp.model = learner()
    cp.save()
    saves = 0
    for u, y in steps(40, 2):
        before = dict(fs.files)
        cp.learn(u, y)
        saves += fs.files != before
    assert saves >= 3 and cp.mistakes < 3
    assert state(Checkpoint(RKP, "/m.kb", fs=fs).load()) != state(learner())


DEPLOYED = "/deployed.kb"


def _two_states():
    """A: 15 steps learnt, B: 10 more (the save the power cut interrupts)."""
    a = learner()
    for u, y in steps(15, 3):
        a.learn(u, y)
    b = learner()
    for u, y in steps(15, 3) + steps(10, 4):
        b.learn(u, y)
    return a, b


def _deployed(fs):
    """The model as deployed, a file beside the checkpoints (as /banana.kb is)."""
    Checkpoint(RKP, DEPLOYED, fs=fs).save(learner())


def cut_points(first=False, initial=True):
    """Power cut at every write and rename of a save (the first save of all when `first`, else
    one that follows a complete save of A), and one past its end; returns (points tried, points
    recovered) and checks each recovery: the restart loads the last complete state (A, or
    before the first save the deployed model: `initial`, or the script's own fallback on
    OSError ENOENT) or the one under way (B), and learns on exactly as that state does."""
    a, b = _two_states()
    if first:
        a = learner()
    tail = steps(12, 5)
    total = FakeFS()
    _deployed(total)
    if not first:
        Checkpoint(RKP, "/m.kb", fs=total).save(a)
    ops_a = total.ops
    Checkpoint(RKP, "/m.kb", fs=total).save(b)
    tried = recovered = 0
    for cut in range(ops_a, total.ops + 1):  # every op of B's save, and one past its end
        fs = FakeFS(cut)
        _deployed(fs)
        if not first:
            Checkpoint(RKP, "/m.kb", fs=fs).save(a)
        try:
            Checkpoint(RKP, "/m.kb", fs=fs).save(b)
        except PowerCut:
            pass
        tried += 1
        fs.restart()
        cp = Checkpoint(RKP, "/m.kb", every=2, fs=fs, initial=DEPLOYED if initial else None)
        try:
            m = cp.load()
        except OSError as e:  # nothing saved yet: what examples/rkp_codes.py does then
            assert first and not initial and e.args[0] == 2, (cut, e.args)
            m = RKP.load(_saved(learner()))
            cp.save(m)
        s = state(m)
        assert s in (state(a), state(b)), cut
        # it goes on exactly as the saved state it came back to, checkpointing as it learns
        ref = a if s == state(a) else b
        ref = RKP.load(_saved(ref))
        for u, y in tail:
            assert cp.learn(u, y) == ref.learn(u, y)
        cp.save()
        assert state(m) == state(ref)
        assert state(Checkpoint(RKP, "/m.kb", fs=fs).load()) == state(ref), cut
        assert "/m.kb.new" not in fs.files
        recovered += 1
    return tried, recovered


def _saved(m):
    fs = FakeFS()
    Checkpoint(None, "/x.kb", fs=fs).save(m)
    return _Reader(bytes(fs.files["/x.kb"]))


def test_a_power_cut_at_every_write_recovers():
    tried, recovered = cut_points()
    assert tried == recovered and tried >= 6  # head, parameters, table, memory, crc, rename


def test_a_power_cut_in_the_first_save_recovers():
    """Issue 28: no PATH yet and a torn PATH.new used to fail every restart."""
    for initial in (True, False):
        tried, recovered = cut_points(first=True, initial=initial)
        assert tried == recovered and tried >= 6


def _file(m):
    return bytearray(_saved(m).data)


def _states():
    """PATH's and PATH.new's possible contents: None (missing), a model file, or damaged."""
    a, b = _two_states()
    fa, fb = _file(a), _file(b)
    corrupt = bytearray(fa)
    corrupt[20] ^= 1
    return a, b, {"missing": None, "valid": fa, "corrupt": corrupt}, {
        "missing": None, "complete": fb, "torn": fb[:len(fb) // 2], "empty": bytearray(),
        "another type": _file(Assoc(0, 4, 2, 2, 3, 2))}


def test_every_state_of_the_two_files():
    """The table in kbit.checkpoint's docstring, every row, with and without `initial`, for
    Checkpoint(RKP, ...) and Checkpoint(None, ...) (to which another learner's complete file is
    a checkpoint like any other)."""
    a, b, paths, news = _states()
    expect = {"valid": paths["valid"], "missing": "initial", "corrupt": "error"}
    n = 0
    for kind in (RKP, None):
        for pk in paths:
            for nk in news:
                for initial in (None, DEPLOYED):
                    fs = FakeFS()
                    _deployed(fs)
                    for name, data in (("/m.kb", paths[pk]), ("/m.kb.new", news[nk])):
                        if data is not None:
                            fs.files[name] = bytearray(data)
                    taken = nk == "complete" or (nk == "another type" and kind is None)
                    want = news[nk] if taken else expect[pk]
                    if want == "initial":
                        want = fs.files[DEPLOYED] if initial else "nothing"
                    try:
                        got = _file(Checkpoint(kind, "/m.kb", fs=fs, initial=initial).load())
                    except OSError as e:
                        assert e.args[0] == 2 and "nothing saved yet" in e.args[1], e.args
                        got = "nothing"
                    except ValueError as e:  # ModelFileError, naming PATH
                        assert str(e).startswith("/m.kb: "), str(e)
                        got = "error"
                    assert got == want, (kind, pk, nk, initial, got)
                    if taken:  # the interrupted save finished: PATH holds B now
                        assert "/m.kb.new" not in fs.files and fs.files["/m.kb"] == news[nk]
                    elif paths[pk] is not None:  # nothing rewritten
                        assert fs.files["/m.kb"] == paths[pk]
                    n += 1
    assert n == 2 * 3 * 5 * 2


def test_a_save_after_an_interrupted_one_keeps_the_newest():
    """PATH.new complete (the cut came before the rename) and a restart: a save cut at any
    point after that must not lose B, which PATH.new alone held."""
    a, b, paths, news = _states()
    c = RKP.load(_saved(b))
    for u, y in steps(6, 6):
        c.learn(u, y)
    for pk in ("missing", "valid"):
        cut = 0
        while True:
            fs = FakeFS()
            if paths[pk] is not None:
                fs.files["/m.kb"] = bytearray(paths[pk])
            fs.files["/m.kb.new"] = bytearray(news["complete"])
            fs.cut = fs.ops + cut
            cp = Checkpoint(RKP, "/m.kb", fs=fs)
            try:
                cp.load()
                cp.save(c)
                done = True
            except PowerCut:
                done = False
            got = state(Checkpoint(RKP, "/m.kb", fs=fs.restart()).load())
            assert got in (state(b), state(c)), (pk, cut)
            if done:
                break
            cut += 1
        assert cut >= 7


def test_a_read_only_filesystem_still_loads():
    """The rename that finishes an interrupted save fails (CircuitPython's filesystem is
    read-only to code while USB has it): load() still returns the newest state."""
    a, b, paths, news = _states()
    fs = FakeFS()
    fs.files["/m.kb"] = bytearray(paths["valid"])
    fs.files["/m.kb.new"] = bytearray(news["complete"])
    fs.full = 0  # the first write or rename fails
    assert state(Checkpoint(RKP, "/m.kb", fs=fs).load()) == state(b)
    assert fs.ops == 1 and fs.files["/m.kb.new"] == news["complete"]


def test_a_failed_save_leaves_nothing_behind():
    a, b, paths, news = _states()
    for k in range(7):  # the filesystem full at each of the 6 writes, then at the rename
        fs = FakeFS(full=k)
        fs.files["/m.kb"] = bytearray(paths["valid"])
        fs.ops = 0
        try:
            Checkpoint(RKP, "/m.kb", fs=fs).save(b)
        except OSError as e:
            assert e.args[0] == 28
        else:
            raise AssertionError("a full filesystem went unnoticed at write %d" % k)
        if k < 6:
            assert fs.files == {"/m.kb": paths["valid"]}, (k, sorted(fs.files))
        else:  # a failed rename: PATH.new complete, which may be the only copy (FAT) and loads
            assert fs.files["/m.kb.new"] == news["complete"]
            assert state(Checkpoint(RKP, "/m.kb", fs=fs).load()) == state(b)


class _Meter:
    """A predictor: it has no learnt state."""

    def predict(self, u):
        return 0


class _Broken(RKP):
    """A learner whose save fails half-way (as a bad model or a full buffer would)."""

    def save(self, stream):
        stream.write(b"KBIT")
        raise ValueError("cannot write this model")


def test_what_cannot_be_saved_is_refused_before_anything_is_written():
    fs = FakeFS()
    for bad in (lambda: Checkpoint(_Meter, "/m.kb", fs=fs),
                lambda: Checkpoint(None, "/m.kb", fs=fs).save(_Meter()),
                lambda: Checkpoint(RKP, "/m.kb", fs=fs).save(Assoc(0, 4, 2, 2, 3, 2))):
        try:
            bad()
        except TypeError as e:
            assert "Checkpoint" in str(e), str(e)
        else:
            raise AssertionError("an unsavable model was taken")
    try:
        Checkpoint(None, "/m.kb", fs=fs).save()
    except ValueError as e:
        assert "no model" in str(e)
    else:
        raise AssertionError("a save of nothing was taken")
    try:
        Checkpoint(RKP, "/m.kb", fs=fs).save(_Broken("laplace", 4, 2, 6, 0, 255, TABLE))
    except ValueError as e:
        assert "cannot write" in str(e)
    else:
        raise AssertionError("the broken save went unnoticed")
    assert fs.files == {}, sorted(fs.files)


def test_a_checkpoint_of_any_type():
    """Checkpoint(None, path): the model of whatever type the file holds."""
    a, b = _two_states()
    c = Assoc(0, 4, 2, 2, 3, 2)
    for u, y in steps(5, 7):
        c.learn(array("b", (u[0] - 8, u[1] - 8, 7 - u[0], 7 - u[1])), y)
    for m in (a, c):
        fs = FakeFS()
        Checkpoint(None, "/m.kb", fs=fs).save(m)
        got = Checkpoint(None, "/m.kb", fs=fs).load()
        assert type(got) is type(m) and _file(got) == _file(m)
    fs = FakeFS()
    fs.files["/m.kb"] = bytearray(b"KBIT\x01\x09" + bytes(10))
    try:
        Checkpoint(None, "/m.kb", fs=fs).load()
    except ValueError as e:
        assert "/m.kb" in str(e) and "type 9" in str(e), str(e)
    else:
        raise AssertionError("an unknown model type was loaded")
    Checkpoint(None, "/m.kb", fs=fs, initial=a).save(a)
    assert state(Checkpoint(None, "/m.kb", fs=fs).load()) == state(a)
    assert state(Checkpoint(None, "/none.kb", fs=fs, initial=b).load()) == state(b)


def test_nothing_valid_is_an_error():
    fs = FakeFS()
    fs.files["/m.kb"] = bytearray(b"KBIT\x01\x01garbage")
    try:
        Checkpoint(RKP, "/m.kb", fs=fs).load()
    except ValueError as e:  # ModelFileError
        assert "truncated" in str(e) or "corrupt" in str(e) or "model" in str(e)
    else:
        raise AssertionError("a corrupt checkpoint was loaded")
    try:
        Checkpoint(RKP, "/none.kb", fs=fs).load()
    except OSError as e:  # named as the user named it, not as PATH.new
        assert e.args[0] == 2 and "/none.kb" in e.args[1] and ".new" not in e.args[1], e.args
    else:
        raise AssertionError("a missing checkpoint was loaded")


def test_every_is_checked():
    for bad in (-1, "3", None):
        try:
            Checkpoint(RKP, "/m.kb", every=bad, fs=FakeFS())
        except ValueError as e:
            assert "every" in str(e)
        else:
            raise AssertionError("every=%r accepted" % (bad,))


if __name__ == "__main__":
    n = 0
    for name, f in sorted(globals().items()):
        if name.startswith("test_"):
            f()
            n += 1
    tried, recovered = cut_points()
    t1, r1 = cut_points(first=True)
    print("kbit checkpoint: %d tests passed; power cuts tried %d, recovered %d; "
          "in the first save tried %d, recovered %d" % (n, tried, recovered, t1, r1))
