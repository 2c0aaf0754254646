#!/usr/bin/python3
"""--weights=external end to end on a real model: aotc compiles the model (an .fb, .air or
.tflite file, or a torchvision model exported first with tools/aotc-export-torch) twice,
with embedded and with external weights; both libraries are linked into
tools/run_library.c and run on the same random input (for an ARM --target, under qemu:
tools/cross_targets.py). Their outputs must be equal bit for bit. The weights file must be
64-byte aligned in its payload, exactly aotc_<name>_weights_bytes() long, and carry the
payload's CRC-32 as zlib computes it.

  weights_round_trip.py --aotc AOTC --harness run_library.c --workdir DIR
                        (--model FILE | --torchvision NAME --exporter EXPORTER) [--target T]
"""

import argparse
import struct
import sys
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "tools"))
import cross_targets  # noqa: E402
from model_runs import random_inputs, run  # noqa: E402

SKIPPED = 75


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--aotc", "--harness", "--workdir"):
        p.add_argument(flag, type=Path, required=True)
    p.add_argument("--model", type=Path)
    p.add_argument("--torchvision")
    p.add_argument("--exporter", type=Path)
    p.add_argument("--target", default="host")
    args = p.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.torchvision:
        args.model = args.workdir / f"{args.torchvision}.fb"
        run([args.exporter, "--model", args.torchvision, "-o", args.model, "--input-shape", "1,3,224,224"])
    if not args.model.exists():
        print(f"SKIPPED: {args.model} is missing (fetched by tools/fetch-mediapipe-models)")
        return SKIPPED
    name = args.model.stem
    cc, emulator, _ = cross_targets.toolchain(args.target)

    inputs = random_inputs(args.aotc, args.model, args.workdir)

    outputs = {}
    for weights in ("embedded", "external"):
        out = args.workdir / weights
        run([args.aotc, args.model, "--emit=lib", "--target", args.target, "--weights", weights, "-o", out,
             "--name", name])
        exe = args.workdir / f"run_{weights}"
        defines = ["-DAOTC_EXTERNAL_WEIGHTS"] if weights == "external" else []
        run([cc, "-std=c11", "-O2", f"-DAOTC_MODEL={name}", *defines, "-I", out, args.harness,
             out / f"lib{name}.a", "-lpthread", "-ldl", "-lm", "-o", exe])
        weights_args = [out / f"{name}.weights"] if weights == "external" else []
        run(emulator + [exe, *weights_args, args.workdir / f"{weights}.bin", *inputs])
        outputs[weights] = np.fromfile(args.workdir / f"{weights}.bin", dtype="<f4")

    data = (args.workdir / "external" / f"{name}.weights").read_bytes()
    magic, version, header_bytes, payload_bytes, _, crc = struct.unpack_from("<8sIIQQI", data)
    print(f"{name}.weights: {len(data)} bytes, header {header_bytes}, payload {payload_bytes}, crc32 {crc:#010x}")
    problems = []
    if magic != b"AOTCWGHT" or version != 1 or header_bytes % 64 != 0:
        problems.append(f"header {magic} version {version} header_bytes {header_bytes}")
    if len(data) != header_bytes + payload_bytes:
        problems.append(f"{len(data)} bytes, not header + payload")
    if zlib.crc32(data[header_bytes:]) != crc:
        problems.append(f"zlib's CRC-32 of the payload is {zlib.crc32(data[header_bytes:]):#010x}")
    embedded, external = outputs["embedded"], outputs["external"]
    if embedded.size != external.size or not np.array_equal(embedded.view("<u4"), external.view("<u4")):
        problems.append("the outputs differ: " + (f"{embedded.size} vs {external.size} values" if embedded.size != external.size
                        else f"{int(np.sum(embedded.view('<u4') != external.view('<u4')))} of {embedded.size} values"))
    if not np.all(np.isfinite(external)):
        problems.append("outputs that are not finite")
    if problems:
        raise SystemExit("FAILED: " + "; ".join(problems))
    print(f"{args.target}: external weights give the embedded library's {embedded.size} outputs bit for bit")
    print("PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
