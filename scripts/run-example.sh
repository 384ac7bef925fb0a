#!/usr/bin/env bash
# Compiles the bundled example model (examples/mlp) for the local Vulkan device's profile,
# runs it on that device with the validation layer on, and checks it against the CPU reference.
# With no GPU, the device is lavapipe (Mesa's CPU Vulkan driver). VKQC_LAVAPIPE=1 forces it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "${VKQC_LAVAPIPE:-0}" = 1 ]; then
  export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
fi
out=build/example
mkdir -p "$out"
set -x
build/vkqc import examples/mlp/graph.json -o "$out/mlp.vkqg"
build/vkqc probe -o "$out/local.json"
build/vkqc compile "$out/mlp.vkqg" --target "$out/local.json" --tokens 1,64 -o "$out/mlp.vkqb"
build/vkqc inspect "$out/mlp.vkqb"
build/vkqc run "$out/mlp.vkqb" --tokens 1 --validation --reference "$out/mlp.vkqg" --output-dir "$out"
build/vkqc run "$out/mlp.vkqb" --tokens 64 --validation --reference "$out/mlp.vkqg" --output-dir "$out"

# The MLP block of Llama-3.2-1B (int4 weights, dynamic per-token int8 activations): one bundle,
# two programs (decode: 1 token, prefill: 128 tokens) sharing one copy of the weights.
python3 examples/llama-mlp/make_example.py "$out/llama-mlp"
build/vkqc compile "$out/llama-mlp/graph.json" --target "$out/local.json" --tokens 1,128 -o "$out/llama-mlp.vkqb"
build/vkqc inspect "$out/llama-mlp.vkqb"
build/vkqc run "$out/llama-mlp.vkqb" --tokens 1 --validation --reference "$out/llama-mlp/graph.json"
build/vkqc run "$out/llama-mlp.vkqb" --tokens 128 --validation --reference "$out/llama-mlp/graph.json"

# A MobileNetV2-shaped static int8 CNN (224x224x3): every op checked on the GPU's own inputs
# (int8 outputs within 1 LSB), end to end logits close with the same top-1 class.
python3 examples/mobilenetv2/make_example.py "$out/mobilenetv2"
build/vkqc compile "$out/mobilenetv2/graph.json" --target "$out/local.json" --keep-intermediates -o "$out/mobilenetv2.vkqb"
build/vkqc run "$out/mobilenetv2.vkqb" --validation --reference "$out/mobilenetv2/graph.json" --per-op

# A tiny Llama-architecture decoder (2 layers, int4 linears, int8 embedding, f16 KV cache): decode
# and prefill programs sharing one KV cache; generate 32 tokens greedily, then check a prefill
# program against the CPU reference.
python3 examples/llama/make_example.py "$out/llama-tiny" --config tiny
build/vkqc compile "$out/llama-tiny/graph.json" --target "$out/local.json" --tokens 1,16,128 -o "$out/llama-tiny.vkqb"
build/vkqc generate "$out/llama-tiny.vkqb" --prompt-ids 1,5,9,200,33 --max-new-tokens 32 --validation
build/vkqc run "$out/llama-tiny.vkqb" --tokens 16 --validation --reference "$out/llama-tiny/graph.json"

# The same kind of decoder as a GGUF checkpoint (llama.cpp's format: Q4_0 weights and a
# SentencePiece-style tokenizer, written by examples/llama/make_gguf.py): imported exactly, then a
# text prompt in and text out.
PY=python3  # make_gguf.py needs numpy (setup.sh installs python3-numpy for the system python)
python3 -c "import numpy" 2>/dev/null || PY=/usr/bin/python3
"$PY" examples/llama/make_gguf.py "$out/gguf"
build/vkqc import "$out/gguf/model.gguf" -o "$out/gguf.vkqg"
build/vkqc inspect "$out/gguf.vkqg" > "$out/gguf-inspect.txt"
head -4 "$out/gguf-inspect.txt"
build/vkqc compile "$out/gguf.vkqg" --target "$out/local.json" --tokens 1,16 -o "$out/gguf.vkqb"
build/vkqc generate "$out/gguf.vkqb" --prompt "The capital of France is" --max-new-tokens 16 --validation
