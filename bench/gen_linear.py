#!/usr/bin/env python3
"""Writes one single-linear-layer benchmark graph: DIR/graph.json + DIR/weights.safetensors.

usage: gen_linear.py DIR K N q8ta|float
Weights are random int8 (os.urandom), per-channel scales 1/(64*sqrt(K)), a bias, symbolic
token dimension, so `vkqc compile --tokens 1,8,128,512` builds every benchmark size at once.
"""
import json, os, struct, sys

out, k, n, act = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
os.makedirs(out, exist_ok=True)
w = os.urandom(n * k)
scales = struct.pack(f"{n}f", *([1.0 / (64.0 * k ** 0.5)] * n))
bias = struct.pack(f"{n}f", *([0.01] * n))
entries = [("w", "I8", [n, k], w), ("w.scale", "F32", [n], scales), ("b", "F32", [n], bias)]
header, off = {}, 0
for name, dt, shape, data in entries:
    header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(data)]}
    off += len(data)
h = json.dumps(header).encode()
h += b" " * ((8 - len(h) % 8) % 8)
with open(os.path.join(out, "weights.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h)
    for _, _, _, data in entries:
        f.write(data)
quant = {"scheme": "q8ta", "scale": 0.02, "zero_point": 0} if act == "q8ta" else {"scheme": "float"}
graph = {
    "format": "vkqc-graph", "version": 1, "weights": "weights.safetensors",
    "inputs": ["x"], "outputs": ["y"],
    "tensors": [
        {"name": "x", "shape": ["tokens", k]},
        {"name": "w", "shape": [n, k], "dtype": "i8", "data": "w", "quant": {"scheme": "q8csw", "scales": "w.scale"}},
        {"name": "b", "shape": [n], "data": "b"},
        {"name": "y", "shape": ["tokens", n]},
    ],
    "ops": [{"type": "linear", "name": f"linear_{k}x{n}", "inputs": ["x", "w", "b"], "outputs": ["y"],
             "input_quant": quant}],
}
with open(os.path.join(out, "graph.json"), "w") as f:
    json.dump(graph, f, indent=1)
