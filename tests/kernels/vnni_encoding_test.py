#!/usr/bin/python3
"""The instructions of a quantized model's kernel objects, for each x86 target aotc supports.

Halide 14 emits AVX512-VNNI dot products (vpdpbusd) only under its avx512_sapphirerapids
feature, which also means AVX-VNNI, AVX512-FP16 and AMX; it takes AMD Zen 4 for a Sapphire
Rapids, and Zen 4 has AVX512-VNNI but none of those three. LLVM 14 re-encodes 128/256-bit dot
products as VEX (AVX-VNNI: SIGILL on Zen 4, Halide issue #7834) and once emitted VEX vpdpwssd
for index arithmetic. So aotc compiles only its int8 convolutions with that feature
(gen::kernel_target), and this test compiles a quantized model (tests/library/models/
qconvnet.air) for each target, disassembles every kernel object (objdump) and fails on:
  * a VEX-encoded vpdpbusd/vpdpbusds/vpdpwssd/vpdpwssds (any not starting with the EVEX
    prefix 0x62),
  * any AVX512-FP16 instruction (mnemonics ending in "ph" or "sh", F16C's vcvtps2ph aside),
  * any AMX instruction (tile*, tdp*, ldtilecfg, sttilecfg);
and, for the targets with AVX512-VNNI (the host where /proc/cpuinfo says avx512_vnni, and an
explicit avx512_sapphirerapids target), on finding no EVEX vpdpbusd at all (the int8 kernel
must use it there). Run: vnni_encoding_test.py --aotc AOTC --model AIR --workdir DIR
"""
import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

TARGETS = [
    "host",
    "x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_sapphirerapids-avx512_skylake-f16c-fma-sse41",
    "x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_skylake-f16c-fma-sse41",
    "x86-64-linux-avx-avx2-f16c-fma-sse41",
    "x86-64-linux-sse41",
]
DOT_PRODUCTS = {"vpdpbusd", "vpdpbusds", "vpdpwssd", "vpdpwssds"}
F16C = {"vcvtps2ph", "vcvtph2ps"}
AMX = re.compile(r"^(tile\w*|tdp\w*|ldtilecfg|sttilecfg)$")
# objdump -d lines: "  addr:\t62 f2 75 48 50 c1 \tvpdpbusd %zmm1,%zmm1,%zmm0"
LINE = re.compile(r"^\s*[0-9a-f]+:\t((?:[0-9a-f]{2} )+)\s*\t(?:\{\w+\}\s*)?(\S+)")


def host_has_avx512_vnni():
    flags = Path("/proc/cpuinfo").read_text().split()
    return "avx512_vnni" in flags


def check_target(args, target):
    """Problems found in the library of `target`, and its count of EVEX vpdpbusd."""
    work = args.workdir / re.sub(r"[^\w]", "_", target)[:40]
    shutil.rmtree(work, ignore_errors=True)
    (work / "members").mkdir(parents=True)
    subprocess.run([args.aotc, args.model, "--emit=lib", "--target", target, "-o", work / "lib",
                    "--name", "qconvnet"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["ar", "x", work / "lib" / "libqconvnet.a"], cwd=work / "members", check=True)
    problems, evex_dot = [], 0
    for obj in sorted((work / "members").glob("*.o")):
        listing = subprocess.run(["objdump", "-d", obj], capture_output=True, text=True, check=True).stdout
        for line in listing.splitlines():
            m = LINE.match(line)
            if not m:
                continue
            first_byte, mnemonic = m.group(1).split()[0], m.group(2)
            where = f"{target}: {obj.name}: {line.strip()}"
            if mnemonic in DOT_PRODUCTS:
                if first_byte != "62":
                    problems.append(f"VEX-encoded dot product (AVX-VNNI): {where}")
                elif mnemonic == "vpdpbusd":
                    evex_dot += 1
            elif mnemonic.startswith("v") and mnemonic.endswith(("ph", "sh")) and mnemonic not in F16C:
                problems.append(f"AVX512-FP16 instruction: {where}")
            elif AMX.match(mnemonic):
                problems.append(f"AMX instruction: {where}")
    return problems, evex_dot


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--aotc", required=True, type=Path)
    p.add_argument("--model", required=True, type=Path)
    p.add_argument("--workdir", required=True, type=Path)
    args = p.parse_args()
    failed = False
    for target in TARGETS:
        problems, evex_dot = check_target(args, target)
        expects_vnni = "avx512_sapphirerapids" in target or (target == "host" and host_has_avx512_vnni())
        print(f"{target}: {evex_dot} EVEX vpdpbusd, {len(problems)} problems")
        for problem in problems[:20]:
            print("  " + problem)
        if problems or (expects_vnni and evex_dot == 0):
            failed = True
            if expects_vnni and evex_dot == 0:
                print(f"  {target} has AVX512-VNNI but no kernel uses vpdpbusd")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
