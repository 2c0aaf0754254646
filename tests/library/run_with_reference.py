#!/usr/bin/python3
"""Runs a library test program on fresh random inputs and the reference evaluator's outputs.

For each --model MODEL REPORT (REPORT: the <name>.report.json beside the compiled library,
which lists the input shapes) this writes one standard-normal float32 file per graph input,
computes the expected outputs with `aotc MODEL --emit=run --passes=` (the naive reference
evaluator on the unoptimised graph, so passes and kernels are both under test), then runs

    PROGRAM [ARGS...] MODEL1_INPUT0.bin [MODEL1_INPUT1.bin ...] MODEL1_REFERENCE.bin MODEL2_...

and exits with its status. The seed is printed; --seed repeats a run.

usage: run_with_reference.py --aotc AOTC --workdir DIR [--seed N] --model MODEL REPORT [...] -- PROGRAM [ARGS...]
"""
import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np


def main():
    if "--" not in sys.argv:
        sys.exit("usage: run_with_reference.py ... -- PROGRAM [ARGS...]")
    split = sys.argv.index("--")
    p = argparse.ArgumentParser()
    p.add_argument("--aotc", required=True)
    p.add_argument("--workdir", required=True, type=Path)
    p.add_argument("--seed", type=int, default=random.randrange(2**31))
    p.add_argument("--model", nargs=2, action="append", required=True, metavar=("MODEL", "REPORT"))
    args = p.parse_args(sys.argv[1:split])
    command = sys.argv[split + 1:]
    if not command:
        sys.exit("no PROGRAM after --")

    print(f"seed {args.seed}", flush=True)
    rng = np.random.default_rng(args.seed)
    args.workdir.mkdir(parents=True, exist_ok=True)
    for m, (model, report) in enumerate(args.model):
        inputs = json.loads(Path(report).read_text())["inputs"]
        input_files = []
        for i, tensor in enumerate(inputs):
            path = args.workdir / f"model{m}_input{i}.bin"
            rng.standard_normal(tensor["shape"]).astype("<f4").tofile(path)
            input_files.append(str(path))
        reference = args.workdir / f"model{m}_reference.bin"
        evaluate = [args.aotc, model, "--emit=run", "--passes=", "-o", str(reference)]
        for f in input_files:
            evaluate += ["--input", f]
        subprocess.run(evaluate, check=True)
        command += input_files + [str(reference)]

    print(" ".join(command), flush=True)
    sys.exit(subprocess.run(command, timeout=60).returncode)


if __name__ == "__main__":
    main()
