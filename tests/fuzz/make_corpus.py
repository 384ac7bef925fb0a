#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/) from the project's own
examples, docs and tools, small enough to check in (all together well under 2 MB).

usage: make_corpus.py VKQC OUT_DIR        (VKQC: a built vkqc; needs numpy and python3-onnx)

  graph_json   every complete graph of docs/graph-json.md with synthetic weights of the shapes it
               declares, the micro Llama of examples/llama (make_example.py --config micro), the
               MLP example's graph alone; each "graph JSON [separator] safetensors" (fuzz_common.h)
  safetensors  the weights written above
  vkqg         `vkqc import` of those graphs and of the GGUF and ONNX seeds that import
  vkqb         `vkqc compile` of small graphs for several built-in targets
  profile      the built-in profiles with their sidecars, "profile [separator] sidecar"
  npy          arrays of every accepted dtype, .npy versions 1 and 2, a few broken headers
  gguf         the micro Llama and Qwen2 checkpoints of examples/llama/make_gguf.py (Q4_0, Q8_0,
               Q4_1, F16 weights; Q4_K needs rows of 256) and a broken one the e2e tests use
  onnx         tests/e2e/onnx_models.py's int4 MLP, and ONNX node tests of the supported ops
               (libonnx-testdata): each model, and each test's input tensor (ParseTensor)
  tokenizer    the GGUF seeds' serialized tokenizers, each with a text, "blob [separator] text"
