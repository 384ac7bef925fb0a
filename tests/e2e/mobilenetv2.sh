#!/usr/bin/env bash
# The MobileNetV2-shaped static int8 example on lavapipe with validation: every op checked on
# the GPU's own inputs (int8 outputs within 1 LSB), end to end logits within 5e-2 of max |ref|
# with the same top-1; and a static chain quantize -> linear(q8to) -> linear(q8to) -> dequantize
# whose inspect output shows no float tensor between the quantize and the dequantize.
set -u
VKQC=$1 SRC=$2 WORK=$3
source "$SRC/tests/e2e/common.bash"
python3 "$SRC/examples/mobilenetv2/make_example.py" "$WORK/mnv2" || { echo "generator failed"; exit 1; }
G="$WORK/mnv2/graph.json"
expect_writes "compile (keep intermediates)" "$WORK/m.vkqb" compile "$G" --target lavapipe --keep-intermediates -o "$WORK/m.vkqb"
for seed in 1 2; do
  vk run "$WORK/m.vkqb" --validation --reference "$G" --per-op --seed "$seed"
  if [ "$RC" -eq 0 ] && out_has "0 failed" && out_has "top-1 identical in 1 of 1" && out_has " PASS"; then
    ok "per-op and end-to-end check (seed $seed)"
  else
    fail "per-op and end-to-end check (seed $seed)" "$(last_run_report)"
  fi
