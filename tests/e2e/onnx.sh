#!/usr/bin/env bash
# ONNX import end to end: QDQ CNNs and a MatMulNBits MLP against ONNX Runtime (onnx_models.py),
# the README's three commands (import, compile for mali-valhall, run), and every documented
# refusal of bad input (unsupported op, attribute, dynamic shape, missing external data,
# malformed files). ONNX Runtime comes from npm (onnxruntime-node, installed by .ci/run into
# VKQC_ORT_MODULES, default ~/.cache/vkqc-peers/node_modules); without it the comparisons are
# skipped with the reason printed, the rest still runs.
set -u
VKQC=$1 SRC=$2 WORK=$3
source "$SRC/tests/e2e/common.bash"
PY=/usr/bin/python3
if ! $PY -c "import onnx, numpy" 2>/dev/null; then
  echo "SKIP: python3-onnx / python3-numpy are not installed"
  exit 77
fi
ORT=${VKQC_ORT_MODULES:-$HOME/.cache/vkqc-peers/node_modules}

# --- ONNX Runtime comparisons and the three commands ---
if command -v node >/dev/null && [ -f "$ORT/onnxruntime-node/package.json" ]; then
  $PY "$SRC/tests/e2e/onnx_models.py" "$VKQC" "$WORK/models" "$ORT" > "$WORK/models.log" 2>&1
  rc=$?
  cat "$WORK/models.log"
  n_ok=$(grep -c '^ok ' "$WORK/models.log")
  n_fail=$(grep -c '^FAIL ' "$WORK/models.log")
  PASSED=$((PASSED + n_ok)) FAILED=$((FAILED + n_fail))
  [ "$rc" -eq 0 ] || [ "$n_fail" -gt 0 ] || fail "onnx_models.py exited $rc" "$(tail -20 "$WORK/models.log")"
  M=$WORK/models
  expect_writes "vkqc import mnv2_qdq.onnx" "$WORK/mnv2.vkqg" import "$M/mnv2_qdq.onnx" -o "$WORK/mnv2.vkqg"
  expect_writes "vkqc compile --target mali-valhall" "$WORK/mnv2.vkqb" compile "$WORK/mnv2.vkqg" --target mali-valhall -o "$WORK/mnv2.vkqb"
  vk run "$WORK/mnv2.vkqb" --validation --input "input=$M/mnv2_input.npy" --output-dir "$WORK/out"
  if [ "$RC" -eq 0 ] && ! crashed && $PY - "$WORK/out" "$M/mnv2_ref" <<'PY'
import json, sys, numpy as np
out, ref = sys.argv[1], sys.argv[2]
for d in json.load(open(f"{ref}/ort_outputs.json")):
    r = np.fromfile(f"{ref}/{d['file']}", {"float32": np.float32, "uint8": np.uint8}[d["dtype"]]).reshape(d["shape"])
    g = np.load(f"{out}/{d['name']}.npy")
    g = g.astype(np.int16) + 128 if r.dtype == np.uint8 else g
    assert np.abs(g.astype(np.float64) - r).max() <= 1e-6 + (1 if r.dtype == np.uint8 else 0), d["name"]
PY
  then ok "vkqc run of the mali-valhall bundle on lavapipe = ONNX Runtime"; else fail "mali-valhall bundle run" "$(last_run_report)"; fi
  vk inspect "$WORK/mnv2.vkqb"
  if [ "$RC" -eq 0 ] && out_has "transpose" && out_has "computes the depthwise convolution" && out_has "_rows_add" && out_has "fused"; then
    ok "inspect: the NCHW input transpose, int8 depthwise convs and adds computed by the convolutions next to them"
  else
    fail "inspect of the imported MobileNetV2" "$(last_run_report)"
  fi
else
  echo "SKIP (ONNX Runtime comparisons and the three commands): node or $ORT/onnxruntime-node is missing;"
  echo "     install with: npm install --prefix ~/.cache/vkqc-peers --ignore-scripts onnxruntime-node"
fi

# --- bad input ---
$PY - "$WORK/bad" <<'PY' || { echo "bad-model generator failed"; exit 1; }
import os, sys, numpy as np, onnx
from onnx import TensorProto, helper, numpy_helper
d = sys.argv[1]; os.makedirs(d, exist_ok=True)
def model(nodes, inits, inp_shape, name, opset=13, elem=TensorProto.FLOAT):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", elem, inp_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]); m.ir_version = 7
    return m
