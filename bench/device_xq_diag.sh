#!/usr/bin/env bash
# Device call of 2026-12-02 (session 15): what the per-token quantization prologue of the decode
# GEMVs that quantize their own row (o_proj, down_proj: VKQC_XQ_PROLOGUE) costs in the step. One
# binary with a diagnostic hook (not in main: VKQC_DIAG_XQ adds a define to those GEMVs). Variants
# (results wrong but for main): FIXED derives the parameters per invocation from constants (no
# min/max reduction, no one-invocation chain, no barrier before the quantization); NONE skips the
# prologue (no row load, no quantization).
export OUT
source bench/device_env.sh
device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
declare -A DEFS=([main]="" [fixed]=VKQC_DIAG_XQ_FIXED [none]=VKQC_DIAG_XQ_NONE)
for v in main fixed none; do
  VKQC_DIAG_XQ="${DEFS[$v]}" .dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,4 -o /tmp/1b_$v.vkqb > /dev/null || exit 1
done
t compiled
b() { timeout 60 .dev/x/vkqc bench /tmp/1b_$2.vkqb --tokens ${4:-1} --position $1 --min-ms 300 > /tmp/b.txt 2>&1
  echo "$3 tokens ${4:-1} position $1 $2: $(grep 'whole program' /tmp/b.txt | head -1 | sed 's/whole program without per-layer timestamps//')"; }
for round in 1 2; do for pos in 128 2032; do for v in main fixed none; do b $pos $v r$round; done; done; done
for v in main fixed none; do b 128 $v r1 4; done
for v in main fixed; do
  timeout 60 .dev/x/vkqc bench /tmp/1b_$v.vkqb --tokens 1 --position 128 --min-ms 100 > /tmp/l.txt 2>&1
  echo "$v per layer:"; grep -E "layers\.3\.(self_attn\.o_proj|mlp\.down_proj)|layers\.3\.(input|post)" /tmp/l.txt | head -6
done
echo "main: $(timeout 200 .dev/x/vkqc run /tmp/1b_main.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output' | tr '\n' ' ')"
t done
