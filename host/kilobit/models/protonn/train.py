"""ProtoNN (Gupta et al., ICML 2017): numpy trainer, float model, quantization to the integer
model of docs/contract.md section 10 (`kilobit.models.protonn.ProtoNNInt`).

    y(x) = rho( sum_j z_j exp(-gamma^2 ||W x - b_j||^2) )                  (paper eq. 1)

W (d x D) is a sparse projection, b_j (m prototypes in the projected space) and z_j (their
label vectors, L scores) are learnt jointly under the sparsity constraints ||W||_0 <= s_W,
||B||_0 <= s_B, ||Z||_0 <= s_Z with the squared loss (paper eq. 2):

    R(Z, B, W) = 1/n sum_i ||y_i - sum_j z_j K(b_j, W x_i)||^2

Training is the paper's Algorithm 1: T alternating iterations, each running e epochs of
projected (stochastic) gradient descent on Z, then on B, then on W, every step followed by hard
thresholding HT_s to the s largest entries. Step sizes (section 4): each block's subproblem
starts with the step eta_0 of the Armijo rule (on the training objective, a subsample of at most
GAMMA_SAMPLE rows), then takes eta_0 / t in its epoch t. (Read with t counting the alternating
iterations instead, the step shrinks too early: on letter-26, MNIST-2 and digits-binary the
per-subproblem reading reached 1-2 points more in the same time.) Initialisation (section 4):
W Gaussian, prototypes by k-means per class in the projected space (random training points for
multilabel), Z the prototypes' label vectors, gamma = 2.5 / median ||b_j - W x_i|| (section 6).
Label vectors: +-1 for a binary score and for multilabel (so the device's rho, S > 0, is the
decision), one-hot {0, 1} for multi-class (argmax).

Two guards the paper does not spell out, both for robustness (EdgeML's PyTorch version collapses
to the majority class from the median initialisation at a fixed learning rate): an epoch that
raises the full training objective is undone and the rest of its subproblem takes half the
step, and the parameters of the best alternating iteration (training objective) are kept.

Inputs are what the device sees, x01 = code / 2^B; like Bonsai the trainer standardises with the
per-feature training mean and one global spread (the paper standardises each feature; a
per-feature variance would blow up near-constant pixels, and one int8 scale per projected
dimension has to hold all of a column). The standardisation is folded into the projection when
quantizing.

Budgets are bytes on the device (contract 7.2, indices included): `split_budget` turns a byte
budget into the counts s_W, s_B, s_Z, sized so that any s_* non-zero weights fit whatever their
positions (a SPARSE weight costs 1 + wbytes, plus at most one escape byte per 255 positions).
"""
import sys
import time

import numpy as np

from kilobit.core.errors import KilobitError
from kilobit.core.fixedpoint import ACT_MAX, SMALL, pow2_exponent, qmax, quantize, range_exponent
from kilobit.core.proj import SHIFT_MAX, quantize_projection
from kilobit.models.protonn.model import (
    BSHIFT_MAX,
    MULTILABEL_MAX,
    TABLE_MAX,
    ProtoNNInt,
    check_params,
    fixed_bytes,
    n_scores,
)

GAMMA_MEDIAN = 2.5  # the paper's gamma = 2.5 / median distance (section 6)
TABLE_DEFAULT = 128  # kernel table entries the budget reserves by default (2 bytes each)
KMEANS_ITERS = 25
GAMMA_SAMPLE = 4000  # rows the median heuristic and the Armijo search look at, at most


# ----------------------------------------------------------------------------------------------
# The float model, its objective and gradient

def forward(W, B, Z, gamma, X):
    """Scores S (n x L) and the intermediates the gradient needs: P = X W^T (n x d), the
    squared distances D2 (n x m) and the kernel values K (n x m)."""
    P = X @ W.T
    D2 = sqdist(P, B)
    K = np.exp(-(gamma * gamma) * D2)
    return K @ Z, (P, D2, K)


def sqdist(P, B):
    """||P_i - B_j||^2 for every row pair (n x m), clipped at 0 against rounding."""
    return np.maximum((P * P).sum(axis=1)[:, None] - 2.0 * P @ B.T
                      + (B * B).sum(axis=1)[None, :], 0.0)


