# Cross-compiles for 64-bit Arm Linux with Debian's cross toolchain (crossbuild-essential-arm64:
# aarch64-linux-gnu-gcc/g++ and the arm64 C library under /usr/aarch64-linux-gnu).
#
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DVKQC_BUILD_COMPILER=OFF
#
# Only the runtime is meant to be cross-built (VKQC_BUILD_COMPILER=OFF): it needs the Vulkan,
# volk and flatbuffers headers, which are architecture-independent and found in /usr/include by
# Debian's cross compiler, and flatc, which runs on the build machine (found on the host's PATH).
# Libraries of the target come from Debian's multiarch directories (dpkg --add-architecture arm64:
# /usr/lib/aarch64-linux-gnu). scripts/arm64.sh cross-builds the runtime and the C example and runs
# them under qemu-user with the arm64 Vulkan loader and lavapipe.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(VKQC_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${VKQC_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${VKQC_CROSS_TRIPLE}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${VKQC_CROSS_TRIPLE})

# Programs (flatc) from the build machine; libraries, headers and packages from the target's
# directories first (multiarch /usr/lib/aarch64-linux-gnu, the cross libc in /usr/aarch64-linux-gnu),
# then the usual prefixes (an installed vkqc package given by CMAKE_PREFIX_PATH).
set(CMAKE_FIND_ROOT_PATH /usr/${VKQC_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# try_run and ctest run target binaries through qemu-user (Debian: qemu-user), without binfmt.
find_program(VKQC_QEMU_AARCH64 qemu-aarch64)
if(VKQC_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${VKQC_QEMU_AARCH64} -L /usr/${VKQC_CROSS_TRIPLE})
endif()