Seed files are named by the SHA-1 of their content (libFuzzer's own naming).
"""
import glob
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

SEP = b"\n--vkqc-fuzz-next-file--\n"
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", ".."))
PY = sys.executable


def run(*args, check=True):
    return subprocess.run([str(a) for a in args], check=check, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Corpus:
    def __init__(self, root):
        self.root = root

    def add(self, target, data):
        d = os.path.join(self.root, target)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


# ---- graph JSON + safetensors ------------------------------------------------------------------

ST_DTYPE = {"f32": ("F32", "<f4"), "f16": ("F16", "<f2"), "i8": ("I8", "i1"), "u8": ("U8", "u1"),
            "i32": ("I32", "<i4"), "i4": ("U8", "u1"), "u4": ("U8", "u1")}


def safetensors_bytes(entries):
    header, blob = {}, b""
    for name, dtype, shape, data in entries:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + blob


def synthetic_weights(graph):
    """Weights for every constant a graph names, of the shape and dtype it declares (int4 packed
    two per byte); quantization parameters given by name are per output channel."""
    rng = np.random.default_rng(5)
    entries, seen = [], set()
    for t in graph.get("tensors", []):
        shape = [d if isinstance(d, int) else 1 for d in t.get("shape", [])]
        n = int(np.prod(shape)) if shape else 1
        dt = t.get("dtype", "f32")
        if isinstance(t.get("data"), str) and t["data"] not in seen:
            st, npd = ST_DTYPE.get(dt, ("F32", "<f4"))
            if dt in ("i4", "u4"):
                vals, sh = rng.integers(0, 256, (n + 1) // 2).astype(np.uint8), [(n + 1) // 2]
            elif npd in ("i1", "u1", "<i4"):
                vals, sh = rng.integers(-100 if npd != "u1" else 0, 100, n).astype(npd), shape
            else:
                vals, sh = (rng.standard_normal(n) * 0.1).astype(npd), shape
            entries.append((t["data"], st, sh, vals.tobytes()))
            seen.add(t["data"])
        q = t.get("quant") or {}
        rows = shape[0] if shape else 1
        for key, st, npd in (("scales", "F32", "<f4"), ("zero_points", "I32", "<i4")):
            if isinstance(q.get(key), str) and q[key] not in seen:
                groups = rows * max(1, (shape[-1] if shape else 1) // q.get("group_size", 10 ** 9))
                vals = (np.full(groups, 0.02) if st == "F32" else np.zeros(groups)).astype(npd)
                entries.append((q[key], st, [groups], vals.tobytes()))
                seen.add(q[key])
    return entries


def graph_seeds(c, vkqc, work):
    graphs = []  # (name, json_text, safetensors bytes or None)
    doc = open(os.path.join(SRC, "docs", "graph-json.md")).read()
    for i, block in enumerate(re.findall(r"```json\n(.*?)```", doc, re.S)):
        try:
            g = json.loads(block)
        except ValueError:
            continue
        if not isinstance(g, dict) or g.get("format") != "vkqc-graph":
            continue
        g["weights"] = "weights.safetensors"
        graphs.append((f"doc{i}", json.dumps(g, indent=1), safetensors_bytes(synthetic_weights(g))))
    llama = os.path.join(work, "llama-micro")
    run(PY, os.path.join(SRC, "examples", "llama", "make_example.py"), llama, "--config", "micro", "--embedding", "int4")
    for f in sorted(glob.glob(os.path.join(llama, "*.json"))):
        g = json.loads(read(f))
        if isinstance(g, dict) and g.get("format") == "vkqc-graph":
            w = os.path.join(llama, g.get("weights", "weights.safetensors"))
            g["weights"] = "weights.safetensors"
            graphs.append(("llama-micro", json.dumps(g, indent=1), read(w) if os.path.exists(w) else None))
    graphs.append(("mlp-no-weights", read(os.path.join(SRC, "examples", "mlp", "graph.json")).decode(), None))
    vkqgs = []
    for name, text, weights in graphs:
        c.add("graph_json", text.encode() + (SEP + weights if weights is not None else b""))
        if weights is not None:
            c.add("safetensors", weights)
        d = os.path.join(work, "g-" + name)
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "graph.json"), "w").write(text)
        if weights is not None:
            open(os.path.join(d, "weights.safetensors"), "wb").write(weights)
        out = os.path.join(d, "m.vkqg")
        if run(vkqc, "import", os.path.join(d, "graph.json"), "-o", out, check=False).returncode == 0:
            vkqgs.append((name, out))
    return vkqgs


# ---- bundles ------------------------------------------------------------------------------------

def bundle_seeds(c, vkqc, vkqgs, work):
    targets = ["lavapipe", "nvidia-hopper"]
    n = 0
    for name, g in vkqgs:
        if name == "llama-micro":
            continue  # its bundle is ~140 KB of SPIR-V; the small graphs cover the same tables
        for t in targets:
            out = os.path.join(work, f"{name}-{t}.vkqb")
            for tokens in ("1,4",):
                if run(vkqc, "compile", g, "--target", t, "--tokens", tokens, "-o", out, check=False).returncode == 0 \
                        and os.path.getsize(out) < 60000:
                    c.add("vkqb", read(out))
                    n += 1
    return n


# ---- profiles -----------------------------------------------------------------------------------

def profile_seeds(c):
    for p in sorted(glob.glob(os.path.join(SRC, "profiles", "*.json"))):
        if p.endswith(".vkqc.json"):
            continue
        side = p[:-5] + ".vkqc.json"
        c.add("profile", read(p) + (SEP + read(side) if os.path.exists(side) else b""))


# ---- npy ----------------------------------------------------------------------------------------

def npy_seeds(c, work):
    arrays = [np.arange(12, dtype="<f4").reshape(3, 4), np.arange(-8, 8, dtype="i1").reshape(2, 8),
              np.arange(6, dtype="u1"), np.arange(10, dtype="<i4").reshape(1, 2, 5),
              np.linspace(-1, 1, 8).astype("<f2"), np.zeros((0, 3), dtype="<f4"), np.float32(3.5)]
    for i, a in enumerate(arrays):
        p = os.path.join(work, f"a{i}.npy")
        np.save(p, a)
        c.add("npy", read(p))
    p = os.path.join(work, "v2.npy")
    np.lib.format.write_array(open(p, "wb"), np.ones((2, 2), "<f4"), version=(2, 0))
    c.add("npy", read(p))
    p = os.path.join(work, "fortran.npy")
    np.save(p, np.asfortranarray(np.ones((2, 3), "<f4")))
    c.add("npy", read(p))
    c.add("npy", read(os.path.join(work, "a0.npy"))[:-5])  # truncated data


# ---- GGUF, tokenizers ---------------------------------------------------------------------------

def gguf_seeds(c, vkqc, work):
    variants = [[], ["--arch", "qwen2", "--qkv-bias", "--type", "q8_0"], ["--type", "q4_1"],
                ["--float-weights", "f16"], ["--broken", "shape"]]
    vkqgs = []
    for i, v in enumerate(variants):
        d = os.path.join(work, f"gguf{i}")
        run(PY, os.path.join(SRC, "examples", "llama", "make_gguf.py"), d, "--config", "micro", *v)
        m = os.path.join(d, "model.gguf")
        c.add("gguf", read(m))
        out = os.path.join(d, "m.vkqg")
        if run(vkqc, "import", m, "-o", out, "--requantize", "q8csw", "--quantize", "q8", check=False).returncode == 0:
            if i < 2:  # the others' graphs differ only in weight bytes
                vkqgs.append((f"gguf{i}", out))
            tok = tokenizer_blob(read(out))
            if tok:
                for text in ("Hello world! 123", "<|im_start|>user\nhi<|im_end|>", "\u00e9t\u00e9 \u2581 \xff\xfe".encode(
                        "utf-8", "surrogateescape").decode("utf-8", "replace")):
                    c.add("tokenizer", tok + SEP + text.encode())
    return vkqgs


def tokenizer_blob(vkqg):
    """The serialized tokenizer inside a .vkqg's metadata: a flatbuffers [ubyte] vector (u32 length
    first) whose content starts with the magic "VKQT"."""
    at = vkqg.find(b"VKQT")
    if at < 4:
        return None
    n = struct.unpack("<I", vkqg[at - 4:at])[0]
    return vkqg[at:at + n]


# ---- ONNX ---------------------------------------------------------------------------------------

ONNX_NODE_TESTS = ["test_qlinearconv", "test_qlinearmatmul_2D", "test_dequantizelinear", "test_quantizelinear",
                   "test_conv_with_strides_padding", "test_matmul_2d", "test_gemm_default_vector_bias",
                   "test_maxpool_2d_default", "test_averagepool_2d_default", "test_globalaveragepool", "test_relu",
                   "test_add_bcast", "test_mul_bcast", "test_concat_2d_axis_1", "test_resize_upsample_scales_nearest",
                   "test_softmax_axis_1", "test_transpose_default", "test_reshape_reordered_all_dims", "test_clip",
                   "test_sigmoid", "test_hardsigmoid", "test_hardswish", "test_flatten_axis1"]


def onnx_seeds(c, work):
    node = "/usr/share/libonnx-testdata/data/node"
    for t in ONNX_NODE_TESTS:
        m = os.path.join(node, t, "model.onnx")
        if os.path.exists(m):
            c.add("onnx", read(m))
            inp = os.path.join(node, t, "test_data_set_0", "input_0.pb")
            if os.path.exists(inp) and os.path.getsize(inp) < 4096:
                c.add("onnx", read(inp))
    try:
        import onnx  # noqa: F401  (onnx_models.py needs it)
        sys.path.insert(0, os.path.join(SRC, "tests", "e2e"))
        import onnx_models
        if hasattr(onnx_models, "nbits_model"):
            path = os.path.join(work, "nbits.onnx")
            onnx.save(onnx_models.nbits_model(np.random.default_rng(3)), path)
            c.add("onnx", read(path))
    except Exception as e:  # the node tests alone still seed the target
        print("make_corpus: ONNX models of onnx_models.py skipped:", e)


def main(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    vkqc, out = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    for t in ("graph_json", "safetensors", "vkqg", "vkqb", "profile", "npy", "gguf", "onnx", "tokenizer"):
        shutil.rmtree(os.path.join(out, t), ignore_errors=True)
    c = Corpus(out)
    with tempfile.TemporaryDirectory() as work:
        vkqgs = graph_seeds(c, vkqc, work)
        vkqgs += gguf_seeds(c, vkqc, work)
        onnx_seeds(c, work)
        for m in sorted(glob.glob(os.path.join(work, "*.onnx"))):
            out_g = m[:-5] + ".vkqg"
            if run(vkqc, "import", m, "-o", out_g, check=False).returncode == 0:
                vkqgs.append((os.path.basename(m), out_g))
        for name, g in vkqgs:
            c.add("vkqg", read(g))
            print("vkqg seed:", name, os.path.getsize(g))
        n = bundle_seeds(c, vkqc, [x for x in vkqgs if not x[0].startswith("gguf")], work)
        profile_seeds(c)
        npy_seeds(c, work)
    total = 0
    for t in sorted(os.listdir(out)):
        files = glob.glob(os.path.join(out, t, "*"))
        size = sum(os.path.getsize(f) for f in files)
        total += size
        print(f"{t:12s} {len(files):4d} seeds {size / 1024:8.1f} KiB")
    print(f"{'total':12s} {'':10s} {total / 1024:8.1f} KiB ({n} bundles)")


if __name__ == "__main__":
    main(sys.argv[1:])
