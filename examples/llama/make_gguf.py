#!/usr/bin/env python3
"""Writes a tiny Llama model as a GGUF file (llama.cpp's format, version 3) with a SentencePiece-style
tokenizer, and beside it the same model as make_example.py's directory (config.json +
weights.safetensors) for the independent numpy decoder tests/e2e/llama_reference.py.

usage: make_gguf.py OUT_DIR [--seed S] [--type q4_0|q8_0|q4_1|q4_k] [--arch llama|qwen2 [--qkv-bias]]
                     [--float-weights f16|bf16|f32] [--broken KIND] [--config tiny|micro]
  OUT_DIR/model.gguf     token_embd Q4_0, attention/MLP projections Q4_0 (Q and K rows permuted per
                         head the way llama.cpp's converter stores them), output Q8_0 (one scale per
                         row), norms F32; tokenizer.ggml.* (model "llama": 512 pieces with scores,
                         byte fallback tokens <0x00>..<0xFF>, <unk>/<s>/</s>)
  OUT_DIR/ref/           make_example.py --config tiny --embedding int4 with every scale rounded to
                         fp16 (what Q4_0/Q8_0 store), so both describe the same function
  OUT_DIR/vocab.json     the vocabulary (pieces, scores, types, merges) for the tests' independent encoders

--type q8_0 writes the embedding and the projections as Q8_0 blocks holding the same values (the
int4 codes as int8 with each group's scale: one scale per block, so they import as q8gsw).
--type q4_1 / q4_k write them with a minimum per group: Q4_1 stores q + 8 with d = s and m = -8 s;
Q4_K stores q + 8 in super-blocks of 256 whose 8 sub-block scales are d * sc (6-bit sc, d fp16) and
minimums dmin * mn with dmin = 8 d and mn = sc, so the reference's scales are rewritten to d * sc
(computed in fp32) first: both files import exactly as q4gmw and describe the same function.
--arch qwen2 writes the same model as a `qwen2` file: qwen2.* keys, Q and K rows in their original
order (qwen2 rotates halves), Q/K/V biases (zeros, so the numpy decoder still applies; --qkv-bias: small
random biases, checked against vkqc's CPU reference instead) and a byte-level BPE tokenizer
(tokenizer.ggml.model gpt2, pre qwen2: the 256 byte symbols, merges building a word list, ChatML
special tokens); OUT_DIR/vocab.json then holds the tokens and the merges.
--float-weights writes the projections as float (the dequantized values; importing them needs
--quantize). --broken writes a file the importer must refuse with a clear error (tests/e2e/gguf.sh):
arch (architecture "gpt2"), missing-key (no llama.block_count), shape (attn_k rows doubled in the
metadata's eyes), no-merges (a gpt2 tokenizer without merges), truncated (the last tensor cut).

Written from the GGUF specification (header, typed key/values, tensor infos, aligned data) and the
Q4_0 / Q8_0 block layouts: Q4_0 = fp16 d + 16 bytes, element j < 16 in the low nibble of byte j and
element j + 16 in its high nibble, value d * (nibble - 8); Q8_0 = fp16 d + 32 int8, value d * q.
"""
import argparse
import json
import os
import struct
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
GROUP = 32

# GGUF value types
U32, I32, F32, BOOL, STRING, ARRAY, U64 = 4, 5, 6, 7, 8, 9, 10
# ggml types
GGML_F32, GGML_F16, GGML_Q4_0, GGML_Q4_1, GGML_Q8_0, GGML_Q4_K, GGML_BF16 = 0, 1, 2, 3, 8, 12, 30
BROKEN = ["arch", "missing-key", "shape", "no-merges", "truncated"]
TYPES = {"q4_0": GGML_Q4_0, "q8_0": GGML_Q8_0, "q4_1": GGML_Q4_1, "q4_k": GGML_Q4_K}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    dt = {"F32": np.float32, "I8": np.int8, "U8": np.uint8}
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        out[name] = np.frombuffer(data[b:end], dtype=dt[e["dtype"]]).reshape(e["shape"]).copy()
    return header, out


def write_safetensors(path, header, tensors):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        raw = bytearray(f.read())
    hdr = raw[:n]
    body = raw[n:]
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        body[b:end] = tensors[name].tobytes()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", n) + bytes(hdr) + bytes(body))


def unpack_int4(packed, n, k):
    """[n, k/2] bytes, low nibble first, two's complement -> int8 [n, k]."""
    lo = (packed & 0xF).astype(np.int8)
    hi = (packed >> 4).astype(np.int8)
    q = np.empty((n, k), dtype=np.int8)
    q[:, 0::2] = lo
    q[:, 1::2] = hi
    return np.where(q >= 8, q - 16, q).astype(np.int8)


