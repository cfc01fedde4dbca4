"""Bonsai (Kumar, Goyal & Varma, ICML 2017): numpy trainer, float model, integer reference.

    y(x) = sum_k I_k(x) W_k^T Zx o tanh(sigma V_k^T Zx)                    (paper eq. 1)

A balanced tree of depth h (2^h - 1 internal nodes, N = 2^(h+1) - 1 nodes), branching left at
internal node j when theta_j^T Zx > 0; every node on the path predicts. Here Zx is the
projected vector zhat = Z xt + b of the standardised input xt = (x01 - mu) / g, where x01 is
what a device sees (B-bit codes / 2^B), mu the per-feature training mean and g one global
spread; b is a learnt bias of the projection (the paper's data sets carry a constant feature
for it).

Training (paper section 4), gradient based with Adam on minibatches:
  1. an unconstrained start (all of Z and Theta = [theta, W, V] free), path indicators relaxed
     to I_child = I_parent (1 +- tanh(sigma_I theta^T zhat)) / 2 with sigma_I annealed upwards;
  2. iterative hard thresholding (IHT): gradient steps on the current support, and every
     `iht_every` steps one step on the full support followed by keeping the largest weights
     that fit the byte budgets B_Z and B_Theta (bytes as stored on the device, indices
     included: kilobit.core.smat), sigma_I still rising;
  3. retraining on the final support with hard paths and the device's tanh approximation
     (x for |x| < 1, else sign), so the float model is the function the device computes.

Losses: binary hinge max(0, 1 - y y(x)), y in {-1, +1}; multi-class the paper's
max_y((y - y_i)^T y(x) + 1 - y_i^T y) (Crammer-Singer; the paper prints the first difference
the other way round, which would reward a low score for the true class).

The integer model (`BonsaiInt`, docs/contract.md section 8) is the contract in executable form:
device/kbit/bonsai.py and firmware_c/kb_bonsai.h agree with it bit for bit.
"""
import struct
import sys
import time

import numpy as np

from kilobit.core import kbfile, smat
from kilobit.core.errors import KilobitError
from kilobit.core.fixedpoint import (
    ACT_MAX,
    SMALL,
    pow2_exponent,
    qmax,
    quantize,
    range_exponent,
    rshift_round,
    sat,
)

# PROJ_MAX and golden_inputs are kilobit.core.proj's, re-exported (the redundant alias) for the
# callers that know them as bonsai's (bonsai.commands, the tests)
from kilobit.core.proj import (
    HEAD as _HEAD,
    HEAD_BYTES,
    PROJ_MAX as PROJ_MAX,
    SHIFT_MAX,
    check_params as check_projection,
    golden_inputs as golden_inputs,
    p_exponent,
    parse_head,
    quantize_projection,
)

DEPTH_MAX = 6
TANH_BITS_MAX = 14
# the payload's head (kilobit.core.proj.HEAD): wbits in_bits dims proj depth classes tanh_bits


def n_nodes(depth):
    return (1 << (depth + 1)) - 1


def n_internal(depth):
    return (1 << depth) - 1


def check_params(wbits, in_bits, dims, proj, depth, classes, tanh_bits):
    """None when the parameters are inside the contract's ranges, else what is wrong."""
    err = check_projection(wbits, in_bits, dims, proj)
    if err:
        return err
    if not 0 <= depth <= DEPTH_MAX:
        return "depth %d not in 0..%d" % (depth, DEPTH_MAX)
    if not 1 <= classes <= 255:
        return "classes %d not in 1..255" % classes
    if not 1 <= tanh_bits <= TANH_BITS_MAX:
        return "tanh_bits %d not in 1..%d" % (tanh_bits, TANH_BITS_MAX)
    return None


# ----------------------------------------------------------------------------------------------
# Float model and its gradient

PARAMS = ("Z", "b", "theta", "W", "V")


