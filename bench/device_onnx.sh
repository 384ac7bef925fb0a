set -u
# One device call (ONNX session): the new CNN/layout ops' GPU tests and the imported ONNX models
# (built and run through ONNX Runtime on the build machine, carried in .dev/onnx) on the H100.
source bench/device_env.sh
V=.dev/vkqc; P=/tmp/h100.json; D=.dev/onnx
$V probe -o $P > /dev/null
VKQC_TEST_PROFILE=$P timeout 300 .dev/vkqc_gpu_tests --gtest_filter='CnnOps*:LayoutOps*:Ops/Combinations.*:Combinations*' > /tmp/t.log 2>&1
echo "gpu tests rc=$?"; grep -E '^\[  (PASSED|FAILED)|Failure' /tmp/t.log | head
python3 -c "import numpy" 2>/dev/null && echo "numpy: yes" || echo "numpy: no"
python3 - "$D/nbits_ref" <<'PY'
import numpy as np, sys
np.save("/tmp/x.npy", np.fromfile(".dev/onnx/in_x.bin", np.float32).reshape(3, 128))
PY
for m in mnv2 resnet_se nbits; do
  in=$D/${m}_input.npy; name=input; [ $m = nbits ] && { in=/tmp/x.npy; name=x; }
  for t in nvidia-hopper $P; do
    $V compile $D/${m}$([ $m = nbits ] || echo _qdq).onnx --target $t -o /tmp/$m.vkqb > /tmp/c.log 2>&1 || { echo "$m compile failed"; tail -3 /tmp/c.log; continue; }
    rm -rf /tmp/out; $V run /tmp/$m.vkqb --validation --input $name=$in --output-dir /tmp/out > /tmp/r.log 2>&1 || { echo "$m run failed"; tail -5 /tmp/r.log; continue; }
    python3 - /tmp/out $D/${m}_ref "$m $(basename $t)" <<'PY'
import json, sys, numpy as np
out, ref, tag = sys.argv[1:]
for d in json.load(open(f"{ref}/ort_outputs.json")):
    r = np.fromfile(f"{ref}/{d['file']}", {"float32": np.float32, "uint8": np.uint8}[d["dtype"]]).reshape(d["shape"])
    g = np.load(f"{out}/{d['name']}.npy")
    g = g.astype(np.int16) + 128 if r.dtype == np.uint8 else g
    print(f"{tag}: {d['name']} {list(r.shape)} max |diff| vs ORT {float(np.abs(g.astype(np.float64) - r).max()):.3g}"
          + (f", top-1 same: {bool((g.argmax(-1) == r.argmax(-1)).all())}" if r.ndim == 2 and r.dtype != np.uint8 else ""))
PY
  done
  timeout 60 $V bench /tmp/$m.vkqb --min-ms 500 2>&1 | grep -iE "whole|total|per run" | head -2
done
grep -c "validation" /tmp/r.log
