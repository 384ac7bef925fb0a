#!/usr/bin/env bash
# Device call of 2026-12-02 (session 15), second: where the row extrema's cost goes. Diagnostic
# hooks (not in main): VKQC_DIAG_EXSTRIDE spreads the slots (words between slots: 32 = one per
# 128-byte line); VKQC_DIAG_XQ=VKQC_DIAG_FASTDIV derives the consumer's parameters by plain
# divisions (inexact: a probe of the exact divisions' cost); VKQC_DIAG_ROLLED (extrema prologue)
# and VKQC_DIAG_ROLLED0 (the plain prologue's one-invocation chain): dq8ca_params_rolled (exact).
# Second run: V="main ext32 ext32fast ext32rolled mainrolled".
export OUT
source bench/device_env.sh
device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
c() { env $2 .dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 $3 -o /tmp/1b_$1.vkqb > /dev/null || exit 1; }
c main "" --no-producer-extrema
c ext "" ""
c ext32 VKQC_DIAG_EXSTRIDE=32 ""
c ext32fast "VKQC_DIAG_EXSTRIDE=32 VKQC_DIAG_XQ=VKQC_DIAG_FASTDIV" ""
c ext32rolled "VKQC_DIAG_EXSTRIDE=32 VKQC_DIAG_XQ=VKQC_DIAG_ROLLED" ""
c mainrolled VKQC_DIAG_XQ0=VKQC_DIAG_ROLLED0 --no-producer-extrema
t compiled
V="${V:-main ext ext32 ext32fast}"
b() { timeout 60 .dev/x/vkqc bench /tmp/1b_$2.vkqb --tokens 1 --position $1 --min-ms 300 > /tmp/b.txt 2>&1
  echo "$3 position $1 $2: $(grep 'whole program' /tmp/b.txt | head -1 | sed 's/whole program without per-layer timestamps//')"; }
for round in 1 2; do for pos in 128 2032; do for v in $V; do b $pos $v r$round; done; done; done
for v in $V; do
  timeout 60 .dev/x/vkqc bench /tmp/1b_$v.vkqb --tokens 1 --position 128 --min-ms 100 > /tmp/l.txt 2>&1
  echo "$v per layer:"; grep -E "layers\.3\.(o_proj|gate_proj|down_proj|attention)|row_extrema" /tmp/l.txt | head -6
done
for v in main ext32rolled mainrolled; do
  echo "$v: $(timeout 200 .dev/x/vkqc run /tmp/1b_$v.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output logits' | tr '\n' ' ')"
done
t done
