#!/usr/bin/env python3
"""Writes the example model: graph.json + weights.safetensors (deterministic, no numpy).

A 3-layer MLP over a symbolic token dimension:
  x [tokens, 256] -> fc1 (q8ta int8 activations, q8csw weights, bias, relu) -> h1 [tokens, 512]
                  -> fc2 (q8ta, q8csw, relu)                                -> h2 [tokens, 512]
                  -> fc3 (weight-only float activations, q8csw, bias)       -> y  [tokens, 128]
"""
import json, random, struct, os

rng = random.Random(2026)
here = os.path.dirname(os.path.abspath(__file__))
tensors = {}  # name -> (dtype, shape, bytes)

def weight(name, n, k):
    vals = [max(-127, min(127, int(round(rng.gauss(0, 40))))) for _ in range(n * k)]
    tensors[name] = ("I8", [n, k], struct.pack(f"{n*k}b", *vals))
    # per-channel scale ~ 1/(40*sqrt(k)) keeps activations O(1)
    scales = [rng.uniform(0.5, 1.5) / (40.0 * k ** 0.5) for _ in range(n)]
    tensors[name + ".scale"] = ("F32", [n], struct.pack(f"{n}f", *scales))

def bias(name, n):
    vals = [rng.uniform(-0.1, 0.1) for _ in range(n)]
    tensors[name] = ("F32", [n], struct.pack(f"{n}f", *vals))

weight("fc1.weight", 512, 256); bias("fc1.bias", 512)
weight("fc2.weight", 512, 512)
weight("fc3.weight", 128, 512); bias("fc3.bias", 128)

header, offset, blob = {}, 0, b""
for name, (dt, shape, data) in tensors.items():
    header[name] = {"dtype": dt, "shape": shape, "data_offsets": [offset, offset + len(data)]}
    offset += len(data); blob += data
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * ((8 - len(h) % 8) % 8)
with open(os.path.join(here, "weights.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + blob)

def wt(name, n, k):
    return {"name": name, "shape": [n, k], "dtype": "i8", "data": name,
            "quant": {"scheme": "q8csw", "scales": name + ".scale"}}

graph = {
    "format": "vkqc-graph", "version": 1, "weights": "weights.safetensors",
    "symbolic_dim": "tokens", "inputs": ["x"], "outputs": ["y"],
    "tensors": [
        {"name": "x", "shape": ["tokens", 256]},
        wt("fc1.weight", 512, 256), {"name": "fc1.bias", "shape": [512], "data": "fc1.bias"},
        {"name": "h1", "shape": ["tokens", 512]},
        wt("fc2.weight", 512, 512),
        {"name": "h2", "shape": ["tokens", 512]},
        wt("fc3.weight", 128, 512), {"name": "fc3.bias", "shape": [128], "data": "fc3.bias"},
        {"name": "y", "shape": ["tokens", 128]},
    ],
    "ops": [
        {"type": "linear", "name": "fc1", "inputs": ["x", "fc1.weight", "fc1.bias"], "outputs": ["h1"],
         "input_quant": {"scheme": "q8ta", "scale": 0.025, "zero_point": 0}, "fused_relu": True},
        {"type": "linear", "name": "fc2", "inputs": ["h1", "fc2.weight"], "outputs": ["h2"],
         "input_quant": {"scheme": "q8ta", "scale": 0.01, "zero_point": -128}, "fused_relu": True},
        {"type": "linear", "name": "fc3", "inputs": ["h2", "fc3.weight", "fc3.bias"], "outputs": ["y"],
         "input_quant": {"scheme": "float"}},
    ],
}
with open(os.path.join(here, "graph.json"), "w") as f:
    json.dump(graph, f, indent=1)
    f.write("\n")
