#!/usr/bin/env python3
"""Fixture files for the vkqc end-to-end tests (tests/e2e/*.sh), written at test time.

Standard library only (no numpy). Subcommands:
  npy PATH D0,D1,...            float32 .npy of that shape, deterministic values
  npy-shape PATH                check PATH is a valid float32 .npy, print its shape as "(1, 128)"
  doc-example DOC OUTDIR        the "Complete example" graph of docs/graph-json.md, as OUTDIR/model.json,
                                plus the mlp.safetensors the doc describes
  bad-graphs EXAMPLE_DIR OUTDIR broken graph JSON / safetensors files derived from examples/mlp
  truncate SRC DST NBYTES       the first NBYTES of SRC
  garbage DST NBYTES            NBYTES of seeded random bytes
  corrupt-header SRC DST START END   SRC with bytes [START, END) replaced by seeded random bytes
  flip SRC DST POS...           SRC with the byte at each POS inverted (DST gets '{pos}' substituted)
  flip-positions BUNDLE COUNT   COUNT fixed byte positions spread over a .vkqb (mostly its flatbuffer)
"""
import ast
import json
import os
import random
import re
import struct
import sys


# ---- writers -------------------------------------------------------------------------------

def write_safetensors(path, entries):
    """entries: list of (name, dtype, shape, bytes). Returns nothing; header padded to 8 bytes."""
    header, blob = {}, b""
    for name, dtype, shape, data in entries:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    write_safetensors_raw(path, header, blob)


def write_safetensors_raw(path, header, blob):
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + blob)


def read_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def write_npy(path, shape, values=None, claimed_shape=None):
    """float32 C-order .npy; claimed_shape (if given) is what the header says."""
    n = 1
    for d in shape:
        n *= d
    if values is None:
        values = [((i * 37) % 17 - 8) / 8.0 for i in range(n)]
    hshape = tuple(claimed_shape if claimed_shape is not None else shape)
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': %r, }" % (hshape,)
    hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def npy_shape(path):
    """Validates a float32 .npy (magic, version, header dict, data size) and returns its shape."""
    b = open(path, "rb").read()
    if b[:6] != b"\x93NUMPY":
        raise ValueError("bad magic %r" % b[:6])
    major = b[6]
    if major == 1:
        hlen, hoff = struct.unpack("<H", b[8:10])[0], 10
    elif major in (2, 3):
        hlen, hoff = struct.unpack("<I", b[8:12])[0], 12
    else:
        raise ValueError("unknown .npy version %d" % major)
    if (hoff + hlen) % 16 != 0:
        raise ValueError("header end %d is not 16-byte aligned" % (hoff + hlen))
    hdr = b[hoff:hoff + hlen].decode("latin1")
    if not hdr.endswith("\n"):
        raise ValueError("header does not end in a newline")
    d = ast.literal_eval(hdr.strip())
    if set(d) != {"descr", "fortran_order", "shape"}:
        raise ValueError("header keys %s" % sorted(d))
    if d["descr"] != "<f4" or d["fortran_order"]:
        raise ValueError("descr %r fortran_order %r" % (d["descr"], d["fortran_order"]))
    shape = tuple(d["shape"])
    n = 1
    for x in shape:
        n *= x
    data = b[hoff + hlen:]
    if len(data) != 4 * n:
        raise ValueError("data has %d bytes, shape %r needs %d" % (len(data), shape, 4 * n))
    vals = struct.unpack("<%df" % n, data)
    if any(v != v or v in (float("inf"), float("-inf")) for v in vals):
        raise ValueError("non-finite values")
    return shape


# ---- the docs example ----------------------------------------------------------------------

