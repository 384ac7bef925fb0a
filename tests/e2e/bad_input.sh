#!/usr/bin/env bash
# Bad input to the vkqc CLI: broken graph JSON, safetensors, .vkqg, .vkqb, profiles, options and
# .npy inputs. Every case must fail cleanly (exit code 1 or 2, never a signal, an abort or an
# uncaught exception) with a message on stderr that names the file and the thing at fault.
#
# usage: bash bad_input.sh <path-to-vkqc> <source-dir> <work-dir>
source "$(dirname "$0")/common.bash" "$@"

G=$WORK/graphs   # broken graph JSON + safetensors, from fixtures.py bad-graphs
F=$WORK/files    # everything else
mkdir -p "$F"
MODEL=$F/mlp.vkqg
BUNDLE=$F/mlp.vkqb

# Known-good material to break.
setup() {
  local why=()
  $FIXTURES bad-graphs "$SRC/examples/mlp" "$G" || why+=("fixtures.py bad-graphs failed")
  vk import "$SRC/examples/mlp/graph.json" -o "$MODEL"
  [ "$RC" -eq 0 ] || why+=("$(last_run_report)")
  vk compile "$MODEL" --target lavapipe --tokens 1,64 -o "$BUNDLE"
  [ "$RC" -eq 0 ] || why+=("$(last_run_report)")
  if [ ${#why[@]} -eq 0 ]; then ok "setup: fixtures, mlp.vkqg, mlp.vkqb"; else fail "setup: fixtures, mlp.vkqg, mlp.vkqb" "${why[@]}"; finish; fi
}

# bad_import NAME GRAPH PATTERN...: `vkqc import GRAPH` must fail naming GRAPH's file and PATTERNs.
bad_import() {
  local name=$1 graph=$2
  shift 2
  expect_error "$name" "$(basename "$graph")" "$@" -- import "$graph" -o "$F/out.vkqg"
}

# bad_compile NAME GRAPH PATTERN...: the same for `vkqc compile GRAPH --target lavapipe`.
bad_compile() {
  local name=$1 graph=$2
  shift 2
  expect_error "$name" "$(basename "$graph")" "$@" -- compile "$graph" --target lavapipe --tokens 1,64 -o "$F/out.vkqb"
}

# bad_bundle NAME BUNDLE PATTERN...: both `vkqc run` and `vkqc inspect` must refuse BUNDLE.
bad_bundle() {
  local name=$1 bundle=$2
  shift 2
  expect_error "$name (run)" "$(basename "$bundle")" "$@" -- run "$bundle" --tokens 1
  expect_error "$name (inspect)" "$(basename "$bundle")" "$@" -- inspect "$bundle"
}

# flip_bytes COMMAND: `vkqc COMMAND` on the copies of the bundle with one byte inverted at each of
# $FLIP_POSITIONS (flip_POS.vkqb). Errors are fine; crashes, odd exit codes and errors that do not
# name the file are not.
flip_bytes() {
  local cmd=$1 name="bytes flipped in a .vkqb at $(echo $FLIP_POSITIONS | wc -w) positions: $1 never crashes"
  local p f rejected=0 accepted=0 bad=()
  for p in $FLIP_POSITIONS; do
    f=$F/flip_$p.vkqb
    if [ "$cmd" = run ]; then vk run "$f" --tokens 1; else vk inspect "$f"; fi
    if crashed || [ "$RC" -gt 2 ]; then
      bad+=("byte $p: crash or exit code $RC" "$(last_run_report)")
    elif [ "$RC" -ne 0 ]; then
      rejected=$((rejected + 1))
      err_has "flip_$p.vkqb" || bad+=("byte $p: the error does not name the file" "$(last_run_report)")
    else
      accepted=$((accepted + 1))
    fi
  done
  if [ ${#bad[@]} -eq 0 ]; then
    ok "$name ($rejected rejected, $accepted accepted)"
  else
    fail "$name ($rejected rejected, $accepted accepted)" "${bad[@]}"
  fi
}

setup

echo "== graph JSON"
bad_import "malformed JSON (syntax error)" "$G/syntax.json" "syntax.json:3:" "invalid JSON" "syntax error"
bad_import "truncated JSON" "$G/truncated.json" "invalid JSON" "unexpected end of input"
bad_import "unknown key" "$G/unknown_key.json" "ops[0] 'fc1'" "unknown key 'fused_reul'"
bad_import "unknown op type" "$G/unknown_op.json" "ops[1] 'fc2'" "unknown op type 'conv9'"
bad_import "op reads an undeclared tensor" "$G/missing_tensor.json" "'fc2'" "'h9'"
bad_import "shape mismatch (K of x vs weight)" "$G/k_mismatch.json" "'fc1'" "'fc1.weight'" "[tokens, 200]"
bad_import "JSON dtype differs from the safetensors dtype" "$G/json_dtype.json" "'fc1.bias'" "f16" "F32"
bad_compile "q4gsw with a bad group size (compile)" "$G/q4gsw.json" "'w'" "group_size 20"
bad_import "q4gsw with a bad group size (import)" "$G/q4gsw.json" "'w'" "group_size 20"

echo "== safetensors"
bad_import "weights file missing" "$G/no_weights_file.json" "no_such_weights.safetensors"
bad_import "truncated safetensors (data)" "$G/st_truncated.json" "st_truncated.safetensors" "data_offsets"
bad_import "truncated safetensors (header)" "$G/st_truncated_header.json" "st_truncated_header.safetensors" "header"
bad_import "data_offsets outside the file" "$G/st_offsets.json" "st_offsets.safetensors" "'fc2.weight'" "data_offsets"
bad_import "safetensors dtype differs from the JSON dtype" "$G/st_dtype.json" "st_dtype.safetensors" "'fc1.bias'" "F16" "f32"

echo "== .vkqg"
MODEL_SIZE=$(stat -c %s "$MODEL")
$FIXTURES truncate "$MODEL" "$F/cut_header.vkqg" 1000
$FIXTURES truncate "$MODEL" "$F/cut_weights.vkqg" $((MODEL_SIZE / 2))
$FIXTURES truncate "$MODEL" "$F/tiny.vkqg" 3
$FIXTURES garbage "$F/garbage.vkqg" 4096
$FIXTURES corrupt-header "$MODEL" "$F/corrupt_header.vkqg" 12 1000
cp "$BUNDLE" "$F/bundle_as_graph.vkqg"
bad_compile "truncated .vkqg (in the header)" "$F/cut_header.vkqg" "truncated"
bad_compile "truncated .vkqg (in the weights)" "$F/cut_weights.vkqg" "truncated"
bad_compile "3-byte .vkqg" "$F/tiny.vkqg" "too small"
bad_compile ".vkqg of random bytes" "$F/garbage.vkqg" "identifier"
bad_compile ".vkqg with a garbage header" "$F/corrupt_header.vkqg" "corrupt"
bad_compile "a .vkqb given as .vkqg (wrong identifier)" "$F/bundle_as_graph.vkqg" "'VKQB'" "'VKQG'"
expect_error "inspect of a truncated .vkqg" "cut_header.vkqg" "truncated" -- inspect "$F/cut_header.vkqg" --target lavapipe --tokens 1

echo "== .vkqb"
BUNDLE_SIZE=$(stat -c %s "$BUNDLE")
$FIXTURES truncate "$BUNDLE" "$F/cut_flatbuffer.vkqb" 5000
$FIXTURES truncate "$BUNDLE" "$F/cut_weights.vkqb" $((BUNDLE_SIZE * 2 / 3))
$FIXTURES truncate "$BUNDLE" "$F/tiny.vkqb" 5
$FIXTURES garbage "$F/garbage.vkqb" 4096
bad_bundle "truncated .vkqb (in the flatbuffer)" "$F/cut_flatbuffer.vkqb" "invalid bundle"
bad_bundle "5-byte .vkqb" "$F/tiny.vkqb"
bad_bundle ".vkqb of random bytes" "$F/garbage.vkqb"
bad_bundle ".vkqb with its weight segment cut (offsets outside the file)" "$F/cut_weights.vkqb" "invalid bundle"
cp "$MODEL" "$F/graph_as_bundle.vkqb"
bad_bundle "a .vkqg given as .vkqb" "$F/graph_as_bundle.vkqb"
FLIP_POSITIONS=$($FIXTURES flip-positions "$BUNDLE" 50)
$FIXTURES flip "$BUNDLE" "$F/flip_{pos}.vkqb" $FLIP_POSITIONS
flip_bytes run
flip_bytes inspect

echo "== target profiles"
expect_error "unknown target profile name (lists the known ones)" "nvidia-hoper" "lavapipe" "nvidia-hopper" "apple-moltenvk" -- \
  compile "$MODEL" --target nvidia-hoper --tokens 1 -o "$F/out.vkqb"
expect_error "malformed profile JSON" "profile_syntax.json" "JSON" -- \
  compile "$MODEL" --target "$G/profile_syntax.json" --tokens 1 -o "$F/out.vkqb"
expect_error "JSON that is not a Vulkan profile" "profile_not_profiles.json" "profiles" -- \
  compile "$MODEL" --target "$G/profile_not_profiles.json" --tokens 1 -o "$F/out.vkqb"

echo "== command line"
expect_error "unknown CLI option" "unknown option --frobnicate" -- compile "$MODEL" --target lavapipe --tokens 1 --frobnicate 3 -o "$F/out.vkqb"
expect_error "unknown CLI switch last on the line" "unknown option --validaton" -- run "$BUNDLE" --tokens 1 --validaton
expect_error "unknown command" "unknown command 'frobnicate'" -- frobnicate
expect_error "--tokens missing for a symbolic graph" "mlp.vkqg" "symbolic" "--tokens" -- compile "$MODEL" --target lavapipe -o "$F/out.vkqb"
expect_error "compile --tokens abc" "--tokens" "'abc'" -- compile "$MODEL" --target lavapipe --tokens abc -o "$F/out.vkqb"
expect_error "compile --tokens 0" "--tokens 0" -- compile "$MODEL" --target lavapipe --tokens 0 -o "$F/out.vkqb"
expect_error "run --tokens abc" "--tokens" "'abc'" -- run "$BUNDLE" --tokens abc
expect_error "run --tokens 8 on a bundle for 1,64" "tokens=8" "1, 64" -- run "$BUNDLE" --tokens 8
expect_error "run without --tokens on a bundle for 1,64" "--tokens" "1,64" -- run "$BUNDLE"
expect_error "run --tokens 4294967297 (2^32 + 1) is not tokens 1" "4294967297" -- run "$BUNDLE" --tokens 4294967297
expect_error "run --device 4294967296 (2^32) is not device 0" "4294967296" -- run "$BUNDLE" --tokens 1 --device 4294967296
expect_error "run --device 99" "device index 99" -- run "$BUNDLE" --tokens 1 --device 99

echo "== .npy inputs and outputs"
$FIXTURES npy "$F/x100.npy" 1,100
$FIXTURES npy-wrong-size "$F/short_data.npy" 1,256 100
expect_error "--input naming no input" "--input" "'z'" -- run "$BUNDLE" --tokens 1 --input "z=$F/x100.npy"
expect_error "--input without NAME=" "--input" -- run "$BUNDLE" --tokens 1 --input "$F/x100.npy"
expect_error "--input .npy of the wrong size" "x100.npy" "'x'" "256" -- run "$BUNDLE" --tokens 1 --input "x=$F/x100.npy"
expect_error "--input .npy with less data than its header says" "short_data.npy" "bytes" -- run "$BUNDLE" --tokens 1 --input "x=$F/short_data.npy"
# A missing --output-dir is created (like mkdir -p); one that cannot be created is an error.
expect_writes "--output-dir is created when missing" "$F/new_out/y.npy" run "$BUNDLE" --tokens 1 --output-dir "$F/new_out"
: > "$F/plain_file"
expect_error "--output-dir below a regular file" "plain_file/sub" -- run "$BUNDLE" --tokens 1 --output-dir "$F/plain_file/sub"

echo "== missing files"
expect_error "import: graph missing" "no_such.json" -- import "$F/no_such.json" -o "$F/out.vkqg"
expect_error "compile: .vkqg missing" "no_such.vkqg" -- compile "$F/no_such.vkqg" --target lavapipe --tokens 1 -o "$F/out.vkqb"
expect_error "compile: profile file missing" "no_such_profile.json" -- compile "$MODEL" --target "$F/no_such_profile.json" --tokens 1 -o "$F/out.vkqb"
expect_error "compile: output directory missing" "no_such_dir/out.vkqb" -- compile "$MODEL" --target lavapipe --tokens 1 -o "$F/no_such_dir/out.vkqb"
expect_error "run: bundle missing" "no_such.vkqb" -- run "$F/no_such.vkqb" --tokens 1
expect_error "inspect: bundle missing" "no_such.vkqb" -- inspect "$F/no_such.vkqb"
expect_error "run: --reference missing" "no_such_ref.json" -- run "$BUNDLE" --tokens 1 --reference "$F/no_such_ref.json"
expect_error "run: --input file missing" "no_such.npy" -- run "$BUNDLE" --tokens 1 --input "x=$F/no_such.npy"
expect_error "probe: output directory missing" "no_such_dir/p.json" -- probe -o "$F/no_such_dir/p.json"

finish