def init_params(dims, proj, depth, classes, seed):
    """Random start: Z (d x D), b (d), theta (ni x d), W and V (N x d x L)."""
    g = np.random.default_rng(seed)
    N, ni = n_nodes(depth), n_internal(depth)
    return {
        "Z": g.normal(0.0, 1.0 / np.sqrt(dims), (proj, dims)),
        "b": np.zeros(proj),
        "theta": g.normal(0.0, 1.0 / np.sqrt(proj), (ni, proj)),
        "W": g.normal(0.0, 1.0 / np.sqrt(proj), (N, proj, classes)),
        "V": g.normal(0.0, 1.0 / np.sqrt(proj), (N, proj, classes)),
    }


def _squash(u, kind):
    """tanh, or the paper's approximation (x for |x| < 1, else sign) when kind == "clamp"."""
    return np.clip(u, -1.0, 1.0) if kind == "clamp" else np.tanh(u)


def forward(p, Xt, sigma, sigma_I, kind="tanh"):
    """Scores (n x L) and what the gradient needs. sigma_I=None: hard paths (the prediction)."""
    zh = Xt @ p["Z"].T + p["b"]
    ni = p["theta"].shape[0]
    N = p["W"].shape[0]
    n = zh.shape[0]
    A = zh @ p["theta"].T
    G = np.where(A > 0, 1.0, -1.0) if sigma_I is None else np.tanh(sigma_I * A)
    Ind = np.empty((n, N))
    Ind[:, 0] = 1.0
    for j in range(ni):
        Ind[:, 2 * j + 1] = Ind[:, j] * (1.0 + G[:, j]) * 0.5
        Ind[:, 2 * j + 2] = Ind[:, j] * (1.0 - G[:, j]) * 0.5
    Wz = np.einsum("nd,kdl->nkl", zh, p["W"])
    Vz = np.einsum("nd,kdl->nkl", zh, p["V"])
    H = _squash(sigma * Vz, kind)
    out = Wz * H
    y = np.einsum("nk,nkl->nl", Ind, out)
    return y, (zh, G, Ind, Wz, Vz, H, out)


def loss_grad_scores(y, Y):
    """Mean loss and d loss / d scores. Y: labels in {-1, +1} (n,) when y has one column,
    else class indices (n,)."""
    n = y.shape[0]
    if y.shape[1] == 1:
        m = 1.0 - Y * y[:, 0]
        act = m > 0
        return float(np.maximum(m, 0).mean()), (-(Y * act) / n)[:, None]
    idx = np.arange(n)
    aug = y + 1.0
    aug[idx, Y] -= 1.0
    c = aug.argmax(axis=1)
    loss = float((aug[idx, c] - y[idx, Y]).mean())
    G = np.zeros_like(y)
    G[idx, c] += 1.0 / n
    G[idx, Y] -= 1.0 / n
    return loss, G


def loss_and_grad(p, Xt, Y, sigma, sigma_I, lam, kind="tanh"):
    """Objective (2) of the paper (without its constraints) and its gradient w.r.t. p.
    lam: dict of the L2 weights per parameter (missing: 0). sigma_I None: hard paths (then
    theta gets no gradient: the path is piecewise constant in it)."""
    y, (zh, G, Ind, Wz, Vz, H, out) = forward(p, Xt, sigma, sigma_I, kind)
    loss, Gy = loss_grad_scores(y, Y)
    ni = p["theta"].shape[0]
    dout = Ind[:, :, None] * Gy[:, None, :]
    dWz = dout * H
    dH = dout * Wz
    if kind == "clamp":
        dVz = dH * sigma * (np.abs(sigma * Vz) < 1.0)
    else:
        dVz = dH * sigma * (1.0 - H * H)
    grad = {
        "W": np.einsum("nd,nkl->kdl", zh, dWz),
        "V": np.einsum("nd,nkl->kdl", zh, dVz),
    }
    dzh = np.einsum("nkl,kdl->nd", dWz, p["W"]) + np.einsum("nkl,kdl->nd", dVz, p["V"])
    dI = np.einsum("nkl,nl->nk", out, Gy)
    dA = np.zeros((zh.shape[0], ni))
    for j in range(ni - 1, -1, -1):
        left, right = dI[:, 2 * j + 1], dI[:, 2 * j + 2]
        dI[:, j] += left * (1.0 + G[:, j]) * 0.5 + right * (1.0 - G[:, j]) * 0.5
        if sigma_I is not None:
            dG = Ind[:, j] * (left - right) * 0.5
            dA[:, j] = dG * sigma_I * (1.0 - G[:, j] * G[:, j])
    grad["theta"] = dA.T @ zh
    dzh += dA @ p["theta"]
    grad["Z"] = dzh.T @ Xt
    grad["b"] = dzh.sum(axis=0)
    for k, v in p.items():
        lk = lam.get(k, 0.0)
        if lk:
            loss += 0.5 * lk * float((v * v).sum())
            grad[k] = grad[k] + lk * v
    return loss, grad


