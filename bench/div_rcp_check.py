#!/usr/bin/env python3
# The check behind div_rn_rcp (bench/patches/div-rcp.patch, neutral, not kept: bench/RESULTS.md
# 2026-12-02 session 16): div_rn's significand quotient and remainder with both divisions by
# float(mb) replaced by products with rmb = 1 / float(mb), the device's reciprocal modelled as the
# correctly rounded one moved by -3..3 ulps (Vulkan allows 2.5), on every significand mb (two
# random ma each) and 24 million random pairs, against exact integer division.
# /usr/bin/python3 bench/div_rcp_check.py (0 wrong, exit status 0; ~1 min)
import numpy as np
rng = np.random.default_rng(3)
mb_all = np.arange(1 << 23, 1 << 24, dtype=np.int64)
bad = 0
for trial in range(6):
    mb = mb_all if trial < 2 else rng.integers(1 << 23, 1 << 24, 4_000_000)
    ma = rng.integers(1 << 23, 1 << 24, mb.size)
    lt = ma < mb
    ma = np.where(lt, ma << 1, ma)          # ma in [mb, 2 mb)
    rcp = (np.float32(1.0) / mb.astype(np.float32)).astype(np.float32)
    for skew in (-3, -1, 0, 1, 3):
        rmb = (rcp.view(np.uint32).astype(np.int64) + skew).astype(np.uint32).view(np.float32)
        est = (ma.astype(np.float32) * rmb).astype(np.float32)
        est = np.clip(est, np.float32(1.0), np.float32(2.0))
        q = (est * np.float32(16777216.0)).astype(np.float32).astype(np.int64)   # uint(...) truncates
        r = (ma << 24) - q * mb
        assert np.all(np.abs(r) < (1 << 31)), "r leaves int32"
        d = np.floor((r.astype(np.float32) * rmb).astype(np.float32)).astype(np.int64)
        q = q + d; r = r - d * mb
        under = r < 0; over = r >= mb
        q = np.where(under, q - 1, np.where(over, q + 1, q)); r = np.where(under, r + mb, np.where(over, r - mb, r))
        qt = (ma << 24) // mb; rt = (ma << 24) - qt * mb
        n = int(np.sum((q != qt) | (r != rt)))
        bad += n
        print(f"trial {trial} skew {skew:+d}: {mb.size} quotients, wrong {n}, max |q0 err| {int(np.max(np.abs(((est * np.float32(16777216.0)).astype(np.int64)) - qt)))}")
print("wrong:", bad)
raise SystemExit(1 if bad else 0)
