#!/usr/bin/env python3
"""Writes a Llama-architecture decoder with synthetic weights: OUT/graph.json, OUT/weights.safetensors
and OUT/config.json (the hyperparameters, for the independent reference tests/e2e/llama_reference.py).

usage: make_example.py OUT_DIR --config tiny|1b [--seed S] [--embedding int8|int4]
                       [--separate-lm-head | --tied-lm-head] [--max-context N]

Graph (symbolic dimension "tokens"; inputs ids i32 [tokens] and pos i32 [1], the position of row 0;
outputs logits f32 [tokens, V] and next i32 [tokens]):
  x = embedding(ids)                                   int8 q8csw or int4 q4gsw table
  per layer: h = rms_norm(x); q, k, v = linear(h)      int4 q4gsw (groups of 32), dq8ca activations
             q, k = rope(q, k at pos..); attn = attention(q, k, v, k_cache, v_cache, pos)
             x = x + o_proj(attn)
             h = rms_norm(x); x = x + down(silu(gate(h)) * up(h))
  logits = lm_head(rms_norm(x)) (int8 q8csw, dq8ca); next = argmax(logits)
The lm_head reads the embedding table itself (tied) by default for 1b with an int8 embedding, and
its own int8 tensor lm_head.weight for tiny, for an int4 embedding and with --separate-lm-head.

Weights are random and deterministic (random.Random(seed)); their scales keep the residual stream
O(1) and give logits a spread of a few units. Standard library only; the safetensors file is written
entry by entry (the 1b file, ~0.8 GB, is never held in memory whole).
"""
import argparse
import json
import math
import os
import random
import struct
import sys
import time