def loss_and_grad(W, B, Z, gamma, X, Y, blocks=("W", "B", "Z", "gamma"), P=None):
    """The paper's objective (mean squared loss, eq. 2 without its constraints) and its
    gradient with respect to the named blocks. X: n x D standardised inputs, Y: n x L targets.
    P: the projection X W^T when already known (the Z and B phases reuse it)."""
    n = X.shape[0] if X is not None else P.shape[0]
    if P is None:
        P = X @ W.T
    D2 = sqdist(P, B)
    g2 = gamma * gamma
    K = np.exp(-g2 * D2)
    R = K @ Z - Y
    loss = float((R * R).sum() / n)
    dS = (2.0 / n) * R
    grad = {}
    if "Z" in blocks:
        grad["Z"] = K.T @ dS
    if {"W", "B", "gamma"} & set(blocks):
        dK = dS @ Z.T
        dD2 = -g2 * K * dK  # d loss / d D2_ij
        if "B" in blocks:
            grad["B"] = -2.0 * (dD2.T @ P - dD2.sum(axis=0)[:, None] * B)
        if "W" in blocks:
            dP = 2.0 * (dD2.sum(axis=1)[:, None] * P - dD2 @ B)
            grad["W"] = dP.T @ X
        if "gamma" in blocks:
            grad["gamma"] = float((dK * K * D2).sum() * (-2.0 * gamma))
    return loss, grad


def hard_threshold(A, s):
    """HT_s: A with all but its s largest-magnitude entries set to 0 (None: A unchanged).
    Ties are broken by position (the lower index is kept), so the result is deterministic."""
    if s is None or s >= A.size:
        return A
    flat = np.abs(A).ravel()
    keep = np.lexsort((np.arange(flat.size), -flat))[:s]
    out = np.zeros(A.size)
    out[keep] = A.ravel()[keep]
    return out.reshape(A.shape)


class ProtoNNFloat:
    """A trained float model: W (d x D, standardised space), B (m x d), Z (m x L), gamma, the
    standardisation (mu, g) and the device input bits. Evaluated on x01 = codes / 2^B."""

    def __init__(self, W, B, Z, gamma, mu, g, in_bits, classes, multilabel=False):
        self.W, self.B, self.Z = (np.asarray(a, dtype=np.float64) for a in (W, B, Z))
        self.gamma = float(gamma)
        self.mu, self.g = np.asarray(mu, dtype=np.float64), float(g)
        self.in_bits, self.classes, self.multilabel = in_bits, classes, bool(multilabel)
        self.d, self.dims = self.W.shape
        self.m, self.L = self.Z.shape

    def standardise(self, X01):
        return (np.asarray(X01, dtype=np.float64) - self.mu) / self.g

    def scores(self, X01):
        return forward(self.W, self.B, self.Z, self.gamma, self.standardise(X01))[0]

    def predict(self, X01):
        return rho(self.scores(X01), self.L, self.multilabel)

    def folded(self):
        """(Wf, bf) with W xt = Wf x01 + bf: the standardisation folded into the projection."""
        Wf = self.W / self.g
        return Wf, -Wf @ self.mu

    def nnz(self):
        return {k: int(np.count_nonzero(getattr(self, k))) for k in ("W", "B", "Z")}


def rho(S, L, multilabel=False):
    """The decision of contract 10.1 on a score matrix (n x L): sign, argmax or bit mask."""
    if multilabel:
        return ((S > 0) * (1 << np.arange(L))[None, :]).sum(axis=1).astype(np.int64)
    if L == 1:
        return (S[:, 0] > 0).astype(np.int64)
    return S.argmax(axis=1)


# ----------------------------------------------------------------------------------------------
# Byte budgets

