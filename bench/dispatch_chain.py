#!/usr/bin/env python3
"""A chain of N dependent `silu` ops on a small f32 row: `vkqc bench` of it measures the fixed cost of
one dispatch plus the barrier before the next in a replayed command buffer (issue 15 part 3), the
floor under every decode step (the 1b example's is ~230 dispatches).
With FANOUT=1 in the environment the N ops are independent instead (each reads the input, each
output is a graph output): no barriers between them, the cost of a dispatch alone.
usage: bench/dispatch_chain.py OUT_DIR N [WIDTH]   -> OUT_DIR/graph.json"""
import json, os, sys

out, n = sys.argv[1], int(sys.argv[2])
width = int(sys.argv[3]) if len(sys.argv) > 3 else 256
os.makedirs(out, exist_ok=True)
tensors = [{"name": f"t{i}", "shape": ["tokens", width], "dtype": "f32"} for i in range(n + 1)]
fan = os.environ.get("FANOUT") == "1"
ops = [{"type": "silu", "name": f"silu{i}", "inputs": ["t0" if fan else f"t{i}"], "outputs": [f"t{i + 1}"]}
       for i in range(n)]
outs = [f"t{i + 1}" for i in range(n)] if fan else [f"t{n}"]
g = {"format": "vkqc-graph", "version": 1, "inputs": ["t0"], "outputs": outs, "tensors": tensors, "ops": ops}
with open(os.path.join(out, "graph.json"), "w") as f:
    json.dump(g, f, indent=1)