CONFIGS = {
    "tiny": dict(layers=2, hidden=256, heads=8, kv_heads=2, head_dim=32, ffn=768, vocab=512, max_context=256,
                 theta=10000.0, scaling=None, tied=False),
    # The smallest shape the GGUF path accepts: seeds of the GGUF fuzz target (tests/fuzz/make_corpus.sh).
    "micro": dict(layers=1, hidden=64, heads=2, kv_heads=1, head_dim=32, ffn=64, vocab=320, max_context=16,
                  theta=10000.0, scaling=None, tied=False),
    "1b": dict(layers=16, hidden=2048, heads=32, kv_heads=8, head_dim=64, ffn=8192, vocab=128256,
               max_context=2048, theta=500000.0, tied=True,
               scaling={"type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                        "original_max_position": 8192}),
}
GROUP = 32        # int4 group size along K (weights and the int4 embedding)
EPS = 1e-5
LAYOUT = "half"   # HF Llama rotate_half pairs (x[i], x[i + D/2])
LOGIT_STD = 6.0   # target standard deviation of the logits over the vocabulary

# RMS of the stored integers: randbytes gives uniform int8 in [-128, 127] (int4: see NIBBLE); scales
# are base * u with u uniform in (0.5, 1.5), E[u^2] = 13/12.
RMS_I8 = math.sqrt(sum(q * q for q in range(-128, 128)) / 256.0)
# Int4 nibbles: uniform over [-8, 7] has mean -0.5, and a common mean in every weight adds the same
# multiple of sum(x) to every output, a direction that would grow geometrically through the layers.
# Each random nibble goes through NIBBLE: -4 becomes 4, so the values have mean 0 (and the same RMS)
# while -8 (0x8) and -1 (0xF) still occur.
NIBBLE = [v if v != 12 else 4 for v in range(16)]          # nibble codes; 12 = 0xC = -4
INT4_BYTES = bytes(NIBBLE[b & 0xF] | NIBBLE[b >> 4] << 4 for b in range(256))
I4_VALUES = [v - 16 if v >= 8 else v for v in NIBBLE]
assert sum(I4_VALUES) == 0
RMS_I4 = math.sqrt(sum(q * q for q in I4_VALUES) / 16.0)
U_RMS = math.sqrt(13.0 / 12.0)
# Output gain of each projection (output RMS ~ gain * input RMS): q/k a little larger so that the
# attention scores have a spread of about one unit (softmax neither flat nor one-hot).
GAIN = {"q_proj": 1.6, "k_proj": 1.6, "v_proj": 1.0, "o_proj": 0.6, "gate_proj": 1.5, "up_proj": 1.5,
        "down_proj": 0.5}


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--config", choices=sorted(CONFIGS), required=True)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--embedding", choices=["int8", "int4"], default="int8")
    tie = ap.add_mutually_exclusive_group()
    tie.add_argument("--separate-lm-head", action="store_true", help="lm_head.weight of its own (int8)")
    tie.add_argument("--tied-lm-head", action="store_true",
                     help="the lm_head reads the int8 embedding table (default for 1b)")
    ap.add_argument("--max-context", type=int, help="KV cache length (default: the config's)")
    a = ap.parse_args(argv)
    if a.tied_lm_head and a.embedding != "int8":
        ap.error("--tied-lm-head needs --embedding int8 (the lm_head is an int8 q8csw linear)")
    if a.max_context is not None and a.max_context < 1:
        ap.error("--max-context must be >= 1")
    return a


CHUNK = 1 << 24  # bulk random bytes are drawn and written in chunks of 16 MiB


def random_bytes(rng, nbytes, table=None):
    """nbytes random bytes, as chunks (optionally mapped through a bytes.translate table)."""
    for off in range(0, nbytes, CHUNK):
        b = rng.randbytes(min(CHUNK, nbytes - off))
        yield b.translate(table) if table else b


def int4_bytes(rng, nbytes):
    """nbytes of packed zero-mean int4 values (two per byte), as chunks."""
    return random_bytes(rng, nbytes, INT4_BYTES)


def unit_scales(rng, count, base):
    """count F32 values base * u, u uniform in (0.5, 1.5) on 256 levels: one random byte each, mapped
    through a table (fast for the millions of int4 scales of the 1b config). A list of chunks."""
    table = [struct.pack("<f", base * (0.5 + (i + 0.5) / 256.0)) for i in range(256)]
    step = 1 << 18  # bytes.join keeps a buffer record (~80 bytes) per item: join in chunks
    return [b"".join(map(table.__getitem__, rng.randbytes(min(step, count - off)))) for off in range(0, count, step)]


def main(argv):
    a = parse_args(argv)
    cfg = dict(CONFIGS[a.config])
    if a.max_context is not None:
        cfg["max_context"] = a.max_context
    tied = a.embedding == "int8" and not a.separate_lm_head and (cfg["tied"] or a.tied_lm_head)
    L, C, Hq, Hkv, D = cfg["layers"], cfg["hidden"], cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    F, V, T = cfg["ffn"], cfg["vocab"], cfg["max_context"]
    assert Hq * D == C and Hq % Hkv == 0 and C % GROUP == 0 and F % GROUP == 0
    os.makedirs(a.out_dir, exist_ok=True)
    rng = random.Random(a.seed)

    # ---- safetensors entries: (name, dtype, shape, nbytes, generator of bytes or of byte chunks),
    # generated in this order ----
    entries = []

    def entry(name, dtype, shape, nbytes, gen):
        entries.append((name, dtype, shape, nbytes, gen))

    def int4_weight(name, n, k, gain):
        entry(name, "U8", [n, k // 2], n * k // 2, lambda: int4_bytes(rng, n * k // 2))
        base = gain / (RMS_I4 * U_RMS * math.sqrt(k))
        entry(name + "_scale", "F32", [n, k // GROUP], 4 * n * (k // GROUP),
              lambda: unit_scales(rng, n * (k // GROUP), base))

    def int8_rows(name, n, k, row_rms):
        """int8 [n, k], per-row scales giving each row an RMS of about row_rms."""
        entry(name, "I8", [n, k], n * k, lambda: random_bytes(rng, n * k))
        base = row_rms / (RMS_I8 * U_RMS)
        entry(name + "_scale", "F32", [n], 4 * n, lambda: unit_scales(rng, n, base))

    def norm(name):
        entry(name, "F32", [C], 4 * C, lambda: struct.pack(f"<{C}f", *[rng.uniform(0.8, 1.2) for _ in range(C)]))

    # Embedding RMS: tied, the logits are x_normed . e_v, whose spread is rms(e) * sqrt(C): LOGIT_STD
    # fixes it (0.13 for 1b: small next to what the layers add, as in real checkpoints). Separate, the
    # embedding RMS is 0.5 and lm_head's rows are scaled for LOGIT_STD.
    emb_rms = LOGIT_STD / math.sqrt(C) if tied else 0.5
    emb = "model.embed_tokens.weight"
    if a.embedding == "int8":
        int8_rows(emb, V, C, emb_rms)
    else:
        entry(emb, "U8", [V, C // 2], V * C // 2, lambda: int4_bytes(rng, V * C // 2))
        base = emb_rms / (RMS_I4 * U_RMS)
        entry(emb + "_scale", "F32", [V, C // GROUP], 4 * V * (C // GROUP),
              lambda: unit_scales(rng, V * (C // GROUP), base))
    proj = [("self_attn", "q_proj", Hq * D, C), ("self_attn", "k_proj", Hkv * D, C),
            ("self_attn", "v_proj", Hkv * D, C), ("self_attn", "o_proj", C, Hq * D),
            ("mlp", "gate_proj", F, C), ("mlp", "up_proj", F, C), ("mlp", "down_proj", C, F)]
    for l in range(L):
        p = f"model.layers.{l}."
        norm(p + "input_layernorm.weight")
        norm(p + "post_attention_layernorm.weight")
        for block, name, n, k in proj:
            int4_weight(f"{p}{block}.{name}.weight", n, k, GAIN[name])
    norm("model.norm.weight")
    head = emb if tied else "lm_head.weight"
    if not tied:
        # x_normed has RMS ~1, so a row of RMS r gives logits of spread r * sqrt(C).
        int8_rows(head, V, C, LOGIT_STD / math.sqrt(C))

    header, off = {}, 0
    for name, dtype, shape, nbytes, _ in entries:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + nbytes]}
        off += nbytes
    header["__metadata__"] = {"format": "vkqc-llama-example", "config": a.config, "seed": str(a.seed)}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    t0 = time.time()
    path = os.path.join(a.out_dir, "weights.safetensors")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for name, _, _, nbytes, gen in entries:
            data = gen()
            written = 0
            for chunk in [data] if isinstance(data, bytes) else data:
                f.write(chunk)
                written += len(chunk)
            assert written == nbytes, name
    total_bytes = 8 + len(h) + off

    # ---- graph.json ----
    tensors, ops = [], []

    def act(name, width, dtype=None):
        t = {"name": name, "shape": ["tokens", width]}
        if dtype:
            t["dtype"] = dtype
        tensors.append(t)
        return name

    def q4_tensor(name, n, k):
        tensors.append({"name": name, "shape": [n, k], "dtype": "i4", "data": name,
                        "quant": {"scheme": "q4gsw", "group_size": GROUP, "scales": name + "_scale"}})

    def q8_tensor(name, n, k):
        tensors.append({"name": name, "shape": [n, k], "dtype": "i8", "data": name,
                        "quant": {"scheme": "q8csw", "scales": name + "_scale"}})

    def f32_const(name, n):
        tensors.append({"name": name, "shape": [n], "data": name})

    dyn = {"scheme": "dq8ca"}
    rope_attrs = {"head_dim": D, "theta": cfg["theta"], "layout": LAYOUT, "max_positions": T}
    if cfg["scaling"]:
        rope_attrs["scaling"] = dict(cfg["scaling"])

    def op(type_, name, inputs, outputs, **attrs):
        o = {"type": type_, "name": name, "inputs": inputs, "outputs": outputs}
        o.update(attrs)
        ops.append(o)

    def linear(name, x, w, y):
        op("linear", name, [x, w], [y], input_quant=dyn)

    tensors.append({"name": "ids", "shape": ["tokens"], "dtype": "i32"})
    tensors.append({"name": "pos", "shape": [1], "dtype": "i32"})
    if a.embedding == "int8":
        q8_tensor(emb, V, C)
    else:
        tensors.append({"name": emb, "shape": [V, C], "dtype": "i4", "data": emb,
                        "quant": {"scheme": "q4gsw", "group_size": GROUP, "scales": emb + "_scale"}})
    x = act("x0", C)
    op("embedding", "embed_tokens", ["ids", emb], [x])
    for l in range(L):
        p, s = f"model.layers.{l}.", f"layers.{l}."
        for w in ("input_layernorm.weight", "post_attention_layernorm.weight"):
            f32_const(p + w, C)
        for block, name, n, k in proj:
            q4_tensor(f"{p}{block}.{name}.weight", n, k)
        for c in ("k_cache", "v_cache"):
            tensors.append({"name": s + c, "shape": [Hkv, T, D], "dtype": "f16", "state": True})
        h = act(s + "attn_norm", C)
        op("rms_norm", s + "input_layernorm", [x, p + "input_layernorm.weight"], [h], eps=EPS)
        q, k, v = act(s + "q", Hq * D), act(s + "k", Hkv * D), act(s + "v", Hkv * D)
        linear(s + "q_proj", h, p + "self_attn.q_proj.weight", q)
        linear(s + "k_proj", h, p + "self_attn.k_proj.weight", k)
        linear(s + "v_proj", h, p + "self_attn.v_proj.weight", v)
        qr, kr = act(s + "q_rot", Hq * D), act(s + "k_rot", Hkv * D)
        op("rope", s + "rope_q", [q, "pos"], [qr], **rope_attrs)
        op("rope", s + "rope_k", [k, "pos"], [kr], **rope_attrs)
        at = act(s + "attn", Hq * D)
        op("attention", s + "attention", [qr, kr, v, s + "k_cache", s + "v_cache", "pos"], [at],
           num_heads=Hq, num_kv_heads=Hkv, head_dim=D)
        o = act(s + "o", C)
        linear(s + "o_proj", at, p + "self_attn.o_proj.weight", o)
        x1 = act(s + "x_attn", C)
        op("add", s + "attn_residual", [x, o], [x1])
        h2 = act(s + "mlp_norm", C)
        op("rms_norm", s + "post_attention_layernorm", [x1, p + "post_attention_layernorm.weight"], [h2], eps=EPS)
        g, u = act(s + "gate", F), act(s + "up", F)
        linear(s + "gate_proj", h2, p + "mlp.gate_proj.weight", g)
        linear(s + "up_proj", h2, p + "mlp.up_proj.weight", u)
        sg, m = act(s + "act", F), act(s + "gated", F)
        op("silu", s + "act_fn", [g], [sg])
        op("mul", s + "gated", [sg, u], [m])
        d = act(s + "down", C)
        linear(s + "down_proj", m, p + "mlp.down_proj.weight", d)
        x = act(f"x{l + 1}", C)
        op("add", s + "mlp_residual", [x1, d], [x])
    f32_const("model.norm.weight", C)
    if not tied:
        q8_tensor(head, V, C)
    xf = act("final_norm", C)
    op("rms_norm", "norm", [x, "model.norm.weight"], [xf], eps=EPS)
    act("logits", V)
    linear("lm_head", xf, head, "logits")
    tensors.append({"name": "next", "shape": ["tokens"], "dtype": "i32"})
    op("argmax", "argmax", ["logits"], ["next"])

    graph = {"format": "vkqc-graph", "version": 1, "weights": "weights.safetensors", "symbolic_dim": "tokens",
             "comment": f"Llama-architecture decoder, config {a.config}, synthetic weights (seed {a.seed}); "
                        "written by examples/llama/make_example.py",
             "inputs": ["ids", "pos"], "outputs": ["logits", "next"], "tensors": tensors, "ops": ops}
    with open(os.path.join(a.out_dir, "graph.json"), "w") as f:
        json.dump(graph, f, indent=1)
        f.write("\n")

    config = {"config": a.config, "seed": a.seed, "num_layers": L, "hidden_size": C, "num_heads": Hq,
              "num_kv_heads": Hkv, "head_dim": D, "intermediate_size": F, "vocab_size": V, "max_context": T,
              "rope_theta": cfg["theta"], "rope_layout": LAYOUT, "rope_scaling": cfg["scaling"], "rms_eps": EPS,
              "group_size": GROUP, "embedding": a.embedding, "tie_word_embeddings": tied,
              "kv_cache_dtype": "f16", "weight_scale_suffix": "_scale"}
    with open(os.path.join(a.out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
        f.write("\n")

    params = 0
    for name, dtype, shape, nbytes, _ in entries:
        if not name.endswith("_scale") and not name.endswith("norm.weight") and dtype == "U8":
            params += 2 * nbytes   # packed int4
        elif not name.endswith("_scale"):
            params += nbytes // (4 if dtype == "F32" else 1)
    print(f"llama {a.config}: {L} layers, {params} params ({a.embedding} embedding, "
          f"{'tied' if tied else 'separate'} lm_head), weights.safetensors {total_bytes} bytes, "
          f"{len(ops)} ops, {time.time() - t0:.1f} s -> {a.out_dir}")


if __name__ == "__main__":
    main(sys.argv[1:])
