#!/usr/bin/python3
"""The install tree and the CMake package, as a user outside aotc's build meets them.

  --case install   `cmake --install BUILD --prefix PREFIX` into an emptied PREFIX; the
                   expected files are there, the SDK header is the source's, and
                   bin/aotc-export-torch links into share/aotc/tools.
  --case consumer  tests/library/consumer (copied) configured against PREFIX only
                   (find_package(aotc) + aotc_add_model), built, and its app run on a random
                   input against the installed aotc's reference evaluator; a second build
                   does nothing, and touching the model recompiles it and relinks the app.
  --case exporter  the installed exporter finds the installed schema: it exports tiny_net.py
                   and the installed aotc evaluates the .fb like PyTorch does.
Each case exits non-zero on the first failed check.
"""
import argparse
import filecmp
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SOURCE_ROOT = HERE.parent.parent


def run(command, **kwargs):
    print("+", " ".join(str(c) for c in command), flush=True)
    return subprocess.run([str(c) for c in command], check=True, timeout=120, **kwargs)


def check(condition, message):
    if not condition:
        sys.exit(f"FAILED: {message}")
    print(f"ok: {message}", flush=True)


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def close_to(got, ref):
    """The library tests' one tolerance: max|diff| <= 1e-4 * max(1, max|ref|)."""
    diff = float(np.max(np.abs(got.astype(np.float64) - ref))) if got.shape == ref.shape else float("inf")
    tolerance = 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    print(f"max|diff| {diff:.3g}, tolerance {tolerance:.3g}")
    return diff <= tolerance


def case_install(args):
    prefix = args.prefix
    shutil.rmtree(prefix, ignore_errors=True)
    run([args.cmake, "--install", args.build, "--prefix", prefix])
    for relative in ["bin/aotc", "bin/aotc-export-torch", "include/aotc/aotc.h",
                     "lib/cmake/aotc/aotcConfig.cmake", "lib/cmake/aotc/aotcConfigVersion.cmake",
                     "lib/cmake/aotc/aotcTargets.cmake", "lib/cmake/aotc/AotcModel.cmake",
                     "share/aotc/schemas/aotc_model.fbs", "share/aotc/tools/aotc-export-torch"]:
        check((prefix / relative).is_file(), f"installed {relative}")
    check(os.access(prefix / "bin/aotc", os.X_OK), "bin/aotc is executable")
    check(filecmp.cmp(prefix / "include/aotc/aotc.h", SOURCE_ROOT / "sdk/include/aotc/aotc.h", shallow=False),
          "include/aotc/aotc.h is the SDK header")
    exporter = prefix / "bin/aotc-export-torch"
    check(exporter.is_symlink() and
          exporter.resolve() == (prefix / "share/aotc/tools/aotc-export-torch").resolve(),
          "bin/aotc-export-torch links to share/aotc/tools/aotc-export-torch")


def case_consumer(args):
    aotc = args.prefix / "bin/aotc"
    work = fresh_dir(args.workdir)
    # The consumer's main.cpp includes ../test_support.h: copy both.
    source = work / "consumer"
    shutil.copytree(HERE / "consumer", source)
    shutil.copy(HERE / "test_support.h", work / "test_support.h")

    seed = args.seed if args.seed is not None else random.randrange(2**31)
    print(f"seed {seed}")
    input_file, reference = work / "input.bin", work / "reference.bin"
    np.random.default_rng(seed).standard_normal((1, 3, 12, 12)).astype("<f4").tofile(input_file)
    run([aotc, source / "tiny.air", "--emit=run", "--passes=", "--input", input_file, "-o", reference])

    build = work / "build"
    configure = [args.cmake, "-S", source, "-B", build, "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={args.prefix}"]
    if args.make_program:
        configure.append(f"-DCMAKE_MAKE_PROGRAM={args.make_program}")
    run(configure)
    run([args.cmake, "--build", build])
    check(filecmp.cmp(build / "aotc/tiny/aotc/aotc.h", args.prefix / "include/aotc/aotc.h", shallow=False),
          "the installed aotc copied the installed SDK header beside tiny.h")
    run([build / "app", input_file, reference])
    check(True, "the consumer app matches the reference")

    # Up to date: nothing is rebuilt. A touched model: aotc reruns, the app relinks.
    noop = run([args.cmake, "--build", build, "--", "-d", "explain"], capture_output=True, text=True)
    print(noop.stdout + noop.stderr)
    check("ninja: no work to do" in noop.stdout, "a second build does nothing")
    os.utime(source / "tiny.air")
    rebuilt = run([args.cmake, "--build", build], capture_output=True, text=True)
    print(rebuilt.stdout)
    check("aotc: compiling" in rebuilt.stdout and "Linking CXX executable app" in rebuilt.stdout,
          "touching tiny.air recompiles the model and relinks the app")
    run([build / "app", input_file, reference])


def case_exporter(args):
    work = fresh_dir(args.workdir)
    environment = {k: v for k, v in os.environ.items() if k != "AOTC_SCHEMA_DIR"}
    model, reference = work / "net.fb", work / "reference"
    run([args.prefix / "bin/aotc-export-torch", "--module", f"{HERE / 'tiny_net.py'}:TinyNet", "-o", model,
         "--input-shape", "1,3,10,10", "--seed", "5", "--reference", reference], env=environment)
    output = work / "output.bin"
    run([args.prefix / "bin/aotc", model, "--emit=run", "--input", reference / "input.bin", "-o", output])
    check(close_to(np.fromfile(output, "<f4"), np.fromfile(reference / "output.bin", "<f4")),
          "the installed aotc evaluates the installed exporter's model like PyTorch")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--case", required=True, choices=["install", "consumer", "exporter"])
    p.add_argument("--cmake", required=True)
    p.add_argument("--make-program")
    p.add_argument("--build", type=Path, help="aotc's build directory (install)")
    p.add_argument("--prefix", required=True, type=Path)
    p.add_argument("--workdir", type=Path)
    p.add_argument("--seed", type=int)
    args = p.parse_args()
    {"install": case_install, "consumer": case_consumer, "exporter": case_exporter}[args.case](args)


if __name__ == "__main__":
    main()
