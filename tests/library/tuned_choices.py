#!/usr/bin/python3
"""Libraries whose implementations a tuning cache chose, against the reference evaluator.

aotc compiles MODEL five or six times: by default (the cost model, or the rules where it predicts
no candidate; channel-blocked layouts included); with --tune (times measured on this
machine); with --layouts=nchw; with --layouts=auto and a tuning cache written here that
makes, for every node with more than one candidate, a candidate the NCHW library does not
run the fastest, a channel-blocked (NCHWc) one wherever it fits; and with --tune
--layouts=auto. The fourth library must run those other candidates (its report says so,
"by": "tuning cache"), each kind of blocked one the model offers somewhere (with a second
cache for the kinds that compete with one the first made run), with the layout conversions
between them. Each library is linked
into tools/run_library.c and run on one fresh random input; each output must be within
1e-4 of max(1, its largest magnitude) of `aotc MODEL --emit=run --passes=` (the reference
evaluator on the unoptimised graph).

  tuned_choices.py --aotc AOTC --harness run_library.c --workdir DIR --model MODEL.air
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from model_runs import random_inputs, run

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "tools"))
from other_choices import BLOCKED, write_other_choices_cache  # noqa: E402

TOLERANCE = 1e-4


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--aotc", "--harness", "--workdir", "--model"):
        p.add_argument(flag, type=Path, required=True)
    args = p.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    name = args.model.stem

    inputs = random_inputs(args.aotc, args.model, args.workdir)
    reference_file = args.workdir / "reference.bin"
    run([args.aotc, args.model, "--emit=run", "--passes=", "-o", reference_file, *sum([["--input", i] for i in inputs], [])])
    reference = np.fromfile(reference_file, dtype="<f4")

    def build(label, *options):
        out = args.workdir / label
        run([args.aotc, args.model, "--emit=lib", "-o", out, *options])
        exe = args.workdir / f"run_{label}"
        run(["cc", "-std=c11", "-O2", f"-DAOTC_MODEL={name}", "-I", out, args.harness, out / f"lib{name}.a",
             "-lpthread", "-ldl", "-lm", "-o", exe])
        result = args.workdir / f"{label}.bin"
        run([exe, result, *inputs])
        got = np.fromfile(result, dtype="<f4")
        report = json.loads((out / f"{name}.report.json").read_text())
        start = 0
        for output in report["outputs"]:
            end = start + int(np.prod(output["shape"]))
            error = float(np.max(np.abs(got[start:end] - reference[start:end])))
            scale = max(float(np.max(np.abs(reference[start:end]))), 1.0)
            print(f"{label} {output['name']}: max error {error:.3g} of scale {scale:.3g}")
            if not error <= TOLERANCE * scale:
                raise SystemExit(f"FAILED: the {label} library's {output['name']} differs from the reference "
                                 f"evaluator by {error}")
            start = end
        if start != got.size:
            raise SystemExit(f"FAILED: the {label} library wrote {got.size} values, its outputs have {start}")
        return report

    build("default")
    build("tuned", "--tune")
    nchw = build("nchw", "--layouts=nchw")
    choices = [c for c in nchw["choices"] if len(c["candidates"]) > 1]
    if not choices:
        raise SystemExit(f"FAILED: {args.model} has no node with more than one candidate")
    cache = args.workdir / "other_choices.json"
    write_other_choices_cache(nchw, cache)
    other = build("other_choices", "--tuning-cache", cache, "--layouts=auto")
    for before, after in zip(nchw["choices"], other["choices"]):
        if len(after["candidates"]) > 1 and (after["chosen"] == before["chosen"] or after["by"] != "tuning cache"):
            raise SystemExit(f"FAILED: {after['node']} still runs {after['chosen']} ({after['by']})")
        print(f"{after['node']}: {before['chosen']} -> {after['chosen']} {' '.join(after['conversions'])}")
    blocked = {c["chosen"] for c in other["choices"] if c["chosen"] in BLOCKED}
    offered = {o["name"] for c in other["choices"] for o in c["candidates"] if o["name"] in BLOCKED}
    if blocked != offered:
        # Kinds that compete for one input (with AVX-512's 16-channel blocks the first
        # conv runs blocked, so the 1x1 after it reads NCHWc, never NCHW): a second cache
        # favours those the first left out.
        cache = args.workdir / "left_out_choices.json"
        write_other_choices_cache(nchw, cache, favoured=offered - blocked)
        left_out = build("left_out_choices", "--tuning-cache", cache, "--layouts=auto")
        blocked |= {c["chosen"] for c in left_out["choices"] if c["chosen"] in BLOCKED}
    if blocked != offered or len(offered) < 4:
        raise SystemExit(f"FAILED: the channel-blocked candidates that ran are {sorted(blocked)}; "
                         f"offered: {sorted(offered)}")
    build("blocked_tuned", "--tune", "--layouts=auto")
    print("PASSED")


if __name__ == "__main__":
    main()
