# The runtime as an app ships it: a runtime-only build (-DVKQC_BUILD_COMPILER=OFF: Vulkan headers,
# volk and flatbuffers only), `cmake --install --strip` into a prefix, the shared library's size
# and exported symbols (vkqc_* only, no libstdc++), the C example app built against the installed
# package with find_package(vkqc) and with pkg-config, loading a bundle from memory and running it
# on lavapipe.
source "$(dirname "$0")/common.bash"
R="$WORK/rt" PREFIX="$WORK/prefix"
if cmake -S "$SRC" -B "$R" -DVKQC_BUILD_COMPILER=OFF -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
     > "$WORK/configure.log" 2>&1 && cmake --build "$R" -j2 > "$WORK/build.log" 2>&1 &&
   cmake --install "$R" --strip > "$WORK/install.log" 2>&1; then
  ok "runtime-only configure, build and install (no compiler toolchain)"
else
  fail "runtime-only build" "$(tail -20 "$WORK/configure.log" "$WORK/build.log" "$WORK/install.log")"
  finish
fi
grep -qiE "shaderc|spirv|nlohmann|gtest" "$R/CMakeCache.txt" && fail "the runtime-only build looked for compiler dependencies" \
  "$(grep -iE 'shaderc|spirv|nlohmann|gtest' "$R/CMakeCache.txt" | head -5)" || ok "the runtime-only build needs no compiler dependency"
LIB=$(ls "$PREFIX"/lib*/libvkqc.so.[0-9]*.[0-9]*.[0-9]* 2>/dev/null | head -1)
for f in include/vkqc/vkqc.h; do [ -f "$PREFIX/$f" ] || fail "installed $f"; done
if [ -n "$LIB" ] && ls "$PREFIX"/lib*/libvkqc_runtime.a "$PREFIX"/lib*/cmake/vkqc/vkqcConfig.cmake \
     "$PREFIX"/lib*/pkgconfig/vkqc.pc > /dev/null 2>&1; then
  ok "installed: header, libvkqc.so, libvkqc_runtime.a, vkqcConfig.cmake, vkqc.pc"
else
  fail "installed files" "$(find "$PREFIX" -type f | head -20)"
  finish
fi
size=$(stat -c %s "$LIB")
[ "$size" -le 307200 ] && ok "libvkqc.so is $size bytes stripped (<= 300 KB)" || fail "libvkqc.so is $size bytes (> 300 KB)"
bad=$(nm -D --defined-only "$LIB" | awk '{print $3}' | grep -v '^vkqc_' | grep -v '^$' || true)
[ -z "$bad" ] && ok "libvkqc.so exports only vkqc_* ($(nm -D --defined-only "$LIB" | grep -c ' vkqc_') symbols)" \
  || fail "libvkqc.so exports more than the C API" "$(echo "$bad" | head -10)"
readelf -d "$LIB" | grep -q 'libstdc++' && fail "libvkqc.so needs libstdc++" "$(readelf -d "$LIB" | grep NEEDED)" \
  || ok "libvkqc.so needs no libstdc++ ($(readelf -d "$LIB" | grep NEEDED | sed 's/.*\[\(.*\)\]/\1/' | tr '\n' ' '))"

# The C app against the installed package, both ways.
if cmake -S "$SRC/examples/c-app" -B "$WORK/app" -DCMAKE_PREFIX_PATH="$PREFIX" > "$WORK/app.log" 2>&1 &&
   cmake --build "$WORK/app" >> "$WORK/app.log" 2>&1; then
  ok "examples/c-app builds with find_package(vkqc)"
else
  fail "c-app with find_package" "$(tail -20 "$WORK/app.log")"
fi
if PKG_CONFIG_PATH=$(dirname "$(ls "$PREFIX"/lib*/pkgconfig/vkqc.pc)") \
   cc -std=c99 -Wall -Werror -o "$WORK/app-pc" "$SRC/examples/c-app/main.c" $(PKG_CONFIG_PATH=$(dirname "$(ls "$PREFIX"/lib*/pkgconfig/vkqc.pc)") pkg-config --cflags --libs vkqc) \
   > "$WORK/pc.log" 2>&1; then
  ok "examples/c-app builds with pkg-config (C99, -Wall -Werror)"
else
  fail "c-app with pkg-config" "$(cat "$WORK/pc.log")"
fi

# A bundle compiled by the full build, run by the app (lavapipe).
M="$WORK/tiny"
python3 "$SRC/examples/llama/make_gguf.py" "$M" > /dev/null 2>&1 || /usr/bin/python3 "$SRC/examples/llama/make_gguf.py" "$M" > /dev/null
expect_writes "compile the tiny decoder" "$WORK/tiny.vkqb" compile "$M/model.gguf" --target lavapipe --tokens 1,4 -o "$WORK/tiny.vkqb"
expect_writes "compile the MLP example" "$WORK/mlp.vkqb" compile "$SRC/examples/mlp/graph.json" --target lavapipe --tokens 1,8 -o "$WORK/mlp.vkqb"
for b in tiny mlp; do
  out=$(LD_LIBRARY_PATH=$(dirname "$LIB") timeout 300 "$WORK/app/vkqc-c-app" "$WORK/$b.vkqb" 2>&1); rc=$?
  if [ $rc -eq 0 ] && echo "$out" | grep -q "checksum" && echo "$out" | grep -q "program 1"; then
    ok "the C app loads the $b bundle from memory, lists its tensors and runs every program"
  else
    fail "C app on $b" "exit $rc" "$out"
  fi
done
# The decoder's greedy tokens through the installed library = vkqc generate's from prompt [1].
out=$(LD_LIBRARY_PATH=$(dirname "$LIB") timeout 300 "$WORK/app/vkqc-c-app" "$WORK/tiny.vkqb" 2>&1)
app=$(echo "$out" | sed -n 's/^greedy: //p')
vk generate "$WORK/tiny.vkqb" --prompt-ids 1 --max-new-tokens 8 --ignore-eos
cli=$(sed -n 's/^tokens: //p' "$OUT_FILE")
if [ -n "$app" ] && [ "$app" = "$cli" ]; then ok "the C app's vkqc_model_decode_greedy = vkqc generate ($app)"
else fail "C app greedy tokens" "app: $app" "generate: $cli" "$out"; fi
echo "$out" | head -12
finish
