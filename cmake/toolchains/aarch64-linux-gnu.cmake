# Cross-compiling for aarch64-linux-gnu with Debian's cross toolchain (g++-aarch64-linux-gnu), the
# programs run under qemu's user-mode emulator (qemu-aarch64, package qemu-user) with the
# target's sysroot. The aotc compiler itself runs on the host: an ARM tree takes it from a
# host build (AOTC_HOST_AOTC, by default build/release's: build the release preset
# first, as tools/test.sh does).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
