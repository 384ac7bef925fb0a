#!/usr/bin/env python3
# The exhaustive check behind shaders/common.glslh's div255_rn (bench/RESULTS.md 2026-12-02 session 15):
# its integer algorithm, simulated with numpy, against IEEE float32 division by 255 on every
# significand (two exponents) and 7 million other values. /usr/bin/python3 bench/div255_check.py
import numpy as np
rng = np.random.default_rng(1)
N = 4_000_000
bits = np.concatenate([np.arange(0, 1 << 23, dtype=np.uint64) | (127 << 23), np.arange(0, 1 << 23, dtype=np.uint64) | (9 << 23), rng.integers(0x00800000, 0x7F800000, N, dtype=np.uint64),
                       np.arange(0x3F800000, 0x3F800000 + 2_000_000, dtype=np.uint64),  # every mantissa near 1
                       (np.arange(0, 1 << 23, 7, dtype=np.uint64) | (100 << 23))])
ua = bits.astype(np.uint64)
ea = (ua >> 23).astype(np.int64)
m = (ua & 0x7FFFFF) | 0x800000
q1 = m // 255; r1 = m - q1 * 255
q2 = (r1 << 10) // 255; r2 = (r1 << 10) - q2 * 255
q = (q1 << 10) | q2
msb = np.floor(np.log2(q.astype(np.float64))).astype(np.int64)
assert np.all((1 << msb) <= q) and np.all(q < (2 << msb))
sh = msb - 23
assert set(np.unique(sh)) <= {2, 3}
mant = q >> sh.astype(np.uint64)
rest = q & ((np.uint64(1) << sh.astype(np.uint64)) - np.uint64(1))
half = np.uint64(1) << (sh - 1).astype(np.uint64)
up = rest >= half
mant = mant + up.astype(np.uint64)
e = ea + sh - 10
carry = mant == (1 << 24)
mant = np.where(carry, mant >> 1, mant); e = np.where(carry, e + 1, e)
res = np.where(e <= 0, 0, (e.astype(np.uint64) << 23) | (mant & 0x7FFFFF)).astype(np.uint32)
a = ua.astype(np.uint32).view(np.float32)
with np.errstate(under='ignore'):
    ref = (a / np.float32(255)).astype(np.float32)
refb = ref.view(np.uint32)
normal = (refb >> 23) > 0
bad = normal & (res != refb)
print("checked", len(a), "normal", normal.sum(), "mismatches", bad.sum())
sub = ~normal
print("non-normal results: ours all zero:", np.all(res[sub] == 0))
