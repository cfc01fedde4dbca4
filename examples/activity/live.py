# Activity recognition that keeps learning on the board: each window of raw acceleration becomes
# its features, then the model's codes, then a prediction; then the board learns the window's
# true activity (the prequential protocol of an on-device learner). The host computes exactly
# the same predictions (tests/test_activity.py checks it on the emulated Pico).
#
#   python examples/activity/make_data.py build/activity           (the data, from BasicMotions)
#   kilobit board virtual --board rp2040                            (prints its PORT)
#   kilobit record --port PORT --sensor stream --feed build/activity/feed-Walking.csv \
#       --axes 3 --window 50 --rate 1000 --label Walking --append -o build/activity/rec.csv
#       (and the same for Badminton, Running, Standing)
#   kilobit train rkp --data build/activity/rec.csv --window 50 --axes 3 \
#       --features mean,mad,min,max,energy,diff,fft32:4 -o build/activity/activity.kb
#   kilobit deploy build/activity/activity.kb --board rp2040 --port PORT --as activity.kb
#   mpremote connect PORT cp build/activity/live.txt :live.txt + run examples/activity/live.py
#
# On a real board the windows come from the sensor instead of live.txt, e.g.
#   from kbit.sensor import Accel, Sampler
#   s = Sampler(Accel(I2C(0), kind="lis3dh", hz=10), n=50, period_us=100000); s.fill()
#   label = w.predict(s.window)
# and the true activity, when the user gives one (a button, the REPL), goes to w.learn.
from array import array

import kbit
from kbit.pipeline import Window

m = kbit.load("activity.kb")
w = Window(m)  # the file's pipeline: 50 samples x 3 axes -> features -> codes
window = array("h", bytes(2 * w.size))
right = 0
n = 0
with open("live.txt") as f:
    for line in f:
        fields = line.split()
        truth = fields[0]
        for i in range(w.size):
            window[i] = int(fields[1 + i])
        guess = w.predict(window)  # before learning: what the board would have said
        w.learn(window, truth)
        right += guess == truth
        print("%2d %-9s -> %s" % (n, truth, guess))
        n += 1
print("prequential accuracy: %d/%d" % (right, n))
