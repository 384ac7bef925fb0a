#!/usr/bin/env bash
# ONNX's own node tests (Debian libonnx-testdata) imported, compiled for lavapipe and run with
# validation: see onnx_conformance.py. Skipped (exit 77) when the data or python3-onnx is missing.
set -u
VKQC=$1 SRC=$2 WORK=$3
if [ ! -d /usr/share/libonnx-testdata/data/node ] || ! /usr/bin/python3 -c "import onnx, numpy" 2>/dev/null; then
  echo "SKIP: libonnx-testdata or python3-onnx is not installed (apt-get install libonnx-testdata python3-onnx)"
  exit 77
fi
mkdir -p "$WORK"
/usr/bin/python3 "$SRC/tests/e2e/onnx_conformance.py" "$VKQC" "$WORK/node"
