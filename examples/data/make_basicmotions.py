"""Write examples/data/basicmotions_acc.bin from the BasicMotions .ts files that aeon bundles.

    python examples/data/make_basicmotions.py [DIR]

DIR holds BasicMotions_TRAIN.ts and BasicMotions_TEST.ts (default: the installed aeon's
aeon/datasets/data/BasicMotions). The data: a smart watch's 3-axis accelerometer and gyroscope,
10 Hz for 10 s, four activities (Standing, Walking, Running, Badminton), 40 train + 40 test
recordings; from the UEA multivariate time series archive (Bagnall et al. 2018) as aeon ships it
(BSD-3-Clause). Kept here: the accelerometer only.

Format: 80 records, in the replay order (train and test together, shuffled with
numpy.random.RandomState(0)); a record is 301 bytes: the class (0 Standing, 1 Walking,
2 Running, 3 Badminton), then 100 x-samples, 100 y-samples, 100 z-samples, each
round(4 * value) as a signed byte (units of 0.25, clipped to -127..127).
"""
import os
import sys

import numpy as np

CLASSES = ("Standing", "Walking", "Running", "Badminton")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "basicmotions_acc.bin")


def read_ts(path):
    X, y, data = [], [], False
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.lower() == "@data":
                data = True
                continue
            if data:
                parts = line.split(":")
                X.append([[float(v) for v in p.split(",")] for p in parts[:-1]])
                y.append(CLASSES.index(parts[-1]))
    return np.array(X), y


def main(directory=None):
    if directory is None:
        import aeon
        directory = os.path.join(os.path.dirname(aeon.__file__), "datasets", "data",
                                 "BasicMotions")
    Xtr, ytr = read_ts(os.path.join(directory, "BasicMotions_TRAIN.ts"))
    Xte, yte = read_ts(os.path.join(directory, "BasicMotions_TEST.ts"))
    X = np.concatenate([Xtr, Xte])[:, :3, :]
    y = np.array(ytr + yte)
    order = np.random.RandomState(0).permutation(len(y))
    q = np.clip(np.round(X * 4), -127, 127).astype(np.int8)
    out = bytearray()
    for i in order:
        out.append(int(y[i]))
        out += q[i].tobytes()
    with open(OUT, "wb") as f:
        f.write(out)
    print("wrote %s: %d records" % (OUT, len(order)))


if __name__ == "__main__":
    main(*sys.argv[1:])
