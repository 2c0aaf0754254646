# Cross-compiling for arm-linux-gnueabihf with Debian's cross toolchain (g++-arm-linux-gnueabihf), the
# programs run under qemu's user-mode emulator (qemu-arm, package qemu-user) with the
# target's sysroot. The aotc compiler itself runs on the host: an ARM tree takes it from a
# host build (AOTC_HOST_AOTC, by default build/release's: build the release preset
# first, as tools/test.sh does).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -L /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