done
# Forced accumulations; the linear family's GEMM for every convolution (the residual adds then run
# as second dispatches of their convolutions' layers); and the rows kernel with lanes splitting K
# on lavapipe through a GPU profile (android-16), intermediates not kept (the adds in the kernel).
for v in "dot:lavapipe:--force-accum dot" "dequant:lavapipe:--force-accum dequant" "gemm:lavapipe:--force-kernel gemm" "a16:android-16:"; do
  name=${v%%:*} rest=${v#*:}
  target=${rest%%:*} opts=${rest#*:}
  expect_writes "compile ($name)" "$WORK/m-$name.vkqb" compile "$G" --target "$target" --keep-intermediates $opts -o "$WORK/m-$name.vkqb"
  vk run "$WORK/m-$name.vkqb" --validation --reference "$G" --per-op
  if [ "$RC" -eq 0 ] && out_has "0 failed" && out_has " PASS"; then ok "per-op check ($name)"; else fail "per-op check ($name)" "$(last_run_report)"; fi
done
expect_writes "compile (android-16, no kept intermediates)" "$WORK/m-a16n.vkqb" compile "$G" --target android-16 -o "$WORK/m-a16n.vkqb"
vk run "$WORK/m-a16n.vkqb" --validation --reference "$G"
if [ "$RC" -eq 0 ] && out_has " PASS"; then ok "end to end (android-16)"; else fail "end to end (android-16)" "$(last_run_report)"; fi
vk inspect "$WORK/m.vkqb"
if out_has "conv2d_im2col_i8_q8csw_q8to" && out_has "conv2d_pointwise_i8_q8csw_q8to" && out_has "computes the depthwise convolution" &&
   out_has "_rows_add" && out_has "computed and written by" &&
   out_has "computes the global average pool 'pool' that reads its output (a second dispatch of this layer: intermediates kept)"; then
  ok "inspect shows im2col, pointwise, the depthwise convolutions, adds and the global pool computed by the pointwise ones"
else
  fail "inspect shows the CNN variants" "$(last_run_report)"
fi
vk inspect "$WORK/m-a16n.vkqb"
if out_has "_rows_dw_add" && out_has "pixel(s) x" && out_has "conv2d_im2col_i8_q8csw_q8to_i32_rows_gather" &&
   out_has "conv2d_pointwise_i8_q8csw_q8to_i32_rows_pool" && out_has "_rows_dw_chain" &&
   out_has "computes the pointwise convolution 'conv4' that reads its output in the same dispatch"; then
  ok "inspect (android-16): depthwise convolutions, expand layers, the stem's im2col and the global pool inside the kernels"
else
  fail "inspect (android-16) of the depthwise + pointwise kernel" "$(last_run_report)"
fi

# Static int8 chain: no float tensor between quantize and dequantize.
python3 - "$WORK/chain" <<'PY'
import json, os, struct, sys, random
out = sys.argv[1]; os.makedirs(out, exist_ok=True); rng = random.Random(3)
K, N1, N2 = 40, 24, 13
def w(n, k): return bytes(rng.randrange(-127, 128) & 0xFF for _ in range(n * k))
ents = [("w1", "I8", [N1, K], w(N1, K)), ("w1.s", "F32", [N1], struct.pack(f"<{N1}f", *[0.01] * N1)),
        ("w2", "I8", [N2, N1], w(N2, N1)), ("w2.s", "F32", [N2], struct.pack(f"<{N2}f", *[0.02] * N2))]
hdr, off = {}, 0
for n, dt, sh, d in ents: hdr[n] = {"dtype": dt, "shape": sh, "data_offsets": [off, off + len(d)]}; off += len(d)
h = json.dumps(hdr).encode(); h += b" " * ((8 - len(h) % 8) % 8)
open(f"{out}/w.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + b"".join(e[3] for e in ents))
g = {"format": "vkqc-graph", "version": 1, "weights": "w.safetensors", "inputs": ["x"], "outputs": ["y"],
     "tensors": [{"name": "x", "shape": [7, K]},
                 {"name": "xq", "shape": [7, K], "dtype": "i8", "quant": {"scheme": "q8ta", "scale": 0.03, "zero_point": 2}},
                 {"name": "w1", "shape": [N1, K], "dtype": "i8", "data": "w1", "quant": {"scheme": "q8csw", "scales": "w1.s"}},
                 {"name": "h", "shape": [7, N1], "dtype": "i8"},
                 {"name": "w2", "shape": [N2, N1], "dtype": "i8", "data": "w2", "quant": {"scheme": "q8csw", "scales": "w2.s"}},
                 {"name": "hq", "shape": [7, N2], "dtype": "i8"},
                 {"name": "y", "shape": [7, N2]}],
     "ops": [{"type": "quantize", "name": "quant", "inputs": ["x"], "outputs": ["xq"]},
             {"type": "linear", "name": "fc1", "inputs": ["xq", "w1"], "outputs": ["h"], "fused_relu": True,
              "output_quant": {"scheme": "q8to", "scale": 0.05, "zero_point": -100}},
             {"type": "linear", "name": "fc2", "inputs": ["h", "w2"], "outputs": ["hq"],
              "output_quant": {"scheme": "q8to", "scale": 0.04, "zero_point": 1}},
             {"type": "dequantize", "name": "dequant", "inputs": ["hq"], "outputs": ["y"]}]}
json.dump(g, open(f"{out}/graph.json", "w"), indent=1)
# The same chain as exporters write it: fc1's int8 output dequantized and quantized again.
g["tensors"] += [{"name": "hf", "shape": [7, N1]},
                 {"name": "h2", "shape": [7, N1], "dtype": "i8", "quant": {"scheme": "q8ta", "scale": 0.05, "zero_point": -100}}]
g["ops"][2]["inputs"] = ["h2", "w2"]
g["ops"][2:2] = [{"type": "dequantize", "name": "dq_mid", "inputs": ["h"], "outputs": ["hf"]},
                 {"type": "quantize", "name": "q_mid", "inputs": ["hf"], "outputs": ["h2"]}]
json.dump(g, open(f"{out}/graph2.json", "w"), indent=1)
PY
C="$WORK/chain/graph.json"
expect_writes "compile the static chain" "$WORK/chain.vkqb" compile "$C" --target lavapipe --keep-intermediates -o "$WORK/chain.vkqb"
vk run "$WORK/chain.vkqb" --validation --reference "$C" --per-op
if [ "$RC" -eq 0 ] && out_has "4 ops, 0 failed" && out_has "at most 1 LSB" && out_has " PASS"; then ok "static chain within 1 LSB per op"; else fail "static chain within 1 LSB per op" "$(last_run_report)"; fi
vk inspect "$WORK/chain.vkqb"
# Both linears read int8 (i8) and write int8 (q8to): nothing between quantize and dequantize is float.
if grep -Eq "layer fc1 +linear_i8_q8csw_q8to_" "$OUT_FILE" && grep -Eq "layer fc2 +linear_i8_q8csw_q8to_" "$OUT_FILE"; then
  ok "chain stays int8: fc1 and fc2 read and write packed int8"
else
  fail "chain stays int8" "$(last_run_report)"
fi
if out_has "conversions remaining: 2" && out_has "quant quantize_q8ta: the graph input 'x' is float" &&
   out_has "dequant dequantize_i8: the graph output 'y' is float"; then
  ok "inspect: the only conversions are at the graph's float input and output"
else
  fail "inspect lists the remaining conversions" "$(last_run_report)"
fi
C2="$WORK/chain/graph2.json"
expect_writes "compile the chain with a dequantize/quantize pair" "$WORK/chain2.vkqb" compile "$C2" --target lavapipe --keep-intermediates -o "$WORK/chain2.vkqb"
vk inspect "$WORK/chain2.vkqb"
if out_has "conversions remaining: 2" && out_has "folded by the compiler: 2" && grep -Eq "layer dq_mid +folded" "$OUT_FILE"; then
  ok "the dequantize -> quantize pair is folded away"
else
  fail "fold the dequantize -> quantize pair" "$(last_run_report)"
fi
vk run "$WORK/chain2.vkqb" --validation --reference "$C2" --per-op
if [ "$RC" -eq 0 ] && out_has " PASS"; then ok "folded chain matches the reference of the graph as written"; else fail "folded chain vs reference" "$(last_run_report)"; fi
finish
