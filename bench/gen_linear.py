#!/usr/bin/env python3
"""Writes one single-linear-layer benchmark graph: DIR/graph.json + DIR/weights.safetensors.

usage: gen_linear.py DIR K N ACT [WEIGHTS [GROUP]]
  ACT      q8ta | dq8ca | float        (how the float input is quantized; float = weight-only)
           i8                          (the input is already int8, per tensor: no quantize pass)
  WEIGHTS  q8csw (default) | q8gsw | q4gsw | q4gaw | q4gmw;  GROUP: group size of the grouped schemes (default 32)
Weights are random (os.urandom), scales 1/(64*sqrt(K)) (int8) or 1/(8*sqrt(K)) (int4), a bias,
a symbolic token dimension, so `vkqc compile --tokens 1,8,128,512` builds every size at once.
"""
import json, os, struct, sys

out, k, n, act = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
wq = sys.argv[5] if len(sys.argv) > 5 else "q8csw"
gs = int(sys.argv[6]) if len(sys.argv) > 6 else 32
if act not in ("q8ta", "dq8ca", "float", "i8") or wq not in ("q8csw", "q8gsw", "q4gsw", "q4gaw", "q4gmw"):
    sys.exit(__doc__)
os.makedirs(out, exist_ok=True)
if wq == "q8csw":
    entries = [("w", "I8", [n, k], os.urandom(n * k)),
               ("w.scale", "F32", [n], struct.pack(f"{n}f", *([1.0 / (64.0 * k ** 0.5)] * n)))]
    wt = {"name": "w", "shape": [n, k], "dtype": "i8", "data": "w", "quant": {"scheme": "q8csw", "scales": "w.scale"}}
elif wq == "q8gsw":
    g = k // gs
    entries = [("w", "I8", [n, k], os.urandom(n * k)),
               ("w.scale", "F32", [n, g], struct.pack(f"{n * g}f", *([1.0 / (64.0 * k ** 0.5)] * (n * g))))]
    wt = {"name": "w", "shape": [n, k], "dtype": "i8", "data": "w",
          "quant": {"scheme": "q8gsw", "group_size": gs, "scales": "w.scale"}}
else:
    g = k // gs
    entries = [("w", "U8", [n, k // 2], os.urandom(n * k // 2)),
               ("w.scale", "F32", [n, g], struct.pack(f"{n * g}f", *([1.0 / (8.0 * k ** 0.5)] * (n * g))))]
    q = {"scheme": wq, "group_size": gs, "scales": "w.scale"}
    if wq == "q4gaw":
        entries.append(("w.zp", "U8", [n, g], bytes(5 + b % 7 for b in os.urandom(n * g))))
        q["zero_points"] = "w.zp"
    if wq == "q4gmw":  # w = s * q - m, q in [0, 15]: minimum 7.5 s
        entries.append(("w.min", "F32", [n, g], struct.pack(f"{n * g}f", *([7.5 / (8.0 * k ** 0.5)] * (n * g)))))
        q["mins"] = "w.min"
    wt = {"name": "w", "shape": [n, k], "dtype": "i4" if wq == "q4gsw" else "u4", "data": "w", "quant": q}
entries.append(("b", "F32", [n], struct.pack(f"{n}f", *([0.01] * n))))
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
quant = {"q8ta": {"scheme": "q8ta", "scale": 0.02, "zero_point": 0}, "dq8ca": {"scheme": "dq8ca"},
         "float": {"scheme": "float"}, "i8": None}[act]
x = {"name": "x", "shape": ["tokens", k]}
if act == "i8":
    x.update({"dtype": "i8", "quant": {"scheme": "q8ta", "scale": 0.02, "zero_point": 3}})
graph = {
    "format": "vkqc-graph", "version": 1, "weights": "weights.safetensors",
    "inputs": ["x"], "outputs": ["y"],
    "tensors": [
        x,
        wt,
        {"name": "b", "shape": [n], "data": "b"},
        {"name": "y", "shape": ["tokens", n]},
    ],
    "ops": [dict({"type": "linear", "name": f"linear_{k}x{n}", "inputs": ["x", "w", "b"], "outputs": ["y"]},
                 **({"input_quant": quant} if quant else {}))],
}
with open(os.path.join(out, "graph.json"), "w") as f:
    json.dump(graph, f, indent=1)