def q4_0(q, scales):
    """int8 values in [-8, 7] [n, k] and f16-exact scales [n, k/32] -> Q4_0 bytes."""
    n, k = q.shape
    out = bytearray()
    for r in range(n):
        for g in range(k // GROUP):
            blk = q[r, g * GROUP:(g + 1) * GROUP].astype(np.int32) + 8
            out += np.float16(scales[r, g]).tobytes()
            out += bytes(int(blk[j]) | (int(blk[j + 16]) << 4) for j in range(16))
    return bytes(out)


def q8_0(q, row_scales):
    """int8 [n, k] with one f16-exact scale per row -> Q8_0 bytes (every block of a row shares it)."""
    n, k = q.shape
    out = bytearray()
    for r in range(n):
        d = np.float16(row_scales[r]).tobytes()
        for g in range(k // GROUP):
            out += d + q[r, g * GROUP:(g + 1) * GROUP].astype(np.int8).tobytes()
    return bytes(out)


def q8_0_groups(q, scales):
    """int8 [n, k] and f16-exact scales [n, k/32] -> Q8_0 bytes (a scale per block)."""
    n, k = q.shape
    out = bytearray()
    for r in range(n):
        for g in range(k // GROUP):
            out += np.float16(scales[r, g]).tobytes() + q[r, g * GROUP:(g + 1) * GROUP].astype(np.int8).tobytes()
    return bytes(out)


def q4_1(q, scales):
    """int [-8, 7] [n, k], f16-exact scales [n, k/32] -> Q4_1 (d = s, m = -8 s, stored q + 8)."""
    n, k = q.shape
    out = bytearray()
    for r in range(n):
        for g in range(k // GROUP):
            u = q[r, g * GROUP:(g + 1) * GROUP].astype(np.int32) + 8
            s = np.float16(scales[r, g])
            out += s.tobytes() + np.float16(-8.0 * np.float32(s)).tobytes()
            out += bytes(int(u[j]) | (int(u[j + 16]) << 4) for j in range(16))
    return bytes(out)


def q4_k_scales(scales):
    """Per super-block of 8 groups: d (fp16) and 6-bit sc with s ~ d * sc; returns (d [n, k/256], sc
    [n, k/32], the exact fp32 scales d * sc)."""
    n, g = scales.shape
    s = scales.reshape(n, g // 8, 8).astype(np.float32)
    d = (s.max(axis=2) / 63.0).astype(np.float16)
    sc = np.clip(np.rint(s / d.astype(np.float32)[:, :, None]), 1, 63).astype(np.int32)
    exact = (d.astype(np.float32)[:, :, None] * sc.astype(np.float32)).astype(np.float32)
    return d, sc.reshape(n, g), exact.reshape(n, g)


def q4_k(q, d, sc):
    """int [-8, 7] [n, k] with super-block d [n, k/256] and sub-block sc [n, k/32] -> Q4_K bytes (stored q + 8,
    dmin = 8 d, mn = sc)."""
    n, k = q.shape
    out = bytearray()
    for r in range(n):
        for b in range(k // 256):
            u = q[r, b * 256:(b + 1) * 256].astype(np.int32) + 8
            scs = [int(x) for x in sc[r, b * 8:(b + 1) * 8]]
            mns = scs
            dd = np.float16(d[r, b])
            out += dd.tobytes() + np.float16(8.0 * np.float32(dd)).tobytes()
            packed = [0] * 12
            for j in range(4):
                packed[j] = scs[j] | ((scs[j + 4] >> 4) << 6)
                packed[j + 4] = mns[j] | ((mns[j + 4] >> 4) << 6)
                packed[j + 8] = (scs[j + 4] & 0xF) | ((mns[j + 4] & 0xF) << 4)
            out += bytes(packed)
            out += bytes(int(u[64 * j + l]) | (int(u[64 * j + 32 + l]) << 4) for j in range(4) for l in range(32))
    return bytes(out)


def permute_rows(x, heads, d):
    """HF rotate-half row order -> llama.cpp's interleaved order, per head: new[2i] = old[i],
    new[2i + 1] = old[i + d/2]."""
    idx = []
    for h in range(heads):
        for i in range(d // 2):
            idx += [h * d + i, h * d + i + d // 2]
    return x[idx]


def bytes_to_unicode():
    """GPT-2's byte -> printable character map (printable Latin-1 bytes map to themselves, the
    others to U+0100 and up, in byte order)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return chars


def bpe_vocabulary(size):
    """Byte-level BPE: 256 byte symbols, merges that build ' word' (as 'Ġword') letter by letter,
    then the ChatML/end-of-text specials. Returns (tokens, types, merges)."""
    b2u = bytes_to_unicode()
    tokens = [b2u[b] for b in range(256)]
    merges = []
    words = ["the", "capital", "of", "France", "is", "Paris", "and", "to", "in", "that", "it", "was", "for", "on",
             "are", "with", "as", "his", "they", "be", "at", "one", "have", "this", "from", "or", "had", "by", "Hello",
             "hot", "word", "but", "what", "some", "we", "can", "out", "other", "were", "all", "there", "when", "up"]
    seen = set(tokens)
    for wd in words:
        for s in (b2u[0x20] + wd, wd):
            for i in range(2, len(s) + 1):
                left, right = s[:i - 1], s[i - 1]
                if s[:i] not in seen and len(tokens) < size - 3:
                    seen.add(s[:i])
                    tokens.append(s[:i])
                    merges.append(left + " " + right)
    types = [1] * len(tokens)
    for sp in ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]:
        tokens.append(sp)
        types.append(3)
    while len(tokens) < size:
        tokens.append(f"[PAD{len(tokens)}]")
        types.append(5)
    return tokens, types, merges


def vocabulary(size):
    """A SentencePiece-style vocabulary: <unk> <s> </s>, 256 byte tokens, then pieces with descending
    scores: single characters, then every prefix of a word list (so BPE can build each word)."""
    pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [2, 3, 3] + [6] * 256
    words = ["the", "capital", "of", "France", "is", "Paris", "and", "a", "to", "in", "that", "it", "was", "for",
             "on", "are", "with", "as", "his", "they", "be", "at", "one", "have", "this", "from", "or", "had", "by",
             "hot", "word", "but", "what", "some", "we", "can", "out", "other", "were", "all", "there", "when", "up",
             "use", "your", "how", "said", "an", "each", "she", "which", "do", "their", "time", "if", "will", "way",
             "about", "many", "then", "them", "write", "would", "like", "so", "these", "her", "long", "make",
             "thing", "see", "him", "two", "has", "look", "more", "day", "could", "go", "come", "did", "number",
             "sound", "no", "most", "people", "my", "over", "know", "water", "than", "call", "first", "who"]
    seen = set(pieces)
    learned = []
    for ch in "▁etaoinshrdlcumwfgypbvkjxqzETAOINSHRDLCUMWFGYPBVKJXQZ0123456789.,!?'":
        learned.append(ch)
    for w in words:
        s = "▁" + w
        for i in range(2, len(s) + 1):
            learned.append(s[:i])
    for p in learned:
        if p not in seen and len(pieces) < size:
            seen.add(p)
            pieces.append(p)
            types.append(1)
    scores = [0.0] * 259 + [-float(i) for i in range(len(pieces) - 259)]
    while len(pieces) < size:  # unused filler
        pieces.append(f"<unused{len(pieces)}>")
        types.append(5)
        scores.append(-1e9)
    return pieces, scores, types


class Writer:
    def __init__(self):
        self.kv = []
        self.tensors = []

    def string(self, s):
        b = s.encode("utf-8")
        return struct.pack("<Q", len(b)) + b

    def add(self, key, vtype, value):
        body = struct.pack("<I", vtype)
        if vtype == STRING:
            body += self.string(value)
        elif vtype == ARRAY:
            etype, items = value
            body += struct.pack("<IQ", etype, len(items))
            for it in items:
                body += self.string(it) if etype == STRING else struct.pack({F32: "<f", I32: "<i", U32: "<I"}[etype], it)
        else:
            body += struct.pack({U32: "<I", I32: "<i", F32: "<f", BOOL: "<?", U64: "<Q"}[vtype], value)
        self.kv.append(self.string(key) + body)

    def tensor(self, name, dims, ggml_type, data):
        self.tensors.append((name, dims, ggml_type, data))

    def write(self, path, alignment=32):
        out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(self.tensors), len(self.kv)))
        for kv in self.kv:
            out += kv
        offset = 0
        offsets = []
        for name, dims, t, data in self.tensors:
            offsets.append(offset)
            out += self.string(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
            out += struct.pack("<IQ", t, offset)
            offset += (len(data) + alignment - 1) // alignment * alignment
        out += b"\0" * ((alignment - len(out) % alignment) % alignment)
        for (name, dims, t, data), off in zip(self.tensors, offsets):
            out += data + b"\0" * ((alignment - len(data) % alignment) % alignment)
        with open(path, "wb") as f:
            f.write(out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--type", choices=["q4_0", "q8_0", "q4_1", "q4_k"], default="q4_0")
    ap.add_argument("--arch", choices=["llama", "qwen2"], default="llama")
    ap.add_argument("--qkv-bias", action="store_true")
    ap.add_argument("--float-weights", choices=["f16", "bf16", "f32"])
    ap.add_argument("--broken", choices=BROKEN)
    ap.add_argument("--config", choices=["tiny", "micro"], default="tiny", help="make_example.py's shape")
    a = ap.parse_args(argv)
    ref = os.path.join(a.out_dir, "ref")
    subprocess.run([sys.executable, os.path.join(HERE, "make_example.py"), ref, "--config", a.config, "--embedding",
                    "int4", "--seed", str(a.seed)], check=True, stdout=subprocess.DEVNULL)
    cfg = json.load(open(os.path.join(ref, "config.json")))
    st_path = os.path.join(ref, "weights.safetensors")
    header, t = read_safetensors(st_path)
    for name in t:  # every scale to the nearest fp16: what Q4_0 / Q8_0 hold
        if name.endswith("_scale"):
            t[name] = t[name].astype(np.float16).astype(np.float32)
    q4k = {}  # Q4_K: the int4 tensors' scales become d * sc (exact in fp32)
    if a.type == "q4_k":
        for name in list(t):
            if name.endswith("_scale") and t[name[:-6]].dtype == np.uint8:
                d, sc, exact = q4_k_scales(t[name].reshape(t[name].shape[0], -1))
                q4k[name[:-6]] = (d, sc)
                t[name] = exact.reshape(t[name].shape)
    write_safetensors(st_path, header, t)

    L, C, Hq, Hkv, D = cfg["num_layers"], cfg["hidden_size"], cfg["num_heads"], cfg["num_kv_heads"], cfg["head_dim"]
    F, V = cfg["intermediate_size"], cfg["vocab_size"]
    w = Writer()
    arch = "gpt2" if a.broken == "arch" else a.arch
    w.add("general.architecture", STRING, arch)
    w.add("general.name", STRING, "vkqc tiny llama (synthetic weights)")
    w.add("general.alignment", U32, 32)
    k = ("llama" if arch == "gpt2" else arch) + "."
    if a.broken != "missing-key":
        w.add(k + "block_count", U32, L)
    w.add(k + "context_length", U32, cfg["max_context"])
    w.add(k + "embedding_length", U32, C)
    w.add(k + "feed_forward_length", U32, F)
    w.add(k + "attention.head_count", U32, Hq)
    w.add(k + "attention.head_count_kv", U32, Hkv // 2 if a.broken == "shape" else Hkv)
    w.add(k + "rope.freq_base", F32, cfg["rope_theta"])
    w.add(k + "rope.dimension_count", U32, D)
    w.add(k + "attention.layer_norm_rms_epsilon", F32, cfg["rms_eps"])
    merges = []
    if a.arch == "qwen2":
        pieces, types, merges = bpe_vocabulary(V)
        scores = []
        w.add("tokenizer.ggml.model", STRING, "gpt2")
        w.add("tokenizer.ggml.pre", STRING, "qwen2")
        w.add("tokenizer.ggml.tokens", ARRAY, (STRING, pieces))
        w.add("tokenizer.ggml.token_type", ARRAY, (I32, types))
        w.add("tokenizer.ggml.merges", ARRAY, (STRING, merges))
        w.add("tokenizer.ggml.eos_token_id", U32, pieces.index("<|im_end|>"))
        w.add("tokenizer.ggml.bos_token_id", U32, pieces.index("<|endoftext|>"))
        w.add("tokenizer.ggml.add_bos_token", BOOL, False)
    else:
        pieces, scores, types = vocabulary(V)
        w.add("tokenizer.ggml.model", STRING, "gpt2" if a.broken == "no-merges" else "llama")
        w.add("tokenizer.ggml.tokens", ARRAY, (STRING, pieces))
        w.add("tokenizer.ggml.scores", ARRAY, (F32, scores))
        w.add("tokenizer.ggml.token_type", ARRAY, (I32, types))
        w.add("tokenizer.ggml.bos_token_id", U32, 1)
        w.add("tokenizer.ggml.eos_token_id", U32, 2)
        w.add("tokenizer.ggml.unknown_token_id", U32, 0)
        w.add("tokenizer.ggml.add_bos_token", BOOL, True)
    w.add("tokenizer.chat_template", STRING,
          "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
          "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")

    def int4(name, n, k, permute_heads=0):
        q = unpack_int4(t[name], n, k)
        s = t[name + "_scale"].reshape(n, k // GROUP)
        if permute_heads:
            q, s = permute_rows(q, permute_heads, D), permute_rows(s, permute_heads, D)
        if a.type == "q4_k":
            d, sc = q4k[name]
            if permute_heads:
                sc = permute_rows(sc, permute_heads, D)
                # a super-block spans every row's 256 columns: d stays per row (permuted with it)
                d = permute_rows(d, permute_heads, D)
            return q4_k(q, d, sc)
        return {"q8_0": q8_0_groups, "q4_1": q4_1}.get(a.type, q4_0)(q, s)

    def proj(name, n, k, permute_heads=0):
        """A projection: Q4_0, or (--float-weights) its dequantized values as float."""
        if not a.float_weights:
            return TYPES[a.type], int4(name, n, k, permute_heads)
        q = unpack_int4(t[name], n, k).astype(np.float32)
        s = np.repeat(t[name + "_scale"].reshape(n, k // GROUP), GROUP, axis=1)
        v = q * s
        if permute_heads:
            v = permute_rows(v, permute_heads, D)
        if a.float_weights == "f32":
            return GGML_F32, v.astype(np.float32).tobytes()
        if a.float_weights == "f16":
            return GGML_F16, v.astype(np.float16).tobytes()
        bits = v.astype(np.float32).view(np.uint32)
        return GGML_BF16, ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16).tobytes()

    w.tensor("token_embd.weight", [C, V], TYPES[a.type], int4("model.embed_tokens.weight", V, C))
    names = {"q_proj": "attn_q", "k_proj": "attn_k", "v_proj": "attn_v", "o_proj": "attn_output",
             "gate_proj": "ffn_gate", "up_proj": "ffn_up", "down_proj": "ffn_down"}
    shapes = {"q_proj": (Hq * D, C), "k_proj": (Hkv * D, C), "v_proj": (Hkv * D, C), "o_proj": (C, Hq * D),
              "gate_proj": (F, C), "up_proj": (F, C), "down_proj": (C, F)}
    for l in range(L):
        p = f"model.layers.{l}."
        w.tensor(f"blk.{l}.attn_norm.weight", [C], GGML_F32, t[p + "input_layernorm.weight"].tobytes())
        w.tensor(f"blk.{l}.ffn_norm.weight", [C], GGML_F32, t[p + "post_attention_layernorm.weight"].tobytes())
        for hf, gg in names.items():
            n, k = shapes[hf]
            block = "self_attn" if hf.endswith(("q_proj", "k_proj", "v_proj", "o_proj")) else "mlp"
            heads = Hq if hf == "q_proj" else Hkv if hf == "k_proj" else 0
            if a.arch == "qwen2":
                heads = 0  # qwen2 files keep the original row order (rotation of halves)
            gtype, data = proj(f"{p}{block}.{hf}.weight", n, k, heads)
            w.tensor(f"blk.{l}.{gg}.weight", [k, n], gtype, data)
            if a.arch == "qwen2" and hf in ("q_proj", "k_proj", "v_proj"):
                rng = np.random.default_rng(a.seed + 7 * l + len(hf) + n)
                bias = rng.normal(0.0, 0.05, n).astype(np.float32) if a.qkv_bias else np.zeros(n, np.float32)
                w.tensor(f"blk.{l}.{gg}.bias", [n], GGML_F32, bias.tobytes())
    w.tensor("output_norm.weight", [C], GGML_F32, t["model.norm.weight"].tobytes())
    w.tensor("output.weight", [C, V], GGML_Q8_0, q8_0(t["lm_head.weight"], t["lm_head.weight_scale"]))
    path = os.path.join(a.out_dir, "model.gguf")
    w.write(path)
    if a.broken == "truncated":
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) - 1000)
    with open(os.path.join(a.out_dir, "vocab.json"), "w") as f:
        json.dump({"pieces": pieces, "scores": scores, "types": types, "merges": merges}, f)
    print(f"wrote {os.path.join(a.out_dir, 'model.gguf')} ({os.path.getsize(os.path.join(a.out_dir, 'model.gguf'))} "
          f"bytes) and the same model in {ref}")


if __name__ == "__main__":
    main(sys.argv[1:])
