#!/usr/bin/env bash
# Device call of 2026-11-29 (session 11), a diagnostic binary (not in main): 5901965 with one line in
# SelectDecodeAttention skipping every block size but $VKQC_DIAG_DECODE_BK. The decode attention in
# blocks (= chunks) of 64, 32 and 16 keys, 1b one-token program at positions 128, 512, 2032.
source bench/device_env.sh
device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for bk in 64 32 16; do
  VKQC_DIAG_DECODE_BK=$bk .dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 -o /tmp/1b_$bk.vkqb > /dev/null || exit 1
  .dev/x/vkqc inspect /tmp/1b_$bk.vkqb | grep -m1 "attention_decode" | cut -c1-300
done
t compiled
for round in 1 2; do for pos in 128 512 2032; do for bk in 64 32 16; do
  timeout 60 .dev/x/vkqc bench /tmp/1b_$bk.vkqb --tokens 1 --position $pos --min-ms 300 > /tmp/b.txt 2>&1
  echo "r$round position $pos bk $bk: $(grep 'whole program' /tmp/b.txt | head -1)"
done; done; done
t done
