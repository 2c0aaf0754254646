#!/usr/bin/python3
"""ONNX's own backend test data (Debian's libonnx-testdata) through aotc.

Every case (a model.onnx and test_data_set_0/{input,output}_K.pb) is classified:

- passed: compiled into a library (graph inputs after the first bound as
  constants with --constant, the first fed at run time), run through the
  library's C entry points (tools/run_library.c) on the case's input, and every
  output within ONNX's tolerance of the case's (|got - want| <= 1e-7 + 1e-3 |want|,
  as onnx.backend.test's assert_allclose);
- evaluated: the case has integer graph inputs or outputs (QuantizeLinear, DequantizeLinear),
  which a library's float32 entry points do not take yet (exit 3), so its reference
  evaluator runs it instead
  (`--emit=run`), integer outputs equal to the case's, float ones within the tolerance;
- refused: aotc exits 3 (unsupported) with a reason, grouped by its first words;
- failed: anything else (a wrong number, another exit status, a crash, a hang).

The cases that need no --constant are first checked together (aotc --emit=check MODEL...,
one process per job: one aotc start instead of one per case, most of a refused case's
time); only those it finds compilable are compiled one by one, and a case a crashed check
did not report is tried alone.

Prints the table per directory and the refusal reasons, writes it as markdown
with --table, and exits 1 if any case failed.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

DIRECTORIES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
RTOL, ATOL = 1e-3, 1e-7


def read_tensor(path):
    t = onnx.TensorProto()
    t.ParseFromString(Path(path).read_bytes())
    return numpy_helper.to_array(t)


def runtime_inputs(model):
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in initializers]


def reason_of(stderr):
    """The refusal's reason without the file and node that name the case."""
    line = next((l for l in stderr.splitlines() if l.startswith("aotc: error:")), stderr.strip()[:200])
    line = line.removeprefix("aotc: error: ")
    where = re.compile(r"^(node|graph input|graph output) '[^']*'( \(\w+\))?$")
    parts = [p for p in line.split(": ") if not p.endswith(".onnx") and not where.match(p)]
    reason = ": ".join(parts)
    reason = re.sub(r"'[^']*'", "'…'", reason)
    reason = re.sub(r"\(([^()]*)\)$", "", reason).strip()
    if reason.startswith("unsupported operators"):
        ops = re.findall(r"(\S+) x\d+", reason)
        return "unsupported operator: " + ", ".join(ops)
    return reason[:120]


def check_together(cases, args):
    """{case: (exit code, message)} of `aotc --emit=check` over `cases`, in one process; a case
    a crashed or hung check left out is not in it."""
    paths = {str(c / "model.onnx"): c for c in cases}
    try:
        checked = subprocess.run([str(args.aotc), "--emit=check", *paths], capture_output=True, text=True,
                                 timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {}
    verdicts = {}
    for line in checked.stdout.splitlines():
        path, _, verdict = line.partition(": ")
        if path not in paths:
            continue
        status, _, message = verdict.partition(": ")
        if status == "ok":
            verdicts[paths[path]] = (0, "")
        elif status.startswith("exit "):
            verdicts[paths[path]] = (int(status.removeprefix("exit ")), message)
    return verdicts


NO_INTEGER_KERNELS = "a library's integer inputs and outputs are quantized per tensor"


def compare_outputs(model, data, got):
    """None if `got` (the outputs one after the other, as float32) matches the case's
    outputs: integer ones exactly, float ones within the tolerance; else why not."""
    offset = 0
    for k in range(len(model.graph.output)):
        want = read_tensor(data / f"output_{k}.pb")
        exact = np.issubdtype(want.dtype, np.integer)
        want = want.astype(np.float32).ravel()
        part = got[offset:offset + want.size]
        offset += want.size
        if part.size != want.size:
            return f"output {k}: {part.size} values, expected {want.size}"
        close = part == want if exact else np.isclose(part, want, rtol=RTOL, atol=ATOL, equal_nan=True)
        if not close.all():
            i = int(np.argmin(close))
            return f"output {k}[{i}] = {part[i]}, expected {want[i]} ({int((~close).sum())} of {want.size} off)"
    if offset != got.size:
        return f"aotc wrote {got.size} values, the case has {offset}"
    return None


def evaluate_case(case, args, out, constants):
    """A case aotc has no kernels for, run by its reference evaluator (--emit=run)."""
    data = case / "test_data_set_0"
    x = read_tensor(data / "input_0.pb").astype(np.float32)  # an integer input as its values
    x.tofile(out / "input.bin")
    command = [args.aotc, case / "model.onnx", "--emit=run", "--input", out / "input.bin", "-o", out / "output.bin",
               *constants]
    ran = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=args.timeout)
    if ran.returncode != 0:
        return "failed", f"aotc --emit=run exit {ran.returncode}: {ran.stderr.strip()[-300:]}"
    model = onnx.load(str(case / "model.onnx"), load_external_data=False)
    why = compare_outputs(model, data, np.fromfile(out / "output.bin", dtype=np.float32))
    return ("failed", "evaluator: " + why) if why else ("evaluated", "")


