"""Issue 29's example end to end on the emulated Pico (examples/activity/live.py's header, step
by step): BasicMotions' recordings streamed into the board's sensor and recorded
(`kilobit record`), a model trained on those windows on the host, deployed and verified, then
live.py classifying unseen windows on the board and learning each one's activity. Every
recorded reading is the feed's, and every prediction the board prints is the one the host's
integer reference computes for the same windows and the same learning steps."""
import os
import re

import numpy as np

from kilobit.core.paths import REPO
from kilobit.data import BASICMOTIONS_CLASSES
from kilobit.runtimes.host import HostRuntime
from test_boards import kilobit, mpremote
from test_record import pico  # noqa: F401 (the emulated Pico served as a board: a fixture)

LIVE = os.path.join(REPO, "examples", "activity", "live.py")
WINDOW, AXES = 50, 3
FEATURES = "mean,mad,min,max,energy,diff,fft32:4"


def header_commands():
    """The `kilobit` commands of live.py's header, continuation lines joined."""
    text = open(LIVE).read().split("\nfrom ", 1)[0]
    text = re.sub(r"\\\n#\s*", " ", text)
    return [" ".join(line.split("#", 1)[1].split()) for line in text.splitlines()
            if line.startswith("#") and line.split("#", 1)[1].strip().startswith("kilobit ")]


def test_the_header_says_what_this_test_runs():
    cmds = header_commands()
    assert any(c.startswith("kilobit record ") and "--window %d" % WINDOW in c
               and "--axes %d" % AXES in c and "--sensor stream" in c for c in cmds), cmds
    assert ("kilobit train rkp --data build/activity/rec.csv --window %d --axes %d "
            "--features %s -o build/activity/activity.kb" % (WINDOW, AXES, FEATURES)) in cmds
    assert "kilobit deploy build/activity/activity.kb --board rp2040 --port PORT --as " \
        "activity.kb" in cmds, cmds


def host_prequential(model, lines):
    """What live.py prints, computed on the host: each window's prediction before the model
    learns it, through the same features, codes and one-vs-rest learners."""
    rt = HostRuntime()
    windows = [[int(v) for v in line.split()[1:]] for line in lines]
    truth = [line.split()[0] for line in lines]
    codes = rt.quantize_rows(model, windows)
    steps = [("L", BASICMOTIONS_CLASSES.index(t), u) for t, u in zip(truth, codes)]
    rows = rt.replay(model, steps)
    out, right = [], 0
    for n, (t, row) in enumerate(zip(truth, rows)):
        guess = BASICMOTIONS_CLASSES[row[1]]
        right += guess == t
        out.append("%2d %-9s -> %s" % (n, t, guess))
    return out + ["prequential accuracy: %d/%d" % (right, len(lines))]


def test_record_train_deploy_classify_and_learn_on_the_emulated_pico(pico, tmp_path):  # noqa: F811
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "make_data", os.path.join(REPO, "examples", "activity", "make_data.py"))
    make_data = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_data)
    d = tmp_path / "activity"
    make_data.main(str(d))
    rec = d / "rec.csv"
    for name in BASICMOTIONS_CLASSES:
        r = kilobit("record", "--port", pico.port, "--sensor", "stream", "--feed",
                    str(d / ("feed-%s.csv" % name)), "--axes", str(AXES), "--window",
                    str(WINDOW), "--rate", "1000", "--label", name, "--append", "-o", str(rec),
                    timeout=300)
        assert r.returncode == 0, r.stderr
    # every recorded window is the feed's readings, in order, with its label
    got = np.genfromtxt(rec, delimiter=",", skip_header=1, dtype=str)
    for name in BASICMOTIONS_CLASSES:
        feed = np.loadtxt(d / ("feed-%s.csv" % name), delimiter=",", dtype=np.int64)
        mine = got[got[:, -1] == name]
        assert len(mine) == len(feed) // WINDOW
        assert (mine[:, :-1].astype(np.int64) ==
                feed[:len(mine) * WINDOW].reshape(len(mine), -1)).all()
    model = d / "activity.kb"
    r = kilobit("train", "rkp", "--data", str(rec), "--window", str(WINDOW), "--axes",
                str(AXES), "--features", FEATURES, "-o", str(model))
    assert r.returncode == 0, r.stderr
    r = kilobit("deploy", str(model), "--board", "rp2040", "--port", pico.port,
                "--as", "activity.kb", timeout=600)
    assert r.returncode == 0 and "model activity.kb verified" in r.stdout, r.stdout + r.stderr
    code, out, err = mpremote(pico.port, "cp", str(d / "live.txt"), ":live.txt", "+", "run",
                              LIVE, timeout=600)
    assert code == 0, out + err
    lines = (d / "live.txt").read_text().splitlines()
    want = host_prequential(model.read_bytes(), lines)
    board = [line for line in out.splitlines() if re.match(r"^( ?\d+ |prequential)", line)]
    assert board == want
    right = int(want[-1].split()[-1].split("/")[0])
    assert right >= 0.75 * len(lines), want[-1]  # four activities: far above chance
