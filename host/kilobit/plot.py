"""The PNG plots of the command line (issue 24), drawn with matplotlib (the kilobit[plot] extra):

    kilobit eval m.kb --data pendigits-10 --plot cm.png     confusion(): the test split's
                                                            confusion matrix
    kilobit stream ... --plot curve.png                     learning_curve(): the running
                                                            accuracy while the board learns

Each is written as every output is (kilobit.core.outfile: whole or not at all); the caller checks
the path before its work starts.
"""
import numpy as np

from kilobit.core import outfile
from kilobit.core.errors import KilobitError

#: the moving window of a learning curve: this fraction of the examples learnt (at least 20)
WINDOW_FRACTION = 0.05


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise KilobitError("--plot needs matplotlib: pip install matplotlib (or the "
                           "kilobit[plot] extra)") from None
    matplotlib.use("Agg")  # files only: no display, the same PNG everywhere
    import matplotlib.pyplot as plt
    return plt


def _save(fig, path):
    plt = _pyplot()
    try:
        with outfile.open(path, "wb") as f:
            fig.savefig(f, format="png", dpi=100)
    finally:
        plt.close(fig)


def confusion(path, matrix, title, labels=None):
    """The confusion matrix `matrix` (rows: true class, columns: predicted) as a PNG: counts in
    the cells, shaded by the share of the true class's rows; the accuracy in the title."""
    plt = _pyplot()
    cm = np.asarray(matrix, dtype=np.int64)
    k = cm.shape[0]
    labels = [str(i) for i in range(k)] if labels is None else [str(x) for x in labels]
    share = cm / np.maximum(cm.sum(axis=1, keepdims=True), 1)
    size = min(12.0, 3.0 + 0.45 * k)
    fig, ax = plt.subplots(figsize=(size + 1.2, size))
    im = ax.imshow(share, cmap="Blues", vmin=0.0, vmax=1.0)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="share of the true class")
    if k <= 30:
        for i in range(k):
            for j in range(k):
                if cm[i, j]:
                    ax.text(j, i, str(cm[i, j]), ha="center", va="center", fontsize=8,
                            color="white" if share[i, j] > 0.5 else "black")
    ax.set_xticks(range(k), labels)
    ax.set_yticks(range(k), labels)
    ax.set_xlabel("predicted class")
    ax.set_ylabel("true class")
    acc = np.trace(cm) / max(cm.sum(), 1)
    ax.set_title("%s\naccuracy %.2f%% on %d rows" % (title, 100.0 * acc, cm.sum()), fontsize=10)
    fig.tight_layout()
    _save(fig, path)


def learning_curve(path, curve, title, reference=None):
    """The learning curve of a stream as a PNG: `curve` is (op, right) for every step in order,
    op "L" for an example learnt (predict, then learn) and "Q"/"P" for a test input. Drawn: the
    running (prequential) accuracy and that of a moving window over the examples learnt, then
    the test accuracy as a level after them (and the host reference's, `reference` in %, when
    given)."""
    plt = _pyplot()
    learn = np.array([r for op, r in curve if op == "L"], dtype=np.float64)
    test = np.array([r for op, r in curve if op != "L"], dtype=np.float64)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    n = len(learn)
    if n:
        x = np.arange(1, n + 1)
        ax.plot(x, 100.0 * np.cumsum(learn) / x, label="running accuracy (predict, then learn)")
        w = max(20, int(WINDOW_FRACTION * n))
        if n > w:
            moving = np.convolve(learn, np.ones(w) / w, mode="valid")
            ax.plot(np.arange(w, n + 1), 100.0 * moving, alpha=0.6,
                    label="the last %d examples" % w)
    if len(test):
        acc = 100.0 * test.mean()
        x0 = n if n else 0
        x1 = x0 + len(test)
        ax.hlines(acc, x0, x1, colors="C3", linewidth=2,
                  label="test accuracy %.2f%% (%d inputs)" % (acc, len(test)))
        if reference is not None and abs(reference - acc) > 1e-9:
            ax.hlines(reference, x0, x1, colors="C2", linestyles="dashed",
                      label="host reference %.2f%%" % reference)
        if n:
            ax.axvline(n, color="grey", linewidth=0.8)
    ax.set_xlabel("examples learnt, then the test inputs" if n and len(test) else
                  "examples learnt" if n else "test inputs")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=9)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    _save(fig, path)