class BonsaiFloat:
    """A trained float model: parameters in the standardised space, the standardisation
    (mu, g), sigma, and the device input bits."""

    def __init__(self, params, mu, g, sigma, in_bits, classes, kind="clamp"):
        self.p = params
        self.mu, self.g = np.asarray(mu, dtype=np.float64), float(g)
        self.sigma, self.in_bits = float(sigma), in_bits
        self.classes = classes  # number of classes K (2: binary, one score)
        self.kind = kind
        self.proj, self.dims = params["Z"].shape
        self.depth = int(np.log2(params["W"].shape[0] + 1)) - 1

    def standardise(self, X01):
        return (np.asarray(X01, dtype=np.float64) - self.mu) / self.g

    def scores(self, X01):
        return forward(self.p, self.standardise(X01), self.sigma, None, self.kind)[0]

    def predict(self, X01):
        s = self.scores(X01)
        return (s[:, 0] > 0).astype(np.int64) if s.shape[1] == 1 else s.argmax(axis=1)

    def folded(self):
        """(Zf, bf) with zhat = Zf x01 + bf: the standardisation folded into the projection."""
        Zf = self.p["Z"] / self.g
        return Zf, self.p["b"] - Zf @ self.mu

    def nnz(self):
        return {k: int(np.count_nonzero(self.p[k])) for k in ("Z", "theta", "W", "V")}


# ----------------------------------------------------------------------------------------------
# Byte budgets: how Theta is laid out on the device (node blocks) and what fits

def node_rows(p_or_theta, W, V, k, ni):
    """The rows of node k's block (contract 8.2): theta_k if internal, then W_k[:, l], V_k[:, l]
    for each class l. Works on float and integer arrays (W, V: N x d x L)."""
    rows = [p_or_theta[k]] if k < ni else []
    for cl in range(W.shape[2]):
        rows.append(W[k, :, cl])
        rows.append(V[k, :, cl])
    return np.array(rows)


def theta_flat(p):
    """All node blocks, flattened in storage order, and the start of each block."""
    ni, N = p["theta"].shape[0], p["W"].shape[0]
    blocks = [node_rows(p["theta"], p["W"], p["V"], k, ni).ravel() for k in range(N)]
    starts = np.cumsum([0] + [b.size for b in blocks[:-1]])
    return np.concatenate(blocks), starts


def theta_unflat(p, flat):
    """Write `flat` (storage order) back into theta, W, V of a copy of p."""
    q = {k: v.copy() for k, v in p.items()}
    ni, N = p["theta"].shape[0], p["W"].shape[0]
    d, L = p["W"].shape[1], p["W"].shape[2]
    i = 0
    for k in range(N):
        if k < ni:
            q["theta"][k] = flat[i:i + d]
            i += d
        for cl in range(L):
            q["W"][k, :, cl] = flat[i:i + d]
            i += d
            q["V"][k, :, cl] = flat[i:i + d]
            i += d
    return q


def overhead_bytes(proj, depth):
    """Bytes of a Bonsai payload besides the two matrices: header, the projection's encoding,
    length, shifts and bias, the tree's encoding, length, node offsets and node shifts."""
    N = n_nodes(depth)
    return HEAD_BYTES + 3 + 3 * proj + 3 + 4 * N


