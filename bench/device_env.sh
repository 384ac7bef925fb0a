# Sourced by the bench/device_*.sh scripts on the device machine: unpacks the carried Vulkan loader
# (.gl/lib*.deb) and validation layer, and points the loader at NVIDIA's driver.
for f in .gl/lib*.deb; do dpkg -x "$f" /; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers*.deb /tmp/vl
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d
export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json

# For the scripts that carry several binaries in .dev/bin.tar.xz: unpacks them into .dev/x, prints
# the GPU, a timer t() for progress lines; with PROBE=1 also probes the device into $P and measures
# its roofline into the sidecar $S (for `bench --roofline "$S"`).
device_setup() {
  mkdir -p .dev/x && tar xJf .dev/bin.tar.xz -C .dev/x || exit 1
  P=/tmp/h100.json S=/tmp/h100.vkqc.json
  T0=$(date +%s)
  t() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  if [ -n "${PROBE:-}" ]; then
    "$1" probe -o "$P" > /dev/null || exit 1
    timeout 120 "$1" roofline --min-ms 50 -o "$S" 2>&1 | tail -1
  fi
}

# After device_setup with PROBE=1: the whole GPU suite (.dev/x/vkqc_gpu_tests) with the probed
# profile and validation on, its log in $OUT/tests.log and its summary lines printed.
device_suite() {
  t "the whole GPU suite (validation on)"
  VKQC_TEST_PROFILE=$P timeout 420 .dev/x/vkqc_gpu_tests > $OUT/tests.log 2>&1
  echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests ran|Failure' $OUT/tests.log | head -12
}

# hopper_tree: writes /tmp/tree/hopper-tree.json (+ sidecar), the built-in nvidia-hopper with
# tuned_subgroup_size 0, so every GEMV takes the shared-memory tree (the phone built-ins' path) on
# an H100; sets TREE to its path.
hopper_tree() {
  mkdir -p /tmp/tree
  cp profiles/nvidia-hopper.json /tmp/tree/hopper-tree.json
  sed 's/"tuned_subgroup_size": 32/"tuned_subgroup_size": 0/' profiles/nvidia-hopper.vkqc.json > /tmp/tree/hopper-tree.vkqc.json
  TREE=/tmp/tree/hopper-tree.json
}

# whole BIN BUNDLE LABEL [bench flags...]: one `vkqc bench` of BUNDLE by .dev/x/BIN without per-layer
# timestamps, printed as "LABEL: <the whole-program line>" (its output in /tmp/whole.txt).
whole() {
  local bin=$1 bundle=$2 label=$3
  shift 3
  timeout 60 .dev/x/$bin bench "$bundle" "$@" > /tmp/whole.txt 2>&1
  echo "$label: $(grep 'whole program' /tmp/whole.txt | head -1 | sed 's/whole program without per-layer timestamps//')"
}