def doc_example(doc, outdir):
    """Writes the JSON block under '## Complete example' verbatim, and the safetensors file the
    doc describes: fc1.weight (I8 [5, 8]), fc1.bias (F32 [5]), fc2.weight_u8 (U8 [3, 5]),
    fc2.weight_scale (F32 [3])."""
    text = open(doc).read()
    section = text.split("## Complete example", 1)[1]
    m = re.search(r"```json\n(.*?)```", section, re.S)
    if not m:
        raise SystemExit("no ```json block under '## Complete example' in " + doc)
    graph = json.loads(m.group(1))
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "model.json"), "w") as f:
        f.write(m.group(1))
    rng = random.Random(7)
    w1 = [rng.randint(-127, 127) for _ in range(5 * 8)]
    b1 = [rng.uniform(-0.5, 0.5) for _ in range(5)]
    w2 = [rng.randint(0, 255) for _ in range(3 * 5)]
    s2 = [0.01, 0.02, 0.03]
    write_safetensors(os.path.join(outdir, graph["weights"]), [
        ("fc1.weight", "I8", [5, 8], struct.pack("40b", *w1)),
        ("fc1.bias", "F32", [5], struct.pack("<5f", *b1)),
        ("fc2.weight_u8", "U8", [3, 5], struct.pack("15B", *w2)),
        ("fc2.weight_scale", "F32", [3], struct.pack("<3f", *s2)),
    ])


# ---- broken graphs -------------------------------------------------------------------------

