#!/usr/bin/env python3
# The check behind div_rn_est (bench/patches/div-est.patch, not kept: bench/RESULTS.md 2026-12-02
# session 16): its algorithm (the device's quotient corrected by the exact integer remainder, or
# div_rn where the correction cannot prove itself), simulated with numpy in 64-bit integers,
# against IEEE float32 division. The device's quotient is modelled as the correctly rounded one
# moved by -6..6 ulps (Vulkan allows 2.5), so every correction step, binade crossing and fallback
# is taken. /usr/bin/python3 bench/div_fast_check.py (0 mismatches; ~50 s)
import numpy as np

rng = np.random.default_rng(7)
M32 = np.uint64(0xFFFFFFFF)


def fast(a, b, q0):
    """div_rn_est's arithmetic on uint32 bit patterns; returns (result bits, ok)."""
    ua, ub, uq = (x.view(np.uint32).astype(np.uint64) for x in (a, b, q0))
    sign = (ua ^ ub) & 0x80000000
    ua &= 0x7FFFFFFF
    ub &= 0x7FFFFFFF
    uq &= 0x7FFFFFFF
    ea, eb, eq = ((x >> 23).astype(np.int64) for x in (ua, ub, uq))
    ma = (ua & 0x7FFFFF) | 0x800000
    mb = (ub & 0x7FFFFF) | 0x800000
    mq = (uq & 0x7FFFFF) | 0x800000
    s = ea - eb - eq + 150
    ok = (ea > 0) & (ea < 255) & (eb > 0) & (eb < 255) & (eq > 0) & (eq < 255) & (s >= 1) & (s <= 31)
    sc = np.clip(s, 1, 31).astype(np.uint64)
    p = mq * mb  # < 2^48: exact in uint64
    phi, plo = p >> 32, p & M32
    ahi, alo = ma >> (np.uint64(32) - sc), (ma << sc) & M32
    rlo = (alo - plo) & M32
    borrow = (alo < plo).astype(np.uint64)
    dhi = (ahi - phi - borrow) & M32
    r = rlo.astype(np.int64)
    r = np.where(r >= 1 << 31, r - (1 << 32), r)  # int(rlo)
    small = dhi == np.where(r < 0, 0xFFFFFFFF, 0).astype(np.uint64)
    imb = mb.astype(np.int64)
    ok &= small & (r >= -4 * imb) & (r <= 4 * imb)
    r2 = 2 * r
    k = sum((r2 > (2 * j - 1) * imb).astype(np.int64) - (r2 < -(2 * j - 1) * imb).astype(np.int64) for j in range(1, 5))
    m = mq.astype(np.int64) + k
    rr = r - k * imb
    ok &= (m > (1 << 23)) | ((m == (1 << 23)) & (rr >= 0)) | (m == (1 << 24))
    ok &= (m <= (1 << 24))
    e = np.where(m == (1 << 24), eq + 1, eq)
    ok &= (e >= 1) & (e <= 254)
    res = sign | (np.clip(e, 0, 255).astype(np.uint64) << 23) | (np.clip(m, 0, 1 << 24).astype(np.uint64) & 0x7FFFFF)
    zero = ua == 0  # a == +-0: the signed zero
    res = np.where(zero, sign, res)
    ok |= zero
    return res.astype(np.uint32), ok


def check(name, a, b):
    a = a.astype(np.float32)
    b = b.astype(np.float32)
    with np.errstate(all='ignore'):
        ref = (a / b).astype(np.float32)
    refb = ref.view(np.uint32)
    total_bad = 0
    for skew in range(-6, 7):
        mag = ((refb & 0x7FFFFFFF).astype(np.int64) + skew).clip(0, 0x7FFFFFFF).astype(np.uint32)
        q0b = (refb & 0x80000000) | mag  # the magnitude moved, the sign kept
        res, ok = fast(a, b, q0b.view(np.float32))
        normal_ref = ((refb >> 23) & 0xFF) > 0
        bad = ok & (res != refb) & (normal_ref | (a == 0))
        # an accepted result where IEEE gives a subnormal or zero (from a != 0) would differ from
        # div_rn's flush: must never be accepted
        bad |= ok & ~normal_ref & (a != 0)
        total_bad += int(bad.sum())
        if skew in (-6, -5, -3, 0, 3, 5, 6):
            print(f"  {name}: skew {skew:+d}: fallback {100.0 * (~ok).mean():.3f}%, mismatches {int(bad.sum())}")
    return total_bad


bad = 0
N = 2_000_000
# dq8ca's divisions: lo / scale, hi / scale, 1 / scale with scale = range / 255 over rows of every magnitude
lo = -np.abs(rng.standard_normal(N)) * np.exp2(rng.integers(-100, 100, N))
hi = np.abs(rng.standard_normal(N)) * np.exp2(rng.integers(-100, 100, N)) * (rng.random(N) < 0.5) + np.abs(lo) * rng.random(N)
lo = lo.astype(np.float32)
hi = hi.astype(np.float32)
rng_ = (hi - lo).astype(np.float32)
scale = np.maximum((rng_ / np.float32(255)).astype(np.float32), np.float32(1.1920928955078125e-7))
bad += check("lo / scale", lo, scale)
bad += check("hi / scale", hi, scale)
bad += check("1 / scale", np.ones(N, np.float32), scale)
# every significand of b against a = 1 (the reciprocal) and a = 1.5, and random a of every exponent
every = (np.arange(0, 1 << 23, dtype=np.uint32) | (np.uint32(120) << 23)).view(np.float32)
bad += check("1 / every significand", np.ones(every.size, np.float32), every)
bad += check("-1.5 / every significand", np.full(every.size, -1.5, np.float32), every)
ra = rng.integers(0x00800000, 0x7F7FFFFF, N, dtype=np.uint64).astype(np.uint32).view(np.float32)
rb = rng.integers(0x00800000, 0x7F7FFFFF, N, dtype=np.uint64).astype(np.uint32).view(np.float32)
bad += check("random normal / random normal", ra, rb)
# quotients at binade boundaries: a = b * (1 +- a few ulps)
bb = rng.integers(0x30000000, 0x50000000, N, dtype=np.uint64).astype(np.uint32)
aa = (bb.astype(np.int64) + rng.integers(-8, 9, N)).astype(np.uint32)
bad += check("near-equal a, b", aa.view(np.float32), bb.view(np.float32))
# zeros and subnormal a (the fallback), quotients underflowing or overflowing (the fallback)
z = np.array([0.0, -0.0, 1e-40, -1e-40, 3e38, -3e38, 1e-38], np.float32)
bad += check("specials", np.tile(z, 4), np.repeat(np.array([1.0, 1e-30, 1e30, 3.0], np.float32), z.size))
print("mismatches:", bad)
raise SystemExit(1 if bad else 0)