def split_budget(budget, dims, proj, depth, classes, wbits):
    """(budget_z, budget_theta) in bytes of matrix data for a total device budget: Theta dense
    when it fits in half of what is left, the rest to Z; None for "no constraint"."""
    L = 1 if classes <= 2 else classes
    wb = wbits // 8
    rows = n_internal(depth) + 2 * L * n_nodes(depth)
    zdense, tdense = dims * proj * wb, rows * proj * wb
    avail = budget - overhead_bytes(proj, depth)
    if avail <= 0:
        raise KilobitError("a budget of %d B does not even hold the model's fixed %d B"
                           % (budget, overhead_bytes(proj, depth)))
    if zdense + tdense <= avail:
        return None, None
    bt = None if tdense <= avail // 2 else avail // 2
    bz = avail - (tdense if bt is None else bt)
    return bz, bt


class _Adam:
    def __init__(self, p, lr):
        self.lr = lr
        self.m = {k: np.zeros_like(v) for k, v in p.items()}
        self.v = {k: np.zeros_like(v) for k, v in p.items()}
        self.t = 0

    def step(self, p, grad, masks):
        self.t += 1
        b1, b2 = 0.9, 0.999
        c1, c2 = 1 - b1 ** self.t, 1 - b2 ** self.t
        for k in p:
            g = grad[k]
            if masks.get(k) is not None:
                g = g * masks[k]
            self.m[k] = b1 * self.m[k] + (1 - b1) * g
            self.v[k] = b2 * self.v[k] + (1 - b2) * g * g
            p[k] -= self.lr * (self.m[k] / c1) / (np.sqrt(self.v[k] / c2) + 1e-8)
            if masks.get(k) is not None:
                p[k] *= masks[k]


