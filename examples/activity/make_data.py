"""The example's data from BasicMotions (a smart watch's accelerometer, 10 Hz, 10 s per recording;
the UEA archive as the aeon wheel bundles it: `pip install --no-deps aeon`):

    python examples/activity/make_data.py DIR

writes, in milli-units (x 1000, rounded: int16, kilobit.data's basicmotions-raw),
- DIR/feed-ACTIVITY.csv for each activity: its 10 training recordings one after the other, one
  sample a line (x,y,z): what the virtual Pico's sensor gives `kilobit record --feed`;
- DIR/live.txt: the 40 test recordings cut into windows of 50 samples (2 a recording), shuffled
  (seed 0), one a line: the activity, then the window's 150 readings x0 y0 z0 x1 ...: what
  examples/activity/live.py classifies and learns from on the board.
"""
import os
import sys

import numpy as np

from kilobit.data import BASICMOTIONS_CLASSES, RAW_SCALE, basicmotions_series, raw_windows

WINDOW = 50


def main(out):
    os.makedirs(out, exist_ok=True)
    s = basicmotions_series()
    A, y = s["train"]
    for k, name in enumerate(BASICMOTIONS_CLASSES):
        R = np.round(A[y == k, :3] * RAW_SCALE).astype(np.int64)     # (10, 3, 100)
        samples = R.transpose(0, 2, 1).reshape(-1, 3)                  # recording after recording
        np.savetxt(os.path.join(out, "feed-%s.csv" % name), samples, fmt="%d", delimiter=",")
    B, yb = s["test"]
    W, owner = raw_windows(B, window=WINDOW, hop=WINDOW)
    order = np.random.default_rng(0).permutation(len(W))
    with open(os.path.join(out, "live.txt"), "w") as f:
        for i in order:
            f.write("%s %s\n" % (BASICMOTIONS_CLASSES[yb[owner[i]]], " ".join(map(str, W[i]))))
    print("wrote %s: feed-{%s}.csv, live.txt (%d windows)"
          % (out, ",".join(BASICMOTIONS_CLASSES), len(W)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/activity")
