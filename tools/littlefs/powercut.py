# kbit checkpoints (kbit.checkpoint) on littlefs with the power cut at every block write and
# every erase, on MicroPython's unix port (vfs.VfsLfs2: littlefs v2 with MicroPython's own VFS
# glue, what the rp2 port mounts on its flash). Run by kilobit.runtimes.micropython.littlefs:
#
#   powercut.py JOB
#
# JOB (JSON, written by the host): "kbit" (module:Class), "model" (hex of the model file as
# deployed), "kind" ("learner": codes are bytes; "classes": int8 values), "x" and "y" (the
# examples), "saves" (after how many examples each checkpoint is saved), "cont" (examples learnt
# after a restart), "blocks" (4096-byte blocks of the flash), "progsize".
#
# The flash is a block device written in Python with NOR semantics: an erase sets a block to
# 0xFF, a write can only clear bits (a byte written where littlefs had not erased is counted).
# For each save, from the flash as the previous save left it and a fresh mount (as after a
# reset): one uncut save counts its block writes and erases; then for every one of them the same
# save again with the power cut as it starts (nothing of it lands) and torn (the first half of
# its bytes land); every later operation fails, as a dead chip's would. After each cut the flash
# is mounted again and kbit's loader must return the last complete checkpoint (the model as
# deployed before the first) or the one under way; the learner then learns the next examples, saves
# a checkpoint on the same filesystem, and a second restart loads it.
#
# Output, a line each: "S save ops erases crc" for the uncut save; "C save op torn which crc r..
# final" for a cut (which: 0 the last complete state, 1 the one under way, -1 neither; crc of
# what was loaded; r the learn results after the restart; final the CRC-32 of the checkpoint
# loaded at the second restart); "F save op torn reason" when a restart fails; "V n" the bytes
# written where the flash was not erased; then "littlefs power cuts: done".
import io
import json
import sys

import vfs

from kbit.checkpoint import Checkpoint
from kbit.kbfile import crc32

BS = 4096
ERASED = b"\xff" * BS
MOUNT = "/flash"
PATH = MOUNT + "/model.kb"


class PowerCut(Exception):
    pass


class Flash:
    """A block device: readblocks/writeblocks with offsets (littlefs's extended interface) and
    ioctl 4 (block count), 5 (block size), 6 (erase). Operation `cut` dies before it lands, or
    torn (half of it lands); every operation after that dies too."""

    def __init__(self, data, cut=-1, torn=False):
        self.data, self.cut, self.torn = data, cut, torn
        self.ops = self.erases = 0
        self.dead = False

    def _dies(self):
        if self.dead:
            raise PowerCut()
        k = self.ops
        self.ops += 1
        if k == self.cut:
            self.dead = True
        return self.dead

    def readblocks(self, n, buf, off=0):
        a = n * BS + off
        buf[:] = self.data[a:a + len(buf)]

    def writeblocks(self, n, buf, off=0):
        global violations
        dies = self._dies()
        a = n * BS + off
        d = self.data
        land = len(buf)
        if dies:
            land = land // 2 if self.torn else 0
        for i in range(land):
            b = buf[i]
            if d[a + i] & b != b:
                violations += 1
            d[a + i] &= b
        if dies:
            raise PowerCut()

    def ioctl(self, op, arg):
        if op == 4:
            return len(self.data) // BS
        if op == 5:
            return BS
        if op == 6:
            self.erases += 1
            dies = self._dies()
            a = arg * BS
            n = (BS // 2 if self.torn else 0) if dies else BS
            self.data[a:a + n] = ERASED[:n]
            if dies:
                raise PowerCut()
        return 0


def mount(data, cut=-1, torn=False):
    f = Flash(data, cut, torn)
    vfs.mount(vfs.VfsLfs2(f, progsize=JOB["progsize"]), MOUNT)
    return f


def umount():
    try:
        vfs.umount(MOUNT)
    except OSError:
        pass


def state(m):
    f = io.BytesIO()
    m.save(f)
    return f.getvalue()


def example(i):
    x = JOB["x"][i]
    if JOB["kind"] == "classes":
        from array import array
        return array("b", x), JOB["y"][i]
    return bytes(x), JOB["y"][i]


def restart(flash, last, under_way, learnt):
    """The board after the cut: mount, load, learn on, save, and load that again."""
    try:
        mount(flash)
    except OSError as e:
        return "littlefs does not mount: %r" % e
    try:
        try:  # nothing saved yet (the first save cut): the model as deployed
            m = Checkpoint(None, PATH, initial=Model.load(MODEL)).load()
        except (OSError, ValueError) as e:  # ModelFileError is a ValueError
            return "no checkpoint loads (%r)" % e
        got = state(m)
        which = 0 if got == last else 1 if got == under_way else -1
        results = []
        for j in range(learnt, learnt + JOB["cont"]):
            x, y = example(j)
            results.append(m.learn(x, y))
        Checkpoint(Model, PATH).save(m)
    finally:
        umount()
    try:
        mount(flash)
        final = state(Checkpoint(Model, PATH).load())
    except (OSError, ValueError) as e:
        return "the checkpoint saved after the restart does not load: %r" % e
    finally:
        umount()
    return "%d %d %s %d" % (which, crc32(got), " ".join(str(r) for r in results), crc32(final))


JOB = json.load(open(sys.argv[1]))
_mod, _cls = JOB["kbit"].split(":")
__import__(_mod)
Model = getattr(sys.modules[_mod], _cls)
MODEL = bytes.fromhex(JOB["model"])
violations = 0

flash = bytearray(ERASED * JOB["blocks"])
vfs.VfsLfs2.mkfs(Flash(flash))
model = Model.load(MODEL)
learnt = 0
last = MODEL
for i, n in enumerate(JOB["saves"]):
    while learnt < n:
        x, y = example(learnt)
        model.learn(x, y)
        learnt += 1
    under_way = state(model)
    before = bytes(flash)
    f = mount(flash)
    Checkpoint(Model, PATH).save(model)
    umount()
    print("S %d %d %d %d" % (i, f.ops, f.erases, crc32(under_way)))
    for k in range(f.ops):
        for torn in (0, 1):
            cut = bytearray(before)
            mount(cut, k, torn)
            try:
                Checkpoint(Model, PATH).save(model)
            except PowerCut:
                pass
            umount()
            r = restart(cut, last, under_way, learnt)
            print("%s %d %d %d %s" % ("C" if r[0] in "-01" else "F", i, k, torn, r))
    last = under_way
print("V %d" % violations)
print("littlefs power cuts: done")
