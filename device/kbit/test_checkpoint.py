"""Checkpoints cut by a power failure at every write (kbit.checkpoint), micropython-lib style:
pytest runs this under CPython, and the same file runs as a script on MicroPython
(`node tools/mpwasm/run.mjs device/kbit/test_checkpoint.py`, or the unix port). The filesystem is
a stand-in that applies writes one by one and can die half-way through any of them; after each
cut the learner restarts from what the stand-in holds, which must be the last complete save or
the one being written, and then goes on learning exactly as that saved state does.
"""
from kbit.checkpoint import Checkpoint
from kbit.rkp import RKP

TABLE = (180, 90, 30)


class PowerCut(Exception):
    pass


class FakeFS:
    """Files as bytes; each write() lands in order, and the one at `cut` lands half and dies,
    as does a rename at `cut` (which then never happens: littlefs's rename is atomic)."""

    def __init__(self, cut=-1):
        self.files, self.ops, self.cut = {}, 0, cut

    def _op(self):
        self.ops += 1
        return self.ops - 1 == self.cut

    def open(self, path, mode):
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
    return RKP("laplace", 4, 2, 6, 0, 255, TABLE, state=5)


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


def cut_points():
    """Power cut at every write and rename of a save that follows a complete one: returns
    (points tried, points recovered) and checks each recovery."""
    # the two states: A saved completely, B being saved when the power goes
    a = learner()
    for u, y in steps(15, 3):
        a.learn(u, y)
    b = learner()
    for u, y in steps(15, 3) + steps(10, 4):
        b.learn(u, y)
    tail = steps(12, 5)
    total = FakeFS()
    Checkpoint(RKP, "/m.kb", fs=total).save(a)
    ops_a = total.ops
    Checkpoint(RKP, "/m.kb", fs=total).save(b)
    tried = recovered = 0
    for cut in range(ops_a, total.ops + 1):  # every op of B's save, and one past its end
        fs = FakeFS(cut)
        Checkpoint(RKP, "/m.kb", fs=fs).save(a)
        try:
            Checkpoint(RKP, "/m.kb", fs=fs).save(b)
        except PowerCut:
            pass
        tried += 1
        m = Checkpoint(RKP, "/m.kb", fs=fs).load()  # the restart
        s = state(m)
        assert s in (state(a), state(b)), cut
        # it goes on exactly as the saved state it came back to
        ref = a if s == state(a) else b
        ref = RKP.load(_saved(ref))
        for u, y in tail:
            assert m.learn(u, y) == ref.learn(u, y)
        assert state(m) == state(ref)
        recovered += 1
    return tried, recovered


def _saved(m):
    fs = FakeFS()
    Checkpoint(RKP, "/x.kb", fs=fs).save(m)
    return _Reader(bytes(fs.files["/x.kb"]))


def test_a_power_cut_at_every_write_recovers():
    tried, recovered = cut_points()
    assert tried == recovered and tried >= 6  # head, parameters, table, memory, crc, rename


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
    print("kbit checkpoint: %d tests passed; power cuts tried %d, recovered %d"
          % (n, tried, recovered))
