# Sourced by the bench/device_*.sh scripts on the device machine: unpacks the carried Vulkan loader
# (.gl/lib*.deb) and validation layer, and points the loader at NVIDIA's driver.
for f in .gl/lib*.deb; do dpkg -x "$f" /; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers*.deb /tmp/vl
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d
export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