def run_case(case, args, checked):
    name = case.name
    out = args.workdir / case.parent.name / name
    out.mkdir(parents=True, exist_ok=True)
    data = case / "test_data_set_0"
    if case in checked and checked[case][0] != 0:
        code, message = checked[case]
        if code == 3 and NO_INTEGER_KERNELS in message:
            return evaluate_case(case, args, out, [])
        if code == 3:
            return "refused", reason_of("aotc: " + message)
        return "failed", f"aotc --emit=check: exit {code}: {message[-300:]}"
    model = onnx.load(str(case / "model.onnx"), load_external_data=False)
    inputs = runtime_inputs(model)
    constants = []
    for k, input_name in enumerate(inputs[1:], start=1):
        constants += ["--constant", f"{input_name}={data / f'input_{k}.pb'}"]
    command = [args.aotc, case / "model.onnx", "--emit=lib", "-o", out, "--name", "m", "--jobs", "1", *constants]
    try:
        compiled = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return "failed", "aotc timed out"
    if compiled.returncode == 3 and NO_INTEGER_KERNELS in compiled.stderr:
        return evaluate_case(case, args, out, constants)
    if compiled.returncode == 3:
        return "refused", reason_of(compiled.stderr)
    if compiled.returncode != 0:
        return "failed", f"aotc exit {compiled.returncode}: {compiled.stderr.strip()[-300:]}"
    runner = out / "run"
    built = subprocess.run(["cc", "-std=c11", "-O1", "-DAOTC_MODEL=m", "-I", str(out), str(args.harness),
                            str(out / "libm.a"), "-lm", "-lpthread", "-o", str(runner)], capture_output=True, text=True)
    if built.returncode != 0:
        return "failed", "run_library does not build: " + built.stderr[-300:]
    x = read_tensor(data / "input_0.pb").astype(np.float32)
    x.tofile(out / "input.bin")
    ran = subprocess.run([str(runner), str(out / "output.bin"), str(out / "input.bin")], capture_output=True,
                         text=True, timeout=args.timeout)
    if ran.returncode != 0:
        return "failed", f"the library's run exited {ran.returncode}: {ran.stderr.strip()[-300:]}"
    why = compare_outputs(model, data, np.fromfile(out / "output.bin", dtype=np.float32))
    return ("failed", why) if why else ("passed", "")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--aotc", required=True, type=Path)
    parser.add_argument("--harness", required=True, type=Path, help="tools/run_library.c")
    parser.add_argument("--data", type=Path, default=Path("/usr/share/libonnx-testdata/data"))
    parser.add_argument("--workdir", required=True, type=Path)
    parser.add_argument("--table", type=Path, help="write the table as markdown here")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--filter", default="", help="only cases whose name contains this")
    args = parser.parse_args()
    if not args.data.is_dir():
        print(f"SKIPPED: no ONNX test data at {args.data} (Debian's libonnx-testdata)")
        return 77
    (args.harness.parent / "aotc_model.h").exists() or sys.exit(f"{args.harness}: no aotc_model.h beside it")
    cases = [c for d in DIRECTORIES for c in sorted((args.data / d).iterdir())
             if (c / "model.onnx").exists() and args.filter in c.name]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        # The cases of one runtime input take no --constant: checked together first.
        one_input = [c for c in cases
                     if len(runtime_inputs(onnx.load(str(c / "model.onnx"), load_external_data=False))) == 1]
        checked = {}
        for part in pool.map(lambda k: check_together(one_input[k::args.jobs], args), range(args.jobs)):
            checked.update(part)
        futures = {pool.submit(run_case, c, args, checked): c for c in cases}
        for future in concurrent.futures.as_completed(futures):
            case = futures[future]
            try:
                results[case] = future.result()
            except Exception as e:  # a harness error is a failure of that case, reported
                results[case] = ("failed", f"harness: {type(e).__name__}: {e}")

    lines = ["| directory | cases | passed | evaluated | refused | failed |", "| --- | --- | --- | --- | --- | --- |"]
    totals = collections.Counter()
    for d in DIRECTORIES:
        counts = collections.Counter(status for c, (status, _) in results.items() if c.parent.name == d)
        n = sum(counts.values())
        totals.update(counts)
        lines.append(f"| {d} | {n} | {counts['passed']} | {counts['evaluated']} | {counts['refused']} | {counts['failed']} |")
    lines.append(f"| **total** | {sum(totals.values())} | {totals['passed']} | {totals['evaluated']} | {totals['refused']} "
                 f"| {totals['failed']} |")
    reasons = collections.Counter(why for status, why in results.values() if status == "refused")
    lines += ["", "| refused because | cases |", "| --- | --- |"]
    lines += [f"| {why.replace('|', '/')} | {n} |" for why, n in reasons.most_common()]
    table = "\n".join(lines) + "\n"
    print(table)
    for case, (status, why) in sorted(results.items()):
        if status == "failed":
            print(f"FAILED {case.parent.name}/{case.name}: {why}")
    if args.table:
        args.table.write_text(table)
    return 1 if totals["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
