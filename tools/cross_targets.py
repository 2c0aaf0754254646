"""How the test scripts link and run a library built for an ARM target on this x86-64
host: Debian's cross C compiler, and qemu's user-mode emulator with the target's
sysroot (packages g++-aarch64-linux-gnu, g++-arm-linux-gnueabihf, qemu-user; tools/setup.sh
installs them). Host targets need neither."""

CROSS = {
    "arm-64": ("aarch64-linux-gnu-gcc", ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"], "ARM aarch64"),
    "arm-32": ("arm-linux-gnueabihf-gcc", ["qemu-arm", "-L", "/usr/arm-linux-gnueabihf"], "32-bit LSB pie executable, ARM"),
}


def toolchain(target):
    """(C compiler, command prefix that runs its programs, what `file` says of them; None
    for the host) for a Halide target string."""
    for arch, tools in CROSS.items():
        if target.startswith(arch + "-"):
            return tools
    return "cc", [], None
