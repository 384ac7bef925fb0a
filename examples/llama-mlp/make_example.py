#!/usr/bin/env python3
"""Writes the Llama-3.2-1B MLP block example: OUT/graph.json + OUT/weights.safetensors.

usage: make_example.py OUT_DIR
hidden 2048, ffn 8192: gate and up projections (int4 q4gsw, groups of 32), silu(gate) * up,
down projection (int4 q4gaw with zero points, groups of 128, bias); every linear quantizes its
activations dynamically per token (dq8ca). Deterministic (seeded), ~30 MB of weights, so it is
generated rather than committed.
"""
import json, os, random, struct, sys

HIDDEN, FFN = 2048, 8192
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = random.Random(1234)
entries = []

def int4(name, n, k, gs, asym):
    entries.append((name, "U8", [n, k // 2], rng.randbytes(n * k // 2)))  # two nibbles per byte
    g = k // gs
    # A nibble spans 16 steps: scale so the layer output stays O(1).
    scales = [rng.uniform(0.5, 1.5) / (8.0 * k ** 0.5) for _ in range(n * g)]
    entries.append((name + ".scale", "F32", [n, g], struct.pack(f"<{n * g}f", *scales)))
    if asym:
        entries.append((name + ".zp", "U8", [n, g], bytes(rng.randrange(5, 12) for _ in range(n * g))))

int4("gate.weight", FFN, HIDDEN, 32, False)
int4("up.weight", FFN, HIDDEN, 32, False)
int4("down.weight", HIDDEN, FFN, 128, True)
entries.append(("down.bias", "F32", [HIDDEN], struct.pack(f"<{HIDDEN}f", *[rng.uniform(-0.05, 0.05) for _ in range(HIDDEN)])))

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

def weight(name, n, k, scheme, gs):
    q = {"scheme": scheme, "group_size": gs, "scales": name + ".scale"}
    if scheme == "q4gaw":
        q["zero_points"] = name + ".zp"
    return {"name": name, "shape": [n, k], "dtype": "i4" if scheme == "q4gsw" else "u4", "data": name, "quant": q}

dyn = {"scheme": "dq8ca"}
graph = {
    "format": "vkqc-graph", "version": 1, "weights": "weights.safetensors", "symbolic_dim": "tokens",
    "inputs": ["x"], "outputs": ["y"],
    "tensors": [
        {"name": "x", "shape": ["tokens", HIDDEN]},
        weight("gate.weight", FFN, HIDDEN, "q4gsw", 32),
        weight("up.weight", FFN, HIDDEN, "q4gsw", 32),
        weight("down.weight", HIDDEN, FFN, "q4gaw", 128),
        {"name": "down.bias", "shape": [HIDDEN], "data": "down.bias"},
        {"name": "gate", "shape": ["tokens", FFN]},
        {"name": "up", "shape": ["tokens", FFN]},
        {"name": "act", "shape": ["tokens", FFN]},
        {"name": "h", "shape": ["tokens", FFN]},
        {"name": "y", "shape": ["tokens", HIDDEN]},
    ],
    "ops": [
        {"type": "linear", "name": "gate_proj", "inputs": ["x", "gate.weight"], "outputs": ["gate"], "input_quant": dyn},
        {"type": "linear", "name": "up_proj", "inputs": ["x", "up.weight"], "outputs": ["up"], "input_quant": dyn},
        {"type": "silu", "name": "silu", "inputs": ["gate"], "outputs": ["act"]},
        {"type": "mul", "name": "mul", "inputs": ["act", "up"], "outputs": ["h"]},
        {"type": "linear", "name": "down_proj", "inputs": ["h", "down.weight", "down.bias"], "outputs": ["y"],
         "input_quant": dyn},
    ],
}
with open(os.path.join(out, "graph.json"), "w") as f:
    json.dump(graph, f, indent=1)
    f.write("\n")