def sparse_count(nbytes, size, wbytes):
    """The most non-zero weights of a `size`-entry matrix whose SPARSE stream fits `nbytes`
    wherever they sit: 1 + wbytes each, plus the escape bytes of gaps of 255 positions or more
    (at most size // 255 of them)."""
    return max(0, (nbytes - size // 255) // (1 + wbytes))


def split_budget(budget, dims, d, m, L, wbits, nt=TABLE_DEFAULT):
    """(s_W, s_B, s_Z): the sparsities (non-zero counts, None for dense) that keep a model's
    device bytes within `budget`. Z (m x L, small) is dense when it takes at most a quarter of
    the bytes left after the fixed part, else sparse in that quarter; B is dense when it fits
    in the rest of the first half, else sparse in it; W gets what remains (the paper fixes
    s_B = s_Z = 0.8 and sizes s_W and m to the budget; here m is the user's, and B and Z stay
    dense whenever they fit). KilobitError when the budget cannot hold a usable model."""
    wb = wbits // 8
    fixed = fixed_bytes(d, nt)
    avail = budget - fixed
    if avail <= 0:
        raise KilobitError("a budget of %d B does not even hold the model's fixed %d B "
                           "(header, projection shifts and biases, %d-entry kernel table)"
                           % (budget, fixed, nt))
    nw, nb, nz = dims * d, m * d, m * L
    wd, bd, zd = nw * wb, nb * wb, nz * wb
    if wd + bd + zd <= avail:
        return None, None, None
    bz = min(zd, avail // 4)
    bb = min(bd, avail // 2 - bz)
    s_Z = None if bz >= zd else sparse_count(bz, nz, wb)
    s_B = None if bb >= bd else sparse_count(bb, nb, wb)
    bw = avail - bz - bb
    s_W = None if bw >= wd else sparse_count(bw, nw, wb)
    for name, s, need in (("W", s_W, d), ("B", s_B, 0), ("Z", s_Z, m)):
        if s is not None and s < need:
            raise KilobitError("a budget of %d B leaves room for %d non-zero weights in %s "
                               "(fixed part %d B); at least %d are needed for d=%d, m=%d: "
                               "raise the budget or lower the projection or prototypes"
                               % (budget, s, name, fixed, need, d, m))
    return s_W, s_B, s_Z


# ----------------------------------------------------------------------------------------------
# Initialisation

def kmeans(X, k, rng, iters=KMEANS_ITERS):
    """k centres of the rows of X: k-means++ seeding, then Lloyd iterations (deterministic for
    a given generator). Fewer rows than k: the rows, repeated."""
    n = X.shape[0]
    if n <= k:
        return X[np.arange(k) % n].copy()
    C = np.empty((k, X.shape[1]))
    C[0] = X[rng.integers(n)]
    d2 = ((X - C[0]) ** 2).sum(axis=1)
    for i in range(1, k):
        tot = d2.sum()
        j = rng.choice(n, p=d2 / tot) if tot > 0 else rng.integers(n)
        C[i] = X[j]
        d2 = np.minimum(d2, ((X - C[i]) ** 2).sum(axis=1))
    for _ in range(iters):
        a = sqdist(X, C).argmin(axis=1)
        moved = False
        for i in range(k):
            pts = X[a == i]
            if len(pts):
                c = pts.mean(axis=0)
                moved |= not np.allclose(c, C[i])
                C[i] = c
        if not moved:
            break
    return C


def per_class_counts(y, K, m):
    """Prototypes per class: m split evenly over the classes present, the remainder to the
    largest classes; a class with no training point gets none."""
    counts = np.bincount(y, minlength=K)
    present = np.flatnonzero(counts)
    if m < len(present):
        raise KilobitError("%d prototypes for %d classes: need at least one per class"
                           % (m, len(present)))
    out = np.zeros(K, dtype=np.int64)
    out[present] = m // len(present)
    for c in present[np.argsort(-counts[present], kind="stable")][:m % len(present)]:
        out[c] += 1
    return out


def targets(y, K, multilabel):
    """(Y n x L, L): +-1 for one binary score or multilabel, one-hot {0, 1} for multi-class."""
    if multilabel:
        Y = np.asarray(y, dtype=np.float64)
        return 2.0 * Y - 1.0, Y.shape[1]
    if K <= 2:
        return (2.0 * y - 1.0)[:, None], 1
    return np.eye(K)[y], K


def init_params(Xt, y, Y, K, d, m, multilabel, s, rng):
    """W Gaussian (hard thresholded to s_W), B by k-means per class in the projected space
    (multilabel: random training points), Z the prototypes' label vectors; gamma by the
    median heuristic. s: (s_W, s_B, s_Z)."""
    n, D = Xt.shape
    W = hard_threshold(rng.normal(0.0, 1.0 / np.sqrt(D), (d, D)), s[0])
    P = Xt @ W.T
    if multilabel:
        idx = rng.choice(n, m, replace=m > n)
        B, Z = P[idx].copy(), Y[idx].copy()
    else:
        counts = per_class_counts(y, K, m)
        Bs, Zs = [], []
        for c in range(K):
            if counts[c]:
                Bs.append(kmeans(P[y == c], int(counts[c]), rng))
                Zs.append(np.repeat(Y[np.flatnonzero(y == c)[:1]], counts[c], axis=0))
        B, Z = np.concatenate(Bs), np.concatenate(Zs)
    B, Z = hard_threshold(B, s[1]), hard_threshold(Z, s[2])
    sub = rng.choice(n, min(n, GAMMA_SAMPLE), replace=False)
    Ps = P[sub]
    dist = np.sqrt(sqdist(Ps, B))
    med = float(np.median(dist))
    gamma = GAMMA_MEDIAN / med if med > 0 else 1.0
    return W, B, Z, gamma


# ----------------------------------------------------------------------------------------------
# Training (Algorithm 1)

def armijo_step(f, x, g, sigma=0.5, eta=1.0, limit=60):
    """The Armijo rule: the largest eta = eta_start * 2^k (k integer) with
    f(x - eta g) <= f(x) - sigma * eta * ||g||^2, searching up from eta while it holds and
    down while it fails. 0.0 when no step decreases f (a zero gradient). The step is judged
    before hard thresholding: once the support changes, no step of a sparse iterate need meet
    the condition, and the search would shrink to nothing."""
    f0 = f(x)
    gg = float((g * g).sum())
    if gg == 0.0:
        return 0.0

    def ok(e):
        return f(x - e * g) <= f0 - sigma * e * gg

    if ok(eta):
        for _ in range(limit):
            if not ok(2.0 * eta):
                break
            eta *= 2.0
        return eta
    for _ in range(limit):
        eta *= 0.5
        if ok(eta):
            return eta
    return 0.0


def train(X01, y, d=10, m=20, s=(None, None, None), gamma=None, multilabel=False, in_bits=8,
          iters=30, epochs=5, batch=None, seed=0, log=None):
    """Train ProtoNN on x01 inputs (n x D) and labels (0..K-1, or an n x K 0/1 matrix when
    multilabel). Returns ProtoNNFloat.

    s: (s_W, s_B, s_Z), non-zero counts kept by hard thresholding (None: dense). iters: T
    alternating iterations; epochs: e epochs per block per iteration; batch: minibatch size
    (None: full gradient descent, the paper's choice for small data sets). gamma: None for the
    median heuristic. log: callable taking a line of progress."""
    X01 = np.asarray(X01, dtype=np.float64)
    n, D = X01.shape
    y = np.asarray(y, dtype=np.int64)
    if multilabel:
        K = y.shape[1]
    else:
        K = int(y.max()) + 1
        if len(np.unique(y)) < 2:
            raise KilobitError("need at least 2 classes")
    Y, L = targets(y, K, multilabel)
    mu = X01.mean(axis=0)
    g = float((X01 - mu).std()) or 1.0
    Xt = (X01 - mu) / g
    rng = np.random.default_rng(seed)
    W, B, Z, g0 = init_params(Xt, y, Y, K, d, m, multilabel, s, rng)
    gamma = g0 if gamma is None else float(gamma)
    say = log or (lambda line: None)
    t0 = time.time()
    sub = np.sort(rng.choice(n, min(n, GAMMA_SAMPLE), replace=False))
    bs = n if batch is None or batch >= n else int(batch)
    sW, sB, sZ = s

    def objective(W, B, Z, P=None):
        return loss_and_grad(W, B, Z, gamma, Xt, Y, blocks=(), P=P)[0]

    def report(t, obj):
        S = forward(W, B, Z, gamma, Xt)[0]
        acc = float(((rho(S, L, multilabel) == (rho(Y, L, True) if multilabel else y))).mean())
        say("protonn iter %3d  objective %.5f  train acc %.4f  nnz W %d B %d Z %d  "
            "gamma %.4g  %.1fs" % (t, obj, acc, np.count_nonzero(W), np.count_nonzero(B),
                                   np.count_nonzero(Z), gamma, time.time() - t0))

    Xs, Ys = Xt[sub], Y[sub]

    def armijo(blk, W, B, Z, start=1.0):
        """eta_0 of a block by the Armijo rule at (W, B, Z), on a subsample for large n; the
        search starts from `start` (the block's previous eta_0: a few evaluations, not tens)."""
        Ps = Xs @ W.T
        if blk == "W":
            f = lambda w: loss_and_grad(w, B, Z, gamma, Xs, Ys, ())[0]  # noqa: E731
        elif blk == "B":
            f = lambda b: loss_and_grad(W, b, Z, gamma, None, Ys, (), P=Ps)[0]  # noqa: E731
        else:
            f = lambda z: loss_and_grad(W, B, z, gamma, None, Ys, (), P=Ps)[0]  # noqa: E731
        gr = loss_and_grad(W, B, Z, gamma, Xs, Ys, (blk,), P=Ps)[1][blk]
        x = {"W": W, "B": B, "Z": Z}[blk]
        return armijo_step(f, x, gr, eta=start) or 1e-3  # no descent here: a small step anyway

    eta0 = {blk: armijo(blk, W, B, Z) for blk in ("Z", "B", "W")}
    say("protonn n=%d D=%d d=%d m=%d L=%d s_W=%s s_B=%s s_Z=%s gamma=%.4g eta0 Z %.3g B %.3g "
        "W %.3g batch %d" % (n, D, d, m, L, sW, sB, sZ, gamma, eta0["Z"], eta0["B"], eta0["W"],
                             bs))
    obj = objective(W, B, Z)
    best = (obj, W.copy(), B.copy(), Z.copy())
    report(0, obj)
    every = max(1, iters // 6)
    for t in range(1, iters + 1):
        P = Xt @ W.T
        for blk in ("Z", "B", "W"):
            if t > 1:
                eta0[blk] = armijo(blk, W, B, Z, eta0[blk])
            for ep in range(epochs):
                order = rng.permutation(n) if bs < n else np.arange(n)
                saved = (W.copy(), B.copy(), Z.copy())
                eta = eta0[blk] / (ep + 1)
                for i in range(0, n, bs):
                    idx = order[i:i + bs]
                    if blk == "W":
                        gr = loss_and_grad(W, B, Z, gamma, Xt[idx], Y[idx], ("W",))[1]["W"]
                        W = hard_threshold(W - eta * gr, sW)
                    else:
                        gr = loss_and_grad(W, B, Z, gamma, None, Y[idx], (blk,),
                                           P=P[idx])[1][blk]
                        if blk == "Z":
                            Z = hard_threshold(Z - eta * gr, sZ)
                        else:
                            B = hard_threshold(B - eta * gr, sB)
                if blk == "W":
                    P = Xt @ W.T
                new = objective(W, B, Z, P)
                if not np.isfinite(new) or new > obj:
                    # the step was too long: undo the epoch, halve the subproblem's eta_0
                    W, B, Z = saved
                    P = Xt @ W.T
                    eta0[blk] *= 0.5
                else:
                    obj = new
        if obj < best[0]:
            best = (obj, W.copy(), B.copy(), Z.copy())
        if t % every == 0 or t == iters:
            report(t, obj)
    obj, W, B, Z = best
    say("protonn kept the iterate of objective %.5f" % obj)
    return ProtoNNFloat(W, B, Z, gamma, mu, g, in_bits, K, multilabel)


# ----------------------------------------------------------------------------------------------
# Quantization to the integer model (docs/contract.md section 10)

KERNEL_CUTOFF = float(np.log(2.0 * ACT_MAX))  # exp(-t) * 32767 rounds to 0 past this t


def kernel_table(gamma, eP, nt_max=TABLE_DEFAULT):
    """(dshift, kshift, table) for squared distances in P's units (2^eP per float unit).

    D = sum_r rshift_round(e_r^2, dshift) is about ||e||^2 / 2^dshift, so the kernel is
    exp(-a D) with a = gamma^2 2^(dshift - 2 eP). dshift is the least shift that keeps every D up
    to the cut-off (where 32767 exp(-t) rounds to 0) below 2^29, far from the saturation at
    SMALL; kshift the least that spreads the cut-off over at most nt_max entries. Entry i is
    32767 times the mean of exp(-a D) over the integers D of its bin, i << kshift ..
    ((i + 1) << kshift) - 1, rounded; trailing zeros are dropped (an index past the table reads
    0 anyway)."""
    a0 = gamma * gamma * 2.0 ** (-2 * eP)
    if not a0 > 0:
        raise KilobitError("cannot quantize: gamma %r" % (gamma,))
    Dc = KERNEL_CUTOFF / a0  # the cut-off in units of P^2
    dshift = 0
    while Dc / 2.0 ** dshift > 2.0 ** 29 and dshift < SHIFT_MAX:
        dshift += 1
    a = a0 * 2.0 ** dshift
    Dc = KERNEL_CUTOFF / a
    kshift = 0
    while np.ceil(Dc / 2.0 ** kshift) > nt_max and kshift < SHIFT_MAX:
        kshift += 1
    w = 2.0 ** kshift
    nt = int(min(nt_max, max(1, np.ceil(Dc / w))))
    i = np.arange(nt, dtype=np.float64)
    mean = np.expm1(-a * w) / (w * np.expm1(-a)) if a * w > 0 else 1.0
    table = np.floor(ACT_MAX * np.exp(-a * w * i) * mean + 0.5).astype(np.int64)
    table = np.clip(table, 0, ACT_MAX)
    nz = np.flatnonzero(table)
    table = table[:nz[-1] + 1] if nz.size else table[:1]
    return dshift, kshift, table


def quantize_model(fm, codes_train, wbits, nt=TABLE_DEFAULT):
    """ProtoNNInt from a ProtoNNFloat, power-of-two scales chosen on the training codes.

    P's scale eP holds the training projections and the prototypes with 2x headroom; the
    prototypes are stored in P's units shifted by bshift (the least that fits the weight
    width); the kernel table as `kernel_table`; Z gets one scale for all its columns (the
    argmax compares them) within the contract's column bound."""
    q = qmax(wbits)
    Bin = fm.in_bits
    X01 = np.asarray(codes_train, dtype=np.float64) / (1 << Bin)
    Wf, bf = fm.folded()
    zh = X01 @ Wf.T + bf
    top = max(float(np.abs(zh).max(initial=0.0)), float(np.abs(fm.B).max(initial=0.0)))
    eP = range_exponent(top, ACT_MAX // 2)
    pj, eP = quantize_projection(Wf, bf, Bin, wbits, eP)
    Bs = fm.B * 2.0 ** eP
    bshift = 0
    while bshift < BSHIFT_MAX and np.floor(np.abs(Bs).max(initial=0.0) / 2 ** bshift + 0.5) > q:
        bshift += 1
    Bq = quantize(Bs, -bshift, q)
    Bq = np.clip(Bq, -(ACT_MAX >> bshift), ACT_MAX >> bshift)
    dshift, kshift, table = kernel_table(fm.gamma, eP, nt)
    eZ = min(pow2_exponent(fm.Z[:, cl], q, l1_limit=SMALL, in_max=ACT_MAX) for cl in range(fm.L))
    Zq = quantize(fm.Z, eZ, q)
    m = ProtoNNInt(pj, Bq, bshift, dshift, kshift, [int(v) for v in table], Zq, fm.classes,
                   multilabel=fm.multilabel)
    m.scales = dict(eP=eP, eZ=eZ)
    return m


# ----------------------------------------------------------------------------------------------
# Estimator: raw features in, the CLI's and the benchmark's entry point

class ProtoNN:
    """Min-max scaling (training split only), B-bit codes, train, quantize.

        est = ProtoNN(d=10, m=20, budget=2048).fit(X, y)
        est.float_.predict(codes / 2^B), est.int_[8].predict(codes), est.to_bytes(8)

    budget: bytes on the device at `wbits` (None: dense). epochs: (T alternating iterations,
    e epochs per block). batch: minibatch size (None: full gradient descent). nt: kernel table
    entries the budget reserves (the quantizer uses at most that many). y: labels 0..K-1, or an
    n x K 0/1 matrix (multilabel)."""

    def __init__(self, d=10, m=20, budget=None, gamma=None, wbits=8, in_bits=8, epochs=(30, 5),
                 batch=None, nt=TABLE_DEFAULT, seed=0, log=None):
        err = check_params(wbits, in_bits, 1, d, m, 2, 0)
        if err:
            raise KilobitError("bad ProtoNN parameters: " + err)
        if not 1 <= nt <= TABLE_MAX:
            raise KilobitError("kernel table of %r entries, not 1..%d" % (nt, TABLE_MAX))
        T, e = epochs
        if T < 0 or e < 0:
            raise KilobitError("epochs wants two non-negative counts, got %r" % (epochs,))
        self.d, self.m, self.budget, self.gamma = d, m, budget, gamma
        self.wbits, self.in_bits, self.epochs, self.batch = wbits, in_bits, (T, e), batch
        self.nt, self.seed, self.log = nt, seed, log

    def codes(self, X):
        from kilobit.core.quant import quantize as qcodes
        return qcodes(self.scaler_.transform(X), self.in_bits)

    def fit(self, X, y):
        from kilobit.core.quant import fit_inputs
        self.scaler_ = fit_inputs(X, self.in_bits)
        C = self.codes(X)
        y = np.asarray(y)
        multilabel = y.ndim == 2
        if len(y) != len(C):
            raise KilobitError("%d rows of features but %d labels" % (len(C), len(y)))
        if multilabel:
            if not np.isin(y, (0, 1)).all():
                raise KilobitError("multilabel targets must be 0/1")
            K = y.shape[1]
            if K > MULTILABEL_MAX:
                raise KilobitError("multilabel models hold at most %d labels, got %d"
                                   % (MULTILABEL_MAX, K))
        else:
            if y.ndim != 1 or y.dtype.kind not in "iub" or (y.size and y.min() < 0):
                raise KilobitError("labels must be integers 0..K-1 (or a 0/1 matrix)")
            K = int(y.max()) + 1
            if K > 255:
                raise KilobitError("%d classes; ProtoNN models hold at most 255" % K)
        if C.shape[1] > 0xFFFF:
            raise KilobitError("%d features; at most 65535" % C.shape[1])
        L = n_scores(K, multilabel)
        s = (None, None, None)
        if self.budget is not None:
            s = split_budget(self.budget, C.shape[1], self.d, self.m, L, self.wbits, self.nt)
        t0 = time.time()
        self.s_ = s
        self.float_ = train(C / float(1 << self.in_bits), y, d=self.d, m=self.m, s=s,
                            gamma=self.gamma, multilabel=multilabel, in_bits=self.in_bits,
                            iters=self.epochs[0], epochs=self.epochs[1], batch=self.batch,
                            seed=self.seed, log=self.log)
        self.train_seconds_ = time.time() - t0
        self.int_ = {w: quantize_model(self.float_, C, w, self.nt) for w in (16, 8)}
        if self.budget is not None and self.int_[self.wbits].device_bytes() > self.budget:
            raise KilobitError("the quantized model takes %d B on the device, over the budget "
                               "of %d B" % (self.int_[self.wbits].device_bytes(), self.budget))
        return self

    def predict(self, X):
        """The integer model's predictions (what the device answers) at `wbits`."""
        return self.int_[self.wbits].predict(self.codes(X))

    def to_bytes(self, wbits=8, labels=None, pipeline=None):
        from kilobit.core import kbfile
        return self.int_[wbits].to_bytes(scaler=kbfile.Extras.of(self.scaler_, labels, pipeline))


def stderr_log(line):
    print(line, file=sys.stderr, flush=True)
