#!/usr/bin/env python3
"""Independent numpy reference of the Llama example decoder (examples/llama/make_example.py).

It does not read graph.json: the hyperparameters come from MODEL_DIR/config.json and the weights
from MODEL_DIR/weights.safetensors by their HF names. It computes the quantized model's function of
DESIGN section 4 / 4.2:
  - every linear quantizes its input per token (dq8ca, choose_qparams_per_token_asymmetric in fp32),
    accumulates (xq - zp) * wq exactly per group (32 for int4, all of K for the int8 lm_head) and
    folds y = sum_g (s_x * s_w[n][g]) * acc_g (the products s_x * s_w in fp32, the fold in fp64,
    rounded once to fp32);
  - embedding rows = scale * q; rms_norm, rope (cos/sin table in fp64 rounded to fp32), residual adds,
    silu (fp64, rounded) and mul in fp32;
  - attention writes K and V rounded to f16 into the cache first and reads those f16 values back;
    softmax in fp32 with the row max subtracted; causal over cache positions 0..pos+t;
  - argmax (first index of the maximum).

usage: llama_reference.py MODEL_DIR --prompt-ids 1,2,3 --max-new-tokens 32 [--logits-out FILE.npy]
                          [--chunks 16,1]
       llama_reference.py [MODEL_DIR] --self-test
Prints `tokens: t1,...` (the generated ids), `prompt_logits_max_abs: X`, `min_top2_margin: X` (the
smallest gap between the largest and second largest logit over the rows that chose a generated
token) and `hidden_rms: ...` (RMS of the residual stream after the embedding and each layer, over
the prompt). --chunks: prefill in chunks, each the largest listed size that fits the remaining prompt
(as an app with programs compiled for those token counts would); default: one pass.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

F32 = np.float32
FLT_EPSILON = F32(np.finfo(np.float32).eps)

ST_DTYPES = {"F32": np.float32, "F16": np.float16, "I8": np.int8, "U8": np.uint8, "I32": np.int32,
             "I64": np.int64, "F64": np.float64}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    base = 8 + n
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        out[name] = raw[base + b:base + end].view(ST_DTYPES[e["dtype"]]).reshape(e["shape"])
    return out


# ---- dq8ca (DESIGN 4) ----------------------------------------------------------------------

def choose_qparams_per_token(x):
    """x f32 [M, K] -> (scale f32 [M], zero point int [M]), choose_qparams_per_token_asymmetric in fp32."""
    x = np.asarray(x, dtype=F32)
    mn = np.minimum(x.min(axis=1), F32(0))
    mx = np.maximum(x.max(axis=1), F32(0))
    scale = np.maximum((mx - mn) / F32(255), FLT_EPSILON).astype(F32)
    dmin, dmax = (mn / scale).astype(F32), (mx / scale).astype(F32)
    err_min = (F32(-128) + dmin).astype(F32)
    err_max = (F32(127) + dmax).astype(F32)
    both = (err_min + err_max).astype(F32)
    zpf = np.where(both > F32(0), F32(-128) - dmin, F32(127) - dmax).astype(F32)
    zp = np.clip(np.rint(zpf), -128, 127).astype(np.int32)
    return scale, zp


def quantize_per_token(x):
    x = np.asarray(x, dtype=F32)
    scale, zp = choose_qparams_per_token(x)
    inv = (F32(1) / scale).astype(F32)
    q = np.clip(np.rint((x * inv[:, None]).astype(F32)) + zp[:, None].astype(F32), -128, 127)
    return q.astype(np.int32), scale, zp


class QWeight:
    """A symmetric quantized weight [N, K]: integer values wq, scales [N, G] over groups of gs along K.
    The integer products are summed in float32 over sub-blocks small enough that every partial sum
    is an integer below 2^24 (exact in any order), then in float64: the accumulators are exact."""

    def __init__(self, wq, scales, gs):
        self.n, self.k = wq.shape
        self.gs = gs
        self.groups = self.k // gs
        self.scales = np.asarray(scales, dtype=F32).reshape(self.n, self.groups)
        maxw = int(np.abs(wq).max()) if wq.size else 1
        sub = gs
        while sub * 255 * max(maxw, 1) >= (1 << 24):
            sub //= 2
        assert gs % sub == 0
        self.sub = sub
        nb = self.k // sub
        # (blocks, sub, N) float32, contiguous for the batched matmul
        self.wt = np.ascontiguousarray(wq.reshape(self.n, nb, sub).transpose(1, 2, 0).astype(F32))

    def acc(self, xc):
        """xc: int [M, K] (xq - zp). Returns exact per-group accumulators, float64 [M, N, G]."""
        m = xc.shape[0]
        nb = self.k // self.sub
        xb = np.ascontiguousarray(xc.astype(F32).reshape(m, nb, self.sub).transpose(1, 0, 2))
        part = np.matmul(xb, self.wt).astype(np.float64)          # (nb, M, N), exact integers
        per = self.gs // self.sub
        return part.reshape(self.groups, per, m, self.n).sum(axis=1).transpose(1, 2, 0)

    def linear_dq8ca(self, x):
        xq, sx, zp = quantize_per_token(x)
        acc = self.acc(xq - zp[:, None])                          # [M, N, G]
        s = (sx[:, None, None] * self.scales[None, :, :]).astype(F32)  # s_x * s_w in fp32
        return (acc * s.astype(np.float64)).sum(axis=2).astype(F32)


def unpack_int4(packed, n, k):
    b = np.asarray(packed, dtype=np.uint8).reshape(n, k // 2)
    w = np.empty((n, k), dtype=np.int8)
    w[:, 0::2] = (b & 0xF).astype(np.int8)
    w[:, 1::2] = (b >> 4).astype(np.int8)
    w[w >= 8] -= 16
    return w


# ---- float ops (DESIGN 4.2) ----------------------------------------------------------------

def rms_norm(x, w, eps):
    ms = ((x.astype(np.float64) ** 2).sum(axis=1) / x.shape[1]).astype(F32)
    r = (F32(1) / np.sqrt((ms + F32(eps)).astype(F32))).astype(F32)
    return ((x * r[:, None]).astype(F32) * w[None, :]).astype(F32)


def silu(x):
    xd = x.astype(np.float64)
    return (xd / (1.0 + np.exp(-xd))).astype(F32)


def rope_frequencies(d, theta, scaling):
    i = np.arange(d // 2, dtype=np.float64)
    f = np.power(float(theta), -2.0 * i / d)
    if scaling:
        assert scaling["type"] == "llama3"
        factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
        orig = scaling["original_max_position"]
        low_wl, high_wl = orig / low, orig / high
        out = []
        for fi in f:
            wl = 2 * math.pi / fi
            if wl < high_wl:
                out.append(fi)
            elif wl > low_wl:
                out.append(fi / factor)
            else:
                smooth = (orig / wl - low) / (high - low)
                out.append((1 - smooth) * fi / factor + smooth * fi)
        f = np.array(out, dtype=np.float64)
    return f


def rope(x, pos, heads, d, freqs, layout):
    t = x.shape[0]
    p = np.arange(pos, pos + t, dtype=np.float64)
    ang = p[:, None] * freqs[None, :]
    c = np.cos(ang).astype(F32)[:, None, :]
    s = np.sin(ang).astype(F32)[:, None, :]
    xh = x.reshape(t, heads, d)
    if layout == "half":
        x0, x1 = xh[..., :d // 2], xh[..., d // 2:]
    else:
        x0, x1 = xh[..., 0::2], xh[..., 1::2]
    r0 = (x0 * c).astype(F32) - (x1 * s).astype(F32)
    r1 = (x0 * s).astype(F32) + (x1 * c).astype(F32)
    out = np.empty_like(xh)
    if layout == "half":
        out[..., :d // 2], out[..., d // 2:] = r0, r1
    else:
        out[..., 0::2], out[..., 1::2] = r0, r1
    return out.reshape(t, heads * d).astype(F32)


def attention(q, k, v, kc, vc, pos, hq, hkv, d):
    t = q.shape[0]
    kc[:, pos:pos + t, :] = k.reshape(t, hkv, d).transpose(1, 0, 2).astype(np.float16)
    vc[:, pos:pos + t, :] = v.reshape(t, hkv, d).transpose(1, 0, 2).astype(np.float16)
    n = pos + t
    rep = hq // hkv
    scale = F32(1.0 / math.sqrt(d))
    mask = np.arange(n)[None, :] > (pos + np.arange(t))[:, None]     # [t, n], True = masked
    out = np.empty((t, hq * d), dtype=F32)
    for h in range(hq):
        kv = h // rep
        kk = kc[kv, :n].astype(F32)
        vv = vc[kv, :n].astype(F32)
        s = ((q[:, h * d:(h + 1) * d] @ kk.T).astype(F32) * scale).astype(F32)
        s[mask] = -np.inf
        s = s - s.max(axis=1, keepdims=True)
        p = np.exp(s).astype(F32)
        l = p.sum(axis=1, dtype=F32)
        out[:, h * d:(h + 1) * d] = ((p @ vv).astype(F32) / l[:, None]).astype(F32)
    return out


# ---- the model -----------------------------------------------------------------------------

class Llama:
    def __init__(self, model_dir):
        with open(os.path.join(model_dir, "config.json")) as f:
            self.cfg = c = json.load(f)
        self.w = read_safetensors(os.path.join(model_dir, "weights.safetensors"))
        self.L, self.C, self.hq, self.hkv = c["num_layers"], c["hidden_size"], c["num_heads"], c["num_kv_heads"]
        self.d, self.F, self.V, self.T = c["head_dim"], c["intermediate_size"], c["vocab_size"], c["max_context"]
        self.gs, self.eps, self.sfx = c["group_size"], c["rms_eps"], c.get("weight_scale_suffix", "_scale")
        self.freqs = rope_frequencies(self.d, c["rope_theta"], c.get("rope_scaling"))
        self.layout = c["rope_layout"]
        self._lin = {}
        emb = "model.embed_tokens.weight"
        self.emb_q, self.emb_s = self.w[emb], np.asarray(self.w[emb + self.sfx], dtype=F32)
        self.reset()

    def reset(self):
        shape = (self.hkv, self.T, self.d)
        self.kc = [np.zeros(shape, np.float16) for _ in range(self.L)]
        self.vc = [np.zeros(shape, np.float16) for _ in range(self.L)]

    def int4_linear(self, name):
        if name not in self._lin:
            s = np.asarray(self.w[name + self.sfx], dtype=F32)
            n, k = s.shape[0], s.shape[1] * self.gs
            self._lin[name] = QWeight(unpack_int4(self.w[name], n, k), s, self.gs)
        return self._lin[name]

    def lm_head(self):
        if "lm_head" not in self._lin:
            name = "model.embed_tokens.weight" if self.cfg["tie_word_embeddings"] else "lm_head.weight"
            wq = np.asarray(self.w[name], dtype=np.int8)
            self._lin["lm_head"] = QWeight(wq, np.asarray(self.w[name + self.sfx], F32).reshape(-1, 1), wq.shape[1])
        return self._lin["lm_head"]

    def embed(self, ids):
        ids = np.asarray(ids, dtype=np.int64)
        if self.cfg["embedding"] == "int8":
            q = np.asarray(self.emb_q[ids], dtype=np.int8).astype(F32)
            return (q * self.emb_s[ids][:, None]).astype(F32)
        q = unpack_int4(self.emb_q[ids], len(ids), self.C).astype(F32)
        s = np.repeat(self.emb_s[ids].reshape(len(ids), -1), self.gs, axis=1)
        return (q * s).astype(F32)

    def forward(self, ids, pos, rms=None):
        """ids at positions pos..pos+len-1; updates the caches; returns logits f32 [len, V]."""
        assert pos + len(ids) <= self.T, "past the KV cache (max_context)"
        x = self.embed(ids)
        if rms is not None:
            rms.append(float(np.sqrt((x.astype(np.float64) ** 2).mean())))
        for l in range(self.L):
            p = f"model.layers.{l}."
            h = rms_norm(x, np.asarray(self.w[p + "input_layernorm.weight"], F32), self.eps)
            q = self.int4_linear(p + "self_attn.q_proj.weight").linear_dq8ca(h)
            k = self.int4_linear(p + "self_attn.k_proj.weight").linear_dq8ca(h)
            v = self.int4_linear(p + "self_attn.v_proj.weight").linear_dq8ca(h)
            q = rope(q, pos, self.hq, self.d, self.freqs, self.layout)
            k = rope(k, pos, self.hkv, self.d, self.freqs, self.layout)
            a = attention(q, k, v, self.kc[l], self.vc[l], pos, self.hq, self.hkv, self.d)
            x = (x + self.int4_linear(p + "self_attn.o_proj.weight").linear_dq8ca(a)).astype(F32)
            h = rms_norm(x, np.asarray(self.w[p + "post_attention_layernorm.weight"], F32), self.eps)
            g = self.int4_linear(p + "mlp.gate_proj.weight").linear_dq8ca(h)
            u = self.int4_linear(p + "mlp.up_proj.weight").linear_dq8ca(h)
            m = (silu(g) * u).astype(F32)
            x = (x + self.int4_linear(p + "mlp.down_proj.weight").linear_dq8ca(m)).astype(F32)
            if rms is not None:
                rms.append(float(np.sqrt((x.astype(np.float64) ** 2).mean())))
        xf = rms_norm(x, np.asarray(self.w["model.norm.weight"], F32), self.eps)
        return self.lm_head().linear_dq8ca(xf)


def top2_margin(row):
    top = np.partition(row.astype(np.float64), -2)[-2:]
    return float(top[1] - top[0])


def prefill(model, prompt, chunks, rms=None):
    """Runs the prompt from position 0 in chunks (largest listed size that fits; None = one pass)."""
    out, pos = [], 0
    while pos < len(prompt):
        rest = len(prompt) - pos
        n = rest if not chunks else max([c for c in chunks if c <= rest] or [min(chunks)])
        n = min(n, rest)
        out.append(model.forward(prompt[pos:pos + n], pos, rms if pos == 0 else None))
        pos += n
    return np.concatenate(out, axis=0)


def generate(model, prompt, max_new, chunks=None):
    model.reset()
    rms = []
    logits = prefill(model, prompt, chunks, rms)
    row, pos, toks, margins = logits[-1], len(prompt), [], []
    for i in range(max_new):
        margins.append(top2_margin(row))
        t = int(np.argmax(row))
        toks.append(t)
        if i + 1 == max_new:
            break
        row = model.forward([t], pos)[0]
        pos += 1
    return logits, toks, margins, rms


# ---- self-test -----------------------------------------------------------------------------

def self_test(model_dir):
    fails = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            fails.append(what)

    # Hand-computed rows (DESIGN 4): scale = max((max'-min')/255, eps), zp from the smaller error.
    rows = [
        # x,                          scale,            zp,   q
        ([0.0, 0.0, 0.0, 0.0],         float(FLT_EPSILON), 127, [127, 127, 127, 127]),  # -128 + 127 < 0: zp from max
        ([0.0, 2.55, 1.0, 0.5],        2.55 / 255,        -128, [-128, 127, -28, -78]),  # min' = 0
        ([-5.1, -2.5, -1.0, -0.02],    5.1 / 255,          127, [-128, 2, 77, 126]),     # max' = 0
        ([-1.0, 3.0, 0.25, -0.5],      4.0 / 255,          -64, [-128, 127, -48, -96]),  # zpf -64.25
        ([-3.0, 1.0, 0.0, -1.5],       4.0 / 255,           63, [-128, 127, 63, -33]),   # zpf 63.25
    ]
    for x, scale, zp, q in rows:
        qq, s, z = quantize_per_token(np.array([x], F32))
        check(abs(float(s[0]) - scale) <= 1e-6 * scale and int(z[0]) == zp and qq[0].tolist() == q,
              f"dq8ca {x}: scale {float(s[0]):.9g} (want {scale:.9g}), zp {int(z[0])} (want {zp}), "
              f"q {qq[0].tolist()} (want {q})")
    # scale is computed in fp32: (max' - min') / 255 rounded once, FLT_EPSILON floor for tiny ranges
    s, _ = choose_qparams_per_token(np.array([[1e-9, -1e-9]], F32))
    check(float(s[0]) == float(FLT_EPSILON), "dq8ca: FLT_EPSILON floor")
    s, _ = choose_qparams_per_token(np.array([[0.1, -0.3]], F32))
    check(s[0] == (F32(0.1) - F32(-0.3)) / F32(255), "dq8ca: fp32 scale")

    # Exact integer accumulation against int64 on random data (int4 groups of 32, int8 one group).
    rng = np.random.default_rng(5)
    for bits, gs, k in ((4, 32, 256), (8, 2048, 2048)):
        lo, hi = (-8, 8) if bits == 4 else (-128, 128)
        wq = rng.integers(lo, hi, size=(48, k)).astype(np.int8)
        sw = rng.uniform(0.001, 0.01, size=(48, k // gs)).astype(F32)
        x = (rng.standard_normal((5, k)) * rng.uniform(0.1, 10, size=(5, 1))).astype(F32)
        x[0, :] = np.abs(x[0])  # one row without negatives
        W = QWeight(wq, sw, gs)
        xq, sx, zp = quantize_per_token(x)
        xc = (xq - zp[:, None]).astype(np.int64)
        acc = np.einsum("mgk,ngk->mng", xc.reshape(5, k // gs, gs), wq.astype(np.int64).reshape(48, k // gs, gs))
        check(np.array_equal(W.acc(xq - zp[:, None]), acc.astype(np.float64)), f"int{bits} accumulators exact (K {k})")
        want = (acc * (sx[:, None, None] * sw[None]).astype(F32).astype(np.float64)).sum(axis=2).astype(F32)
        check(np.array_equal(W.linear_dq8ca(x), want), f"int{bits} dq8ca linear")

    # Rope: llama3 scaling keeps high frequencies, divides low ones by the factor.
    sc = {"type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position": 8192}
    f0, f1 = rope_frequencies(64, 500000.0, None), rope_frequencies(64, 500000.0, sc)
    check(f1[0] == f0[0] and abs(f1[-1] - f0[-1] / 32) < 1e-20 and np.all(f1 <= f0), "rope llama3 scaling")

    # Chunked prefill (with the cache) equals one pass.
    tmp = None
    if model_dir is None:
        tmp = tempfile.TemporaryDirectory()
        model_dir = tmp.name
        gen = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "llama",
                           "make_example.py")
        subprocess.run([sys.executable, gen, model_dir, "--config", "tiny"], check=True, stdout=subprocess.DEVNULL)
    model = Llama(model_dir)
    prompt = [1, 5, 9, 200 % model.V, 33, 7, 100 % model.V, 42, 3]
    model.reset()
    one = model.forward(prompt, 0)
    model.reset()
    a = 4
    two = np.concatenate([model.forward(prompt[:a], 0), model.forward(prompt[a:], a)])
    rel = float(np.abs(two - one).max() / np.abs(one).max())
    check(rel <= 1e-5, f"chunked prefill ({a} + {len(prompt) - a}) = one pass: max rel diff {rel:.3g}")
    model.reset()
    three = np.concatenate([model.forward(prompt[i:i + 1], i) for i in range(len(prompt))])
    rel = float(np.abs(three - one).max() / np.abs(one).max())
    check(rel <= 1e-5, f"token-by-token prefill = one pass: max rel diff {rel:.3g}")
    if tmp is not None:
        tmp.cleanup()
    print("self-test: " + ("PASS" if not fails else f"{len(fails)} FAILED"))
    return 0 if not fails else 1


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir", nargs="?")
    ap.add_argument("--prompt-ids")
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--logits-out")
    ap.add_argument("--chunks")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args(argv)
    if a.self_test:
        return self_test(a.model_dir)
    if not a.model_dir or not a.prompt_ids:
        ap.error("MODEL_DIR and --prompt-ids are required (or --self-test)")
    prompt = [int(t) for t in a.prompt_ids.split(",") if t.strip()]
    chunks = [int(c) for c in a.chunks.split(",")] if a.chunks else None
    if not prompt or (chunks and min(chunks) < 1):
        ap.error("empty prompt or bad --chunks")
    model = Llama(a.model_dir)
    if max(prompt) >= model.V or min(prompt) < 0:
        ap.error(f"prompt ids must be in [0, {model.V})")
    if len(prompt) + a.max_new_tokens - 1 > model.T:
        ap.error(f"prompt + new tokens exceed max_context {model.T}")
    logits, toks, margins, rms = generate(model, prompt, a.max_new_tokens, chunks)
    if a.logits_out:
        np.save(a.logits_out, logits.astype(F32))
    print("tokens: " + ",".join(str(t) for t in toks))
    print(f"prompt_logits_max_abs: {float(np.abs(logits).max()):.6g}")
    print(f"min_top2_margin: {min(margins) if margins else float('nan'):.6g}")
    if rms:
        print("hidden_rms: " + ",".join(f"{r:.4g}" for r in rms))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
