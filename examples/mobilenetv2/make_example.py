#!/usr/bin/env python3
"""Writes a MobileNetV2-shaped static int8 network: OUT/graph.json + OUT/weights.safetensors.

usage: make_example.py OUT_DIR [WIDTH_MULT]
224x224x3 float input -> quantize (q8ta) -> stem conv 3x3 s2 relu6 -> 17 inverted-residual
blocks (1x1 expand relu6, 3x3 depthwise relu6, 1x1 project; residual add where stride 1 and
channels match) -> 1x1 conv 1280 relu6 -> global average pool -> classifier linear (int8 input,
float logits [1, 1000]). All int8 tensors are per tensor (q8ta/q8to); synthetic weights with a
fixed seed. Activations stay packed int8 from the quantize to the classifier.
"""
import json, os, random, struct, sys

out = sys.argv[1]
mult = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
os.makedirs(out, exist_ok=True)
rng = random.Random(7)
ACT = {"scheme": "q8to", "scale": 0.05, "zero_point": -128}  # relu6 outputs: [0, 6] -> [-128, -8]
LIN = {"scheme": "q8to", "scale": 0.05, "zero_point": 0}     # linear (projection) outputs
entries, tensors, ops = [], [], []

def ch(c):
    return max(8, int(c * mult + 4) // 8 * 8)

def weight(name, shape, fan_in):
    n = 1
    for d in shape: n *= d
    entries.append((name, "I8", shape, bytes((rng.randrange(-127, 128)) & 0xFF for _ in range(n))))
    s = 2.2 / (127.0 * fan_in ** 0.5)
    entries.append((name + ".scale", "F32", [shape[0]], struct.pack(f"<{shape[0]}f", *[s * rng.uniform(0.8, 1.2) for _ in range(shape[0])])))
    entries.append((name + ".bias", "F32", [shape[0]], struct.pack(f"<{shape[0]}f", *[rng.uniform(-0.1, 0.1) for _ in range(shape[0])])))
    tensors.append({"name": name, "shape": shape, "dtype": "i8", "data": name, "quant": {"scheme": "q8csw", "scales": name + ".scale"}})
    tensors.append({"name": name + ".bias", "shape": [shape[0]], "data": name + ".bias"})

count = [0]
def conv(x, cin, h, cout, k, stride, groups, act, quant):
    count[0] += 1
    name = f"conv{count[0]}"
    pad = k // 2
    oh = (h + 2 * pad - k) // stride + 1
    weight(name + ".w", [cout, k, k, cin // groups], k * k * cin // groups)
    y = name + ".out"
    tensors.append({"name": y, "shape": [1, oh, oh, cout], "dtype": "i8"})
    ops.append({"type": "conv2d", "name": name, "inputs": [x, name + ".w", name + ".w.bias"], "outputs": [y],
                "stride": [stride, stride], "padding": [pad, pad, pad, pad], "groups": groups,
                "activation": act, "output_quant": quant})
    return y, oh

tensors.append({"name": "x", "shape": [1, 224, 224, 3]})
tensors.append({"name": "xq", "shape": [1, 224, 224, 3], "dtype": "i8", "quant": {"scheme": "q8ta", "scale": 0.02, "zero_point": 0}})
ops.append({"type": "quantize", "name": "quantize", "inputs": ["x"], "outputs": ["xq"]})
y, h = conv("xq", 3, 224, ch(32), 3, 2, 1, "relu6", ACT)
cin = ch(32)
# (expansion t, channels c, repeats n, stride s) of MobileNetV2
for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
    for i in range(n):
        stride = s if i == 0 else 1
        cout = ch(c)
        block_in = y
        hidden = cin * t
        if t != 1:
            y, h2 = conv(y, cin, h, hidden, 1, 1, 1, "relu6", ACT)
        y, h2 = conv(y, hidden, h, hidden, 3, stride, hidden, "relu6", ACT)
        y, h2 = conv(y, hidden, h2, cout, 1, 1, 1, "none", LIN)
        if stride == 1 and cin == cout:
            count[0] += 1
            r = f"add{count[0]}"
            tensors.append({"name": r, "shape": [1, h2, h2, cout], "dtype": "i8"})
            ops.append({"type": "add", "name": r, "inputs": [block_in, y], "outputs": [r], "output_quant": LIN})
            y = r
        cin, h = cout, h2
y, h = conv(y, cin, h, 1280, 1, 1, 1, "relu6", ACT)
tensors.append({"name": "pooled", "shape": [1, 1280], "dtype": "i8"})
ops.append({"type": "avg_pool2d", "name": "pool", "inputs": [y], "outputs": ["pooled"], "global": True,
            "output_quant": {"scheme": "q8to", "scale": 0.03, "zero_point": -128}})
weight("fc.w", [1000, 1280], 1280)
tensors.append({"name": "logits", "shape": [1, 1000]})
ops.append({"type": "linear", "name": "classifier", "inputs": ["pooled", "fc.w", "fc.w.bias"], "outputs": ["logits"]})

header, off = {}, 0
for name, dt, shape, data in entries:
    header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(data)]}
    off += len(data)
hb = json.dumps(header).encode()
hb += b" " * ((8 - len(hb) % 8) % 8)
with open(os.path.join(out, "weights.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(hb)) + hb)
    for _, _, _, data in entries:
        f.write(data)
graph = {"format": "vkqc-graph", "version": 1, "weights": "weights.safetensors", "inputs": ["x"],
         "outputs": ["logits"], "tensors": tensors, "ops": ops}
with open(os.path.join(out, "graph.json"), "w") as f:
    json.dump(graph, f, indent=1)
    f.write("\n")