def train(X01, y, depth=3, proj=10, sigma=1.0, budget_z=None, budget_theta=None, wbits=8,
          in_bits=8, epochs=(30, 60, 30), batch=64, lr=0.01, iht_every=None,
          sigma_I=(1.0, 64.0), lam=None, seed=0, log=None):
    """Train Bonsai on x01 inputs (n x D, values c/2^B) and labels 0..K-1. Returns BonsaiFloat.

    budget_z, budget_theta: bytes of the stored Z and Theta matrices (kilobit.core.smat, indices
    included) at `wbits`; None: unconstrained. epochs: (unconstrained start, IHT,
    retraining on the final support). iht_every: gradient steps on a fixed support between two
    IHT steps (paper: 5 binary, 15 multi-class). log: callable taking a line of progress."""
    X01 = np.asarray(X01, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    n, dims = X01.shape
    K = int(y.max()) + 1
    if K < 2:
        raise KilobitError("need at least 2 classes")
    L = 1 if K == 2 else K
    Y = (2 * y - 1).astype(np.float64) if L == 1 else y
    if iht_every is None:
        iht_every = 5 if L == 1 else 15
    lam = {"Z": 1e-4, "b": 0.0, "theta": 1e-4, "W": 1e-4, "V": 1e-4} if lam is None else lam
    mu = X01.mean(axis=0)
    g = float((X01 - mu).std()) or 1.0
    Xt = (X01 - mu) / g
    p = init_params(dims, proj, depth, L, seed)
    rs = np.random.default_rng(seed + 1)
    wb = wbits // 8
    zdense = dims * proj * wb
    _, starts = theta_flat(p)
    tdense = theta_flat(p)[0].size * wb
    bz = None if budget_z is None or budget_z >= zdense else budget_z
    bt = None if budget_theta is None or budget_theta >= tdense else budget_theta
    masks = {}
    t0 = time.time()
    say = log or (lambda line: None)
    e1, e2, e3 = epochs
    total_soft = max(1, (e1 + e2) * ((n + batch - 1) // batch))
    step = 0

    def threshold(p):
        out = dict(p)
        if bz is not None:
            # the device stores Z input-major: position j*d + r
            m = smat.top_mask(p["Z"].T.ravel(), bz, wb).reshape(dims, proj).T
            out["Z"] = p["Z"] * m
            masks["Z"] = m.astype(np.float64)
        if bt is not None:
            flat, st = theta_flat(p)
            m = smat.top_mask(flat, bt, wb, blocks=st)
            out = theta_unflat(out, flat * m)
            mk = theta_unflat({k: np.zeros_like(v) for k, v in p.items()}, m.astype(np.float64))
            for k in ("theta", "W", "V"):
                masks[k] = mk[k]
        return out

    def report(phase, ep, sI, kind):
        yy = forward(p, Xt, sigma, None, kind)[0]
        pred = (yy[:, 0] > 0).astype(np.int64) if L == 1 else yy.argmax(axis=1)
        obj = loss_and_grad(p, Xt, Y, sigma, sI, lam, kind)[0]
        say("bonsai %-8s epoch %3d  objective %.4f  train acc %.4f  nnz Z %d Theta %d  "
            "sigma_I %s  %.1fs" % (phase, ep, obj, float((pred == y).mean()),
                                   np.count_nonzero(p["Z"]),
                                   sum(np.count_nonzero(p[k]) for k in ("theta", "W", "V")),
                                   "hard" if sI is None else "%.3g" % sI, time.time() - t0))

    opt = _Adam(p, lr)
    sI = sigma_I[0]
    for phase, ne in (("start", e1), ("iht", e2)):
        for ep in range(ne):
            order = rs.permutation(n)
            for i in range(0, n, batch):
                idx = order[i:i + batch]
                sI = sigma_I[0] * (sigma_I[1] / sigma_I[0]) ** (step / total_soft)
                step += 1
                full = phase == "iht" and step % (iht_every + 1) == 0
                _, grad = loss_and_grad(p, Xt[idx], Y[idx], sigma, sI, lam)
                opt.step(p, grad, {} if full else masks)
                if full:
                    q = threshold(p)
                    for k in p:
                        p[k][...] = q[k]
                        if masks.get(k) is not None:
                            opt.m[k] *= masks[k]
                            opt.v[k] *= masks[k]
            if (ep + 1) % max(1, ne // 3) == 0 or ep == ne - 1:
                report(phase, ep + 1, sI, "tanh")
        if phase == "start":
            q = threshold(p)  # the hard thresholding that ends the unconstrained start
            for k in p:
                p[k][...] = q[k]
    q = threshold(p)
    for k in p:
        p[k][...] = q[k]
    # Retraining: hard paths, the device's tanh, a decaying step; the parameters of the best
    # epoch (full training objective) are kept, since a step can move points across a branch.
    opt = _Adam(p, lr * 0.5)
    lam_fixed = dict(lam, theta=0.0)
    best = (loss_and_grad(p, Xt, Y, sigma, None, lam_fixed, "clamp")[0],
            {k: v.copy() for k, v in p.items()})
    for ep in range(e3):
        opt.lr = lr * 0.5 * 0.5 * (1.0 + np.cos(np.pi * ep / max(1, e3)))
        order = rs.permutation(n)
        for i in range(0, n, batch):
            idx = order[i:i + batch]
            _, grad = loss_and_grad(p, Xt[idx], Y[idx], sigma, None, lam_fixed, "clamp")
            grad["theta"][...] = 0.0  # paths are fixed now (the L2 term alone would shrink it)
            opt.step(p, grad, masks)
        obj = loss_and_grad(p, Xt, Y, sigma, None, lam_fixed, "clamp")[0]
        if obj < best[0]:
            best = (obj, {k: v.copy() for k, v in p.items()})
        if (ep + 1) % max(1, e3 // 3) == 0 or ep == e3 - 1:
            report("retrain", ep + 1, None, "clamp")
    p = best[1]
    say("bonsai kept the retraining epoch of objective %.4f" % best[0])
    return BonsaiFloat(p, mu, g, sigma, in_bits, K, kind="clamp")


# ----------------------------------------------------------------------------------------------
# Integer model: the contract (docs/contract.md section 8)

class BonsaiInt(kbfile.PayloadModel):
    """Integer Bonsai: a Projection (kilobit.core.proj) and the tree.

    theta (ni x d), W and V (N x L x d) integers; wshift, vshift (N,) shifts; tanh_bits eT.
    The model file: payload(), to_bytes(), from_bytes(), device_bytes() (kbfile.PayloadModel)."""
    NAME = "bonsai"

    def __init__(self, projection, theta, W, V, wshift, vshift, tanh_bits, depth, classes,
                 tree_enc=None):
        self.pj = projection
        self.theta = np.asarray(theta, dtype=np.int64).reshape(n_internal(depth),
                                                                projection.d)
        self.W = np.asarray(W, dtype=np.int64)
        self.V = np.asarray(V, dtype=np.int64)
        self.wshift = np.asarray(wshift, dtype=np.int64)
        self.vshift = np.asarray(vshift, dtype=np.int64)
        self.tanh_bits, self.depth, self.classes = tanh_bits, depth, classes
        self.in_bits, self.wbits = projection.in_bits, projection.wbits
        self.dims, self.d = projection.dims, projection.d
        self.N, self.ni = n_nodes(depth), n_internal(depth)
        self.L = self.W.shape[1]
        err = check_params(self.wbits, self.in_bits, self.dims, self.d, depth, classes,
                           tanh_bits) or self.check_tree()
        if err:
            raise ValueError("bad bonsai model: " + err)
        if tree_enc is None:
            tree_enc = smat.SPARSE if sum(len(b) for b in self._blocks(smat.SPARSE)) < \
                sum(len(b) for b in self._blocks(smat.DENSE)) else smat.DENSE
        self.tree_enc = tree_enc

    def check_tree(self):
        if self.W.shape != (self.N, self.L, self.d) or self.V.shape != self.W.shape:
            return "W/V shape %s, expected %s" % (self.W.shape, (self.N, self.L, self.d))
        if self.L != (1 if self.classes <= 2 else self.classes):
            return "%d score rows for %d classes" % (self.L, self.classes)
        if self.wshift.shape != (self.N,) or self.vshift.shape != (self.N,):
            return "node shifts of the wrong length"
        for s in (self.wshift, self.vshift):
            if s.min() < 0 or s.max() > SHIFT_MAX:
                return "node shift outside 0..%d" % SHIFT_MAX
        q = qmax(self.wbits)
        for a in (self.theta, self.W, self.V):
            if a.size and np.abs(a).max() > q:
                return "weight outside +-%d" % q
            # every dot product with P stays within +-SMALL
            if a.size and np.abs(a).sum(axis=-1).max() * ACT_MAX > SMALL:
                return "sum |row| * 32767 exceeds 2^30 - 1"
        return None

    # --- evaluation, vectorised over a batch of code vectors ---
    def fields(self, codes):
        """dict of per-example integer arrays: P (n x d), leaf (n), scores (n x L), pred (n)."""
        codes = np.asarray(codes, dtype=np.int64)
        P = self.pj.project(codes)
        n = P.shape[0]
        one = 1 << self.tanh_bits
        Wa = np.einsum("nd,kld->nkl", P, self.W)
        Va = np.einsum("nd,kld->nkl", P, self.V)
        C = np.empty_like(Wa)
        for k in range(self.N):
            Ws = sat(rshift_round(Wa[:, k], int(self.wshift[k])))
            T = np.clip(rshift_round(Va[:, k], int(self.vshift[k])), -one, one)
            C[:, k] = rshift_round(Ws * T, self.tanh_bits)
        t = P @ self.theta.T
        node = np.zeros(n, dtype=np.int64)
        S = C[:, 0].copy()
        rows = np.arange(n)
        for _ in range(self.depth):
            left = t[rows, node] > 0
            node = np.where(left, 2 * node + 1, 2 * node + 2)
            S += C[rows, node]
        pred = (S[:, 0] > 0).astype(np.int64) if self.L == 1 else S.argmax(axis=1)
        return {"P": P, "leaf": node, "scores": S, "pred": pred}

    def predict(self, codes):
        return self.fields(codes)["pred"]

    def field_names(self):
        return (["z%d" % r for r in range(self.d)] + ["leaf"]
                + ["s%d" % cl for cl in range(self.L)] + ["pred"])

    def field_rows(self, codes):
        """One list of ints per example, in the order of field_names() (the golden fields)."""
        f = self.fields(codes)
        out = np.concatenate([f["P"], f["leaf"][:, None], f["scores"], f["pred"][:, None]],
                             axis=1)
        return [[int(v) for v in row] for row in out]

    # --- the model file (contract 8.3) ---
    def _blocks(self, enc):
        wb = self.wbits // 8
        Wt = np.transpose(self.W, (0, 2, 1))  # N x d x L, as node_rows wants
        Vt = np.transpose(self.V, (0, 2, 1))
        return [smat.encode(node_rows(self.theta, Wt, Vt, k, self.ni), wb, enc)
                for k in range(self.N)]

    def tree_bytes(self):
        return 3 + 2 * self.N + sum(len(b) for b in self._blocks(self.tree_enc)) + 2 * self.N

    def stored_weights(self):
        """The non-zero weights the device stores: Z, theta, W and V (a prediction reads Z
        whole and the tree along one path)."""
        return int(sum(np.count_nonzero(a) for a in (self.pj.Zq, self.theta, self.W, self.V)))

    def payload(self, scaler=None):
        head = _HEAD.pack(self.wbits, self.in_bits, self.dims, self.d, self.depth, self.classes,
                          self.tanh_bits)
        blocks = self._blocks(self.tree_enc)
        offs, o = [], 0
        for b in blocks:
            offs.append(o)
            o += len(b)
        if o > 0xFFFF:
            raise KilobitError("tree of %d bytes exceeds 65535" % o)
        tree = (struct.pack("<BH", self.tree_enc, o) + struct.pack("<%dH" % self.N, *offs)
                + b"".join(blocks) + bytes(int(s) for s in self.wshift)
                + bytes(int(s) for s in self.vshift))
        return head + self.pj.pack() + tree + kbfile.pack_scaler(scaler)

    @classmethod
    def _parse(cls, pl):
        (wbits, in_bits, dims, d, depth, classes, eT), pj, off = parse_head(pl, "bonsai",
                                                                             check_params)
        N, ni = n_nodes(depth), n_internal(depth)
        L = 1 if classes <= 2 else classes
        if off + 3 + 2 * N > len(pl):
            raise ValueError("truncated tree")
        enc, tlen = struct.unpack_from("<BH", pl, off)
        if enc not in (smat.DENSE, smat.SPARSE):
            raise ValueError("unknown matrix encoding %d" % enc)
        offs = list(struct.unpack_from("<%dH" % N, pl, off + 3)) + [tlen]
        off += 3 + 2 * N
        if off + tlen + 2 * N + 1 > len(pl):
            raise ValueError("truncated tree")
        data = pl[off:off + tlen]
        theta = np.zeros((ni, d), dtype=np.int64)
        W = np.zeros((N, L, d), dtype=np.int64)
        V = np.zeros((N, L, d), dtype=np.int64)
        if offs[0] != 0:
            raise ValueError("first node block not at offset 0")
        for k in range(N):
            if offs[k + 1] < offs[k]:
                raise ValueError("node offsets decrease")
            rows = (1 if k < ni else 0) + 2 * L
            M = smat.decode(data[offs[k]:offs[k + 1]], rows, d, wbits // 8, enc)
            i = 0
            if k < ni:
                theta[k] = M[0]
                i = 1
            W[k] = M[i::2][:L]
            V[k] = M[i + 1::2][:L]
        off += tlen
        wshift = np.frombuffer(bytes(pl[off:off + N]), dtype=np.uint8).astype(np.int64)
        vshift = np.frombuffer(bytes(pl[off + N:off + 2 * N]), dtype=np.uint8).astype(np.int64)
        off += 2 * N
        scaler = kbfile.unpack_scaler(bytes(pl), off, dims, "bonsai", pj.in_bits)
        m = cls(pj, theta, W, V, wshift, vshift, eT, depth, classes, tree_enc=enc)
        return m, scaler


def quantize_model(fm, codes_train, wbits):
    """BonsaiInt from a BonsaiFloat, power-of-two scales chosen on the training codes."""
    q = qmax(wbits)
    B = fm.in_bits
    X01 = np.asarray(codes_train, dtype=np.float64) / (1 << B)
    Zf, bf = fm.folded()
    zh = X01 @ Zf.T + bf
    pj, eP = quantize_projection(Zf, bf, B, wbits, p_exponent(zh))
    P = pj.project(codes_train)
    p = fm.p
    N, ni, L = p["W"].shape[0], p["theta"].shape[0], p["W"].shape[2]
    theta = np.zeros((ni, fm.proj), dtype=np.int64)
    for j in range(ni):  # only the sign of theta^T P matters: each node gets its own scale
        tj = p["theta"][j] / max(float(np.abs(p["theta"][j]).max()), 1e-300)
        theta[j] = quantize(tj, pow2_exponent(tj, q, SMALL, ACT_MAX), q)
    W = np.zeros((N, L, fm.proj), dtype=np.int64)
    V = np.zeros_like(W)
    eW, eV = np.zeros(N, dtype=np.int64), np.zeros(N, dtype=np.int64)
    for k in range(N):
        Wk, Vk = p["W"][k].T, fm.sigma * p["V"][k].T  # L x d; sigma folded into V
        eW[k] = min(pow2_exponent(r, q, SMALL, ACT_MAX) for r in Wk)
        eV[k] = min(pow2_exponent(r, q, SMALL, ACT_MAX) for r in Vk)
        W[k] = quantize(Wk, eW[k], q)
        V[k] = quantize(Vk, eV[k], q)
    live = [k for k in range(N) if W[k].any() and V[k].any()]
    eT = min([TANH_BITS_MAX] + [int(eV[k]) + eP for k in live if V[k].any()])
    if eT < 1:
        raise KilobitError("cannot quantize: V too large for the tanh scale")
    # eS, the scale of the node outputs: from their range on the training data
    wa = np.einsum("nd,kld->nkl", P, W).astype(np.float64)
    mx = max([0.0] + [float(np.abs(wa[:, k]).max()) * 2.0 ** -(int(eW[k]) + eP) for k in live])
    eS = range_exponent(mx, ACT_MAX // 2)
    eS = min([eS] + [int(eW[k]) + eP for k in live])
    wshift = np.clip(eW + eP - eS, 0, SHIFT_MAX)
    vshift = np.clip(eV + eP - eT, 0, SHIFT_MAX)
    m = BonsaiInt(pj, theta, W, V, wshift, vshift, eT, fm.depth, fm.classes)
    m.scales = dict(eP=eP, eS=eS, eT=eT)
    return m


# ----------------------------------------------------------------------------------------------
# Estimator: raw features in, the CLI's and the benchmark's entry point

class Bonsai:
    """Min-max scaling (training split only), B-bit codes, train, quantize.

        est = Bonsai(depth=3, proj=10, budget=2048).fit(X, y)
        est.float_.predict(X01), est.int_[8].predict(codes), est.to_bytes(8)
    """

    def __init__(self, depth=3, proj=10, sigma=1.0, budget=None, budget_z=None,
                 budget_theta=None, wbits=8, in_bits=8, epochs=(30, 60, 30), batch=64, lr=0.01,
                 sigma_I=(1.0, 64.0), lam=None, seed=0, log=None):
        self.kw = dict(depth=depth, proj=proj, sigma=sigma, wbits=wbits, in_bits=in_bits,
                       epochs=epochs, batch=batch, lr=lr, sigma_I=sigma_I, lam=lam, seed=seed,
                       log=log)
        self.budget, self.budget_z, self.budget_theta = budget, budget_z, budget_theta

    def codes(self, X):
        from kilobit.core.quant import quantize as qcodes
        return qcodes(self.scaler_.transform(X), self.kw["in_bits"])

    def fit(self, X, y):
        from kilobit.core.quant import fit_inputs
        self.scaler_ = fit_inputs(X, self.kw["in_bits"])
        C = self.codes(X)
        y = np.asarray(y, dtype=np.int64)
        K = int(y.max()) + 1
        bz, bt = self.budget_z, self.budget_theta
        if self.budget is not None and bz is None and bt is None:
            bz, bt = split_budget(self.budget, C.shape[1], self.kw["proj"], self.kw["depth"], K,
                                  self.kw["wbits"])
        t0 = time.time()
        self.float_ = train(C / float(1 << self.kw["in_bits"]), y, budget_z=bz,
                            budget_theta=bt, **self.kw)
        self.train_seconds_ = time.time() - t0
        self.int_ = {w: quantize_model(self.float_, C, w) for w in (16, 8)}
        return self

    def to_bytes(self, wbits=8, labels=None, pipeline=None):
        return self.int_[wbits].to_bytes(scaler=kbfile.Extras.of(self.scaler_, labels, pipeline))


def stderr_log(line):
    print(line, file=sys.stderr, flush=True)