def qdq_conv(shape):
    w = numpy_helper.from_array(np.arange(-8, 8, dtype=np.int8).reshape(2, 2, 2, 2), "w")
    ws = numpy_helper.from_array(np.array([0.1, 0.2], np.float32), "ws")
    s = numpy_helper.from_array(np.array(0.05, np.float32), "s")
    z = numpy_helper.from_array(np.array(128, np.uint8), "z")
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "ws"], ["wd"], axis=0),
             helper.make_node("Conv", ["xd", "wd"], ["y"], name="conv0", kernel_shape=[2, 2])]
    return model(nodes, [w, ws, s, z], shape, "qdq_conv")
onnx.save(model([helper.make_node("Erf", ["x"], ["y"], name="erf0")], [], [1, 4], "erf"), f"{d}/unsupported_op.onnx")
onnx.save(model([helper.make_node("MaxPool", ["x"], ["y"], name="pool0", kernel_shape=[2, 2], dilations=[2, 2])], [],
                [1, 2, 6, 6], "dil"), f"{d}/bad_attr.onnx")
onnx.save(qdq_conv(["N", 2, 5, 5]), f"{d}/dynamic.onnx")
onnx.save(model([helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "ys", "yz"], name="dql")], [], [1, 4], "dql"),
          f"{d}/dynamic_quantize.onnx")
onnx.save(qdq_conv([1, 2, 5, 5]), f"{d}/external.onnx", save_as_external_data=True, all_tensors_to_one_file=True, location="external.bin",
          size_threshold=0)
onnx.save(qdq_conv([1, 2, 5, 5]), f"{d}/missing.onnx", save_as_external_data=True, all_tensors_to_one_file=True, location="gone.bin",
          size_threshold=0)
os.remove(f"{d}/gone.bin")
b = open(f"{d}/external.onnx", "rb").read()
open(f"{d}/truncated.onnx", "wb").write(b[: len(b) // 2])
open(f"{d}/garbage.onnx", "wb").write(bytes(range(256)) * 4)
PY
B=$WORK/bad
expect_error "unsupported op: node, op and the supported list" "node 0 'erf0' (Erf)" "unsupported op 'Erf'" "vkqc imports QuantizeLinear" -- \
  import "$B/unsupported_op.onnx" -o "$WORK/x.vkqg"
expect_error "unsupported attribute value" "node 0 'pool0' (MaxPool)" "dilations other than 1" -- import "$B/bad_attr.onnx" -o "$WORK/x.vkqg"
expect_error "dynamic dimension without --input-shape" "dynamic dimension 'N'" "--input-shape x=" -- import "$B/dynamic.onnx" -o "$WORK/x.vkqg"
expect_writes "dynamic dimension bound with --input-shape" "$WORK/dyn.vkqg" import "$B/dynamic.onnx" --input-shape x=1,2,5,5 -o "$WORK/dyn.vkqg"
expect_error "--input-shape contradicting the model" "dimension 1 is 2 in the model, not 3" -- \
  import "$B/dynamic.onnx" --input-shape x=1,3,5,5 -o "$WORK/x.vkqg"
expect_error "--input-shape of an unknown input" "not a graph input" -- import "$B/dynamic.onnx" --input-shape y=1 --input-shape x=1,2,5,5 -o "$WORK/x.vkqg"
expect_error "DynamicQuantizeLinear refused with the reason" "DynamicQuantizeLinear" "per token (dq8ca" -- import "$B/dynamic_quantize.onnx" -o "$WORK/x.vkqg"
expect_writes "external data beside the model" "$WORK/ext.vkqb" compile "$B/external.onnx" --target lavapipe -o "$WORK/ext.vkqb"
expect_error "external data file missing" "external data file" "gone.bin" "is missing" -- import "$B/missing.onnx" -o "$WORK/x.vkqg"
expect_error "truncated model" "malformed protobuf" -- import "$B/truncated.onnx" -o "$WORK/x.vkqg"
expect_error "not a protobuf at all" "garbage.onnx" -- import "$B/garbage.onnx" -o "$WORK/x.vkqg"
expect_error "--input-layout takes nhwc or nchw" "--input-layout must be nhwc or nchw" -- import "$B/external.onnx" --input-layout chw -o "$WORK/x.vkqg"
expect_error "ONNX options on a non-ONNX file" "applies to ONNX files" -- import "$WORK/nothing.json" --input-layout nhwc -o "$WORK/x.vkqg"
finish