def bad_graphs(example_dir, outdir):
    """Each broken graph is NAME.json (+ NAME.safetensors where the weights are broken)."""
    os.makedirs(outdir, exist_ok=True)
    graph_text = open(os.path.join(example_dir, "graph.json")).read()
    graph = json.loads(graph_text)
    header, blob = read_safetensors(os.path.join(example_dir, "weights.safetensors"))
    good_weights = os.path.abspath(os.path.join(example_dir, "weights.safetensors"))

    def out(name):
        return os.path.join(outdir, name)

    def graph_variant(name, edit=None, weights=good_weights):
        g = json.loads(json.dumps(graph))
        g["weights"] = weights
        if edit:
            edit(g)
        with open(out(name + ".json"), "w") as f:
            json.dump(g, f, indent=1)

    def weights_variant(name, edit_header=None, raw=None):
        """NAME.safetensors (edited header, or raw bytes) + NAME.json reading it."""
        if raw is not None:
            with open(out(name + ".safetensors"), "wb") as f:
                f.write(raw)
        else:
            h = json.loads(json.dumps(header))
            edit_header(h)
            write_safetensors_raw(out(name + ".safetensors"), h, blob)
        graph_variant(name, weights=name + ".safetensors")

    # JSON syntax
    with open(out("syntax.json"), "w") as f:
        f.write('{\n  "format": "vkqc-graph",\n  "version": 1,,\n  "ops": []\n}\n')
    with open(out("truncated.json"), "w") as f:
        f.write(graph_text[:len(graph_text) // 3])
    # structure
    graph_variant("unknown_key", lambda g: g["ops"][0].__setitem__("fused_reul", True))
    graph_variant("unknown_op", lambda g: g["ops"][1].__setitem__("type", "conv9"))
    graph_variant("missing_tensor", lambda g: g["ops"][1]["inputs"].__setitem__(0, "h9"))
    graph_variant("k_mismatch", lambda g: g["tensors"][0].__setitem__("shape", ["tokens", 200]))
    graph_variant("json_dtype", lambda g: g["tensors"][2].__setitem__("dtype", "f16"))
    graph_variant("no_weights_file", weights="no_such_weights.safetensors")
    # safetensors
    whole = open(os.path.join(example_dir, "weights.safetensors"), "rb").read()
    weights_variant("st_truncated", raw=whole[:len(whole) // 2])
    weights_variant("st_truncated_header", raw=whole[:20])

    def offsets_out(h):
        h["fc2.weight"]["data_offsets"] = [len(blob) - 16, len(blob) + 4096]
    weights_variant("st_offsets", offsets_out)

    def dtype_f16(h):  # fc1.bias stored as F16 [512] (1024 bytes) where the JSON says f32
        h["fc1.bias"]["dtype"] = "F16"
        h["fc1.bias"]["data_offsets"][1] = h["fc1.bias"]["data_offsets"][0] + 1024
    weights_variant("st_dtype", dtype_f16)

    # q4gsw weight whose group size (20) is not a multiple of 8 dividing K: refused
    n, k, gs = 4, 64, 32
    write_safetensors(out("q4gsw.safetensors"), [
        ("w", "U8", [n * k // 2], bytes(range(n * k // 2))),
        ("w.scale", "F32", [n * k // gs], struct.pack("<%df" % (n * k // gs), *([0.1] * (n * k // gs)))),
    ])
    with open(out("q4gsw.json"), "w") as f:
        json.dump({
            "format": "vkqc-graph", "version": 1, "weights": "q4gsw.safetensors",
            "inputs": ["x"], "outputs": ["y"],
            "tensors": [
                {"name": "x", "shape": ["tokens", k]},
                {"name": "w", "shape": [n, k], "dtype": "i4", "data": "w",
                 "quant": {"scheme": "q4gsw", "scales": "w.scale", "group_size": 20}},
                {"name": "y", "shape": ["tokens", n]},
            ],
            "ops": [{"type": "linear", "name": "fc", "inputs": ["x", "w"], "outputs": ["y"]}],
        }, f, indent=1)
    # target profiles
    with open(out("profile_syntax.json"), "w") as f:
        f.write('{"capabilities": {"device": {')
    with open(out("profile_not_profiles.json"), "w") as f:
        f.write('{"foo": 1}\n')


# ---- byte surgery --------------------------------------------------------------------------

def flip_positions(bundle, count):
    d = open(bundle, "rb").read()
    fb_end = struct.unpack("<I", d[:4])[0] + 4
    rng = random.Random(1234)
    head = list(range(0, 64, 4))                            # size prefix, root, identifier, vtable
    n_weights = 4
    body = sorted(rng.sample(range(64, fb_end), max(0, count - len(head) - n_weights)))
    weights = sorted(rng.sample(range(fb_end, len(d)), n_weights)) if len(d) > fb_end + n_weights else []
    return head + body + weights


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "npy":
        write_npy(args[0], [int(x) for x in args[1].split(",")])
    elif cmd == "npy-wrong-size":  # header says SHAPE, data has N floats
        write_npy(args[0], [int(args[2])], claimed_shape=[int(x) for x in args[1].split(",")])
    elif cmd == "npy-shape":
        print(npy_shape(args[0]))
    elif cmd == "doc-example":
        doc_example(args[0], args[1])
    elif cmd == "bad-graphs":
        bad_graphs(args[0], args[1])
    elif cmd == "truncate":
        with open(args[1], "wb") as f:
            f.write(open(args[0], "rb").read()[:int(args[2])])
    elif cmd == "garbage":
        rng = random.Random(5)
        with open(args[0], "wb") as f:
            f.write(bytes(rng.randrange(256) for _ in range(int(args[1]))))
    elif cmd == "corrupt-header":
        d = bytearray(open(args[0], "rb").read())
        rng = random.Random(1)
        for i in range(int(args[2]), min(int(args[3]), len(d))):
            d[i] = rng.randrange(256)
        with open(args[1], "wb") as f:
            f.write(d)
    elif cmd == "flip":
        d = open(args[0], "rb").read()
        for p in args[2:]:
            e = bytearray(d)
            e[int(p)] ^= 0xFF
            with open(args[1].replace("{pos}", p), "wb") as f:
                f.write(e)
    elif cmd == "flip-positions":
        print(" ".join(map(str, flip_positions(args[0], int(args[1])))))
    else:
        raise SystemExit("fixtures.py: unknown command " + cmd)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except (ValueError, OSError, KeyError, IndexError) as e:
        sys.exit("fixtures.py %s: %s" % (" ".join(sys.argv[1:2]), e))
