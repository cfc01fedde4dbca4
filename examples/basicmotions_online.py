# Online learning on the board from a replayed sensor stream: BasicMotions, a smart watch's
# accelerometer (10 Hz, 10 s recordings of Standing, Walking, Running, Badminton).
#
#   mpremote cp examples/data/basicmotions_acc.bin : + run examples/basicmotions_online.py
#   (on the virtual board: kilobit board virtual, then the same with `connect PORT` first)
#
# Each recording arrives as 300 signed bytes (x, y, z; 0.25 m/s^2 units, see
# examples/data/make_basicmotions.py). The board turns it into 6 integer features -- per axis the
# mean |a| and the mean |a(t) - a(t-1)|, as 4-bit codes on a log scale -- predicts the activity
# with four one-vs-rest Random Kernel Perceptrons (laplace, B=4, 8 support vectors each: 25 bytes
# of memory per class), prints it, then learns the true label: the prequential protocol of an
# on-device learner. Integer-only; the same stream on the host (kilobit.models.rkp.RKPInt) gives the
# same predictions (tests/test_boards.py checks it on the virtual board).
from kbit.rkp import RKP
from kbit.rng import seed_state

DATA = "basicmotions_acc.bin"
CLASSES = ("Standing", "Walking", "Running", "Badminton")
N = 100  # samples per axis and recording
# kilobit.models.rkp.power_table("laplace", 4, -2), made on the host: the kernel's weight table
TABLE = bytes.fromhex("c79b5e2305")
models = [RKP("laplace", 4, 6, 8, -2, 255, TABLE, seed_state(k + 1)) for k in range(4)]


def code(v):
    """4-bit code of a feature: twice its bit length, at most 15."""
    n = 0
    while v:
        v >>= 1
        n += 1
    return min(15, 2 * n)


def features(rec, u):
    """The 6 codes of one record (class byte, then 3 x 100 signed samples) into u."""
    for a in range(3):
        base = 1 + a * N
        total = 0
        jerk = 0
        prev = 0
        for t in range(N):
            v = rec[base + t]
            if v > 127:
                v -= 256
            total += v if v >= 0 else -v
            if t:
                d = v - prev
                jerk += d if d >= 0 else -d
            prev = v
        u[a] = code(total // N)
        u[3 + a] = code(jerk // (N - 1))


rec = bytearray(1 + 3 * N)
u = bytearray(6)
right = 0
n = 0
with open(DATA, "rb") as f:
    while f.readinto(rec) == len(rec):
        features(rec, u)
        y = rec[0]
        best = 0
        best_score = None
        for k in range(4):
            s = models[k].learn(u, 1 if k == y else 0)  # the score before learning
            if best_score is None or s > best_score:
                best, best_score = k, s
        right += best == y
        print("%2d %-9s -> %-9s" % (n, CLASSES[y], CLASSES[best]))
        n += 1
print("prequential accuracy: %d/%d" % (right, n))
