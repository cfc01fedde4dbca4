# A Random Kernel Perceptron fed one code at a time, as a sensor delivers its readings, then
# told the true class: it predicts each point the moment its last code arrives and keeps
# learning on the board.
#
#   kilobit train rkp --data banana --bits 4 --budget 62 --width -6 --seed 0 -o build/banana.kb
#   kilobit deploy build/banana.kb --board rp2040 --port PORT     # kbit + /banana.kb on the board
#   mpremote connect PORT run examples/rkp_codes.py
#
# What it learns survives a reset or a power cut: it checkpoints to /banana-learnt.kb after every
# 10th mistake and at the end (kbit.checkpoint: a new file, then a rename), and the next run
# starts from there instead of /banana.kb.
#
# STREAM holds the first 60 points of Banana's test split as the board would receive them: the
# class, then the 2 codes (4 bits: the inputs scaled with the model file's scaler, quantized;
# tests/test_boards.py checks that they are). No allocation happens per point: the codes go
# into one bytearray in place, and learn()/predict() lock the heap themselves.
from kbit.checkpoint import Checkpoint
from kbit.rkp import RKP

MODEL = "banana.kb"
LEARNT = "banana-learnt.kb"
STREAM = bytes.fromhex(
    "010a07000b0a000409000309000503010404000603000703000c09010906010905010706010c02000b09000803"
    "000803000a0b000704010808010905000c07010508010a05000803010c02010b0c01070900060b000c08000604"
    "010302000a02010403010402000a0a010908000e04000804000c0700090c00050800070301060800080b000803"
    "010306010b05000c0800090b010909010a06010506010507000a08010e0a010806010a04000a04000804010c04")

cp = Checkpoint(RKP, LEARNT, every=10)
try:
    m = cp.load()  # the newest complete checkpoint of an earlier run
    print("resumed from %s: %d support vectors" % (LEARNT, m.count))
except OSError:  # the first run: the model as trained on the host
    with open(MODEL, "rb") as f:
        m = RKP.load(f)
    cp.save(m)
u = bytearray(m.dims)


def sensor():
    """The stream, one byte at a time: a label, then the point's codes."""
    for b in STREAM:
        yield b


right = mistakes = n = 0
label = None
j = 0
for b in sensor():
    if label is None:
        label = b  # a new point starts with its class (known only after the prediction)
        continue
    u[j] = b
    j += 1
    if j < m.dims:
        continue  # wait for the next code
    pred = m.predict(u)
    cp.learn(u, label)  # the board keeps learning (a checkpoint after every 10th mistake)
    right += pred == label
    mistakes += m.mistake
    print("%2d codes %s -> %d (true %d)" % (n, " ".join("%2d" % c for c in u), pred, label))
    n += 1
    label = None
    j = 0
cp.save()
print("accuracy %d/%d, %d mistakes learnt, %d support vectors" % (right, n, mistakes, m.count))
print("checkpoint %s written" % LEARNT)
