# A Compressed Kernel Perceptron that goes on learning on the board: a Banana model trained on
# the host keeps predicting, then learning, the points of a stream. Its budget is a number of
# bits (L = 560: 70 bytes); each mistake that is learnt adds a support vector and lowers the
# precision of all of them, or replaces one at random, as the model file's tables decide.
#
#   kilobit train ckp --data banana --L 560 --A 0.1 --bits 6 --seed 0 -o build/ckp.kb
#   mpremote connect PORT cp build/ckp.kb :ckp.kb + run examples/ckp_online.py
#   (kbit on the board first: kilobit deploy build/ckp.kb --board rp2040 --port PORT)
#
# STREAM holds the first 60 points of Banana's test split as the board would receive them: the
# class, then the 2 codes (6 bits: the inputs scaled with the model file's scaler, quantized;
# tests/test_examples.py checks that they are, and that the board prints what the host's integer
# reference computes).
from kbit.ckp import CKP, max_svs, schedule

MODEL = "ckp.kb"
STREAM = bytes.fromhex(
    "01261a002a27001023000c2200140d01110e00180c001c0d002f24012318012514011a19013107002a25001f0d00"
    "1e0a00262b001c0f011f21012415002e1a01142101271200210b012e08012a31011c2200172b002f20001710010d"
    "0900290901100b010e08002828012520003611001f0f002f1d00222e001420001a0c011620001e2c00210a010d16"
    "012d15002f1e00252d01242201271601131601121a00281e01392901211901280f002811002110012e0e")

with open(MODEL, "rb") as f:
    m = CKP.load(f)
print("loaded %s: %d support vectors of at most %d, L = %d bits" % (MODEL, m.count,
                                                                 max_svs(m.L, m.dims), m.L))
u = bytearray(m.dims)
step = 1 + m.dims
right = mistakes = 0
n = len(STREAM) // step
for i in range(n):
    label = STREAM[i * step]
    for j in range(m.dims):
        u[j] = STREAM[i * step + 1 + j]
    pred = m.predict(u)
    m.learn(u, label)  # the board keeps learning
    right += pred == label
    mistakes += m.mistake
    if m.mistake:
        b, n1 = schedule(m.L, m.dims, m.count, m.bits)
        print("%2d codes %s -> %d (true %d): learnt, %d support vectors at %d-%d bits"
              % (i, " ".join("%2d" % c for c in u), pred, label, m.count, b, b + (n1 > 0)))
print("accuracy %d/%d, %d mistakes learnt, %d support vectors" % (right, n, mistakes, m.count))
