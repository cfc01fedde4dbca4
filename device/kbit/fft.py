"""Band energies of a window from an integer FFT (docs/contract.md, section 13), in bytecode.

    cs = array("h", bytes(2 * P))                # once: the twiddles of a P-point FFT
    twiddles(p, cs)
    re, im = array("h", bytes(2 * P)), array("h", bytes(2 * P))
    bands(w, A, a, m, p, B, cs, re, im, out, o)  # axis a's B band energies into out[o:o+B]

kbit.features.Extractor holds these buffers and calls `bands` for every axis; this module is
the bytecode that the native module _kb_features replaces. Everything here is integer-only and,
past the buffers made once, allocates nothing: every intermediate stays below 2^30 (contract 13,
widths), a MicroPython small int, and re/im stay within int16.
"""
from array import array

from .compat import const

#: W[k] = round(32767 cos(2 pi k / 256)), k = 0..64: a quarter wave gives every twiddle
W = array("h", (32767, 32757, 32728, 32678, 32609, 32521, 32412, 32285, 32137, 31971, 31785,
                31580, 31356, 31113, 30852, 30571, 30273, 29956, 29621, 29268, 28898, 28510,
                28105, 27683, 27245, 26790, 26319, 25832, 25329, 24811, 24279, 23731, 23170,
                22594, 22005, 21403, 20787, 20159, 19519, 18868, 18204, 17530, 16846, 16151,
                15446, 14732, 14010, 13279, 12539, 11793, 11039, 10278, 9512, 8739, 7962, 7179,
                6393, 5602, 4808, 4011, 3212, 2410, 1608, 804, 0))
_ROUND = const(0x4000)  # r(z) = (z + 2^14) >> 15: Q15 products rounded half up
_TOP = const(16384)  # normalised deviations reach 2^14: s = 14 - bitlen(M)


def _rev8():
    b = bytearray(256)
    for i in range(256):
        r = 0
        for k in range(8):
            r |= (i >> k & 1) << (7 - k)
        b[i] = r
    return bytes(b)


#: the 8-bit reversal of i; a p-bit reversal is REV[i] >> (8 - p)
REV = _rev8()


def twiddles(p, cs):
    """cs[k] = cos(k*256/P), cs[P/2 + k] = sin(k*256/P), k < P/2 (contract 13.2): every stage's
    twiddle is one of these (stage L's k-th is index k*P/L), read once per k, not per butterfly."""
    half = 1 << (p - 1)
    step = 256 >> p
    for k in range(half):
        j = k * step
        if j <= 64:
            cs[k] = W[j]
            cs[half + k] = W[64 - j]
        else:
            cs[k] = -W[128 - j]
            cs[half + k] = W[j - 64]
    return cs


def bands(w, A, a, m, p, B, cs, re, im, out, o):
    """Contract 13 for axis a (samples w[a], w[a+A], ...; m its rounded mean): the B band
    energies into out[o .. o+B-1]. cs from twiddles(p); re, im: scratch of at least P items."""
    P = 1 << p
    end = P * A
    M = 0
    i = a
    while i < end:
        d = w[i] - m
        if d < 0:
            d = -d
        if d > M:
            M = d
        i += A
    if M == 0:
        for b in range(B):
            out[o + b] = 0
        return
    s = 0
    while M >= _TOP:  # s = 14 - bitlen(M): M << s lands in 2^13 .. 2^14 - 1
        M >>= 1
        s -= 1
    while M < 8192:
        M <<= 1
        s += 1
    # deviations, normalised, in bit-reversed order, with stage 1 fused in: its pairs are
    # samples j and j + P/2 (j < P/2) at rev(j), rev(j) + 1, twiddle cos(0) = 32767 (not
    # exactly 1, so r(32767 y) as every stage forms it) and sin(0) = 0, im all 0
    shift = 8 - p
    half = P >> 1
    far = half * A
    i = a
    j = 0
    while j < half:
        if s >= 0:
            x = w[i] - m << s
            y = w[i + far] - m << s
        else:
            x = w[i] - m >> -s
            y = w[i + far] - m >> -s
        y = 32767 * y + _ROUND >> 15
        u = REV[j] >> shift
        re[u] = x + y >> 1
        re[u + 1] = x - y >> 1
        im[u] = 0
        im[u + 1] = 0
        i += A
        j += 1
    # every later stage: L = 2h, butterflies (u, u + h) sharing twiddle index t = k*P/L
    h = 2
    step = P >> 2
    while h < P:
        L = h << 1
        k = 0
        t = 0
        while k < h:
            c = cs[t]
            sn = cs[half + t]
            u = k
            while u < P:
                v = u + h
                xr = re[v]
                xi = im[v]
                tr = (c * xr + _ROUND >> 15) + (sn * xi + _ROUND >> 15)
                ti = (c * xi + _ROUND >> 15) - (sn * xr + _ROUND >> 15)
                yr = re[u]
                yi = im[u]
                re[v] = yr - tr >> 1
                im[v] = yi - ti >> 1
                re[u] = yr + tr >> 1
                im[u] = yi + ti >> 1
                u += L
            k += 1
            t += step
        h = L
        step >>= 1
    # bins 1 .. P/2 (no DC, Nyquist in) in B bands; Q / 2^(2s+5) rounded half up
    width = half // B
    r = 2 * s + 4
    k = 1
    for b in range(B):
        q = 0
        e = k + width
        while k < e:
            x = re[k]
            y = im[k]
            q += x * x + y * y
            k += 1
        out[o + b] = (q >> r) + 1 >> 1
