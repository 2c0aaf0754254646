"""Builds what the benchmark runs, in a work folder, redoing a step only when its inputs
changed (like make): the exported models, the aotc libraries, the C programs."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from servers import OPENBLAS_OPENMP

HERE = Path(__file__).resolve().parent


def newer(target, *sources):
    """True if target is missing or older than any source."""
    if not target.exists():
        return True
    return any(s.stat().st_mtime > target.stat().st_mtime for s in sources)


def run(argv, log=None, **kwargs):
    """Runs a build step; on failure raises with the tail of its output."""
    result = subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kwargs)
    if log is not None:
        Path(log).write_text(result.stdout + result.stderr)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"{' '.join(map(str, argv))} failed ({result.returncode}):\n{tail}")
    return result


def prepare_model(model, folder, seed, opset):
    """weights.pt, input.bin, MODEL.fb, MODEL.onnx and MODEL.int8.onnx/.json (prepare.py),
    unless already made with the same seed and opset by the same scripts."""
    stamp = folder / "prepared.json"
    wanted = {"seed": seed, "opset": opset}
    scripts = [HERE / "prepare.py", HERE / "models.py", HERE.parent.parent / "tools" / "aotc-export-torch"]
    if stamp.exists() and json.loads(stamp.read_text()) == wanted and not newer(stamp, *scripts):
        return
    print(f"  exporting {model} (torchvision, seed {seed}) to .fb, ONNX (opset {opset}) and int8 ONNX "
          "(PyTorch FX, opset 13)", flush=True)
    folder.mkdir(parents=True, exist_ok=True)
    run([sys.executable, HERE / "prepare.py", model, folder, "--seed", seed, "--opset", opset],
        log=folder / "prepare.log", env={**os.environ, "LD_LIBRARY_PATH": OPENBLAS_OPENMP})
    stamp.write_text(json.dumps(wanted))


def wait_for_aotc(aotc, timeout_s=900):
    """aotc may be being rebuilt in this checkout: wait until it exists and has not changed
    for a few seconds (a linker writing it would leave a half-written file)."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if aotc.exists() and time.time() - aotc.stat().st_mtime > 5:
            return
        time.sleep(5)
    raise RuntimeError(f"{aotc} is missing (build it: cmake --build --preset release --target aotc)")


def compile_library(aotc, model_file, folder, extra=(), name=None):
    """aotc MODEL --emit=lib into FOLDER/lib, then FOLDER/aotc_server linked against it.
    The library is named after the model file's stem, as aotc names it, unless `name` is given
    (--name: a stem like resnet18.int8 is no C identifier)."""
    if name:
        extra = ("--name", name, *extra)
    name = name or model_file.stem
    lib_dir = folder / "lib"
    library = lib_dir / f"lib{name}.a"
    wait_for_aotc(aotc)
    # Which binary built the library: another one (a baseline's) recompiles it too.
    stamp, built_by = (lib_dir / "aotc.stamp",
                       " ".join([str(Path(aotc).resolve()), str(Path(aotc).stat().st_mtime_ns), *map(str, extra)]))
    if newer(library, model_file, aotc) or not stamp.exists() or stamp.read_text() != built_by:
        print(f"  compiling {model_file.name} with {aotc}", flush=True)
        run([aotc, model_file, "--emit=lib", "-o", lib_dir, *extra], log=folder / "aotc.log")
        stamp.write_text(built_by)
    server = folder / "aotc_server"
    if newer(server, library, HERE / "aotc_server.c"):
        run(["cc", "-O2", f"-DAOTC_MODEL={name}", HERE / "aotc_server.c", "-I", lib_dir,
             library, "-lpthread", "-ldl", "-lm", "-o", server])
    return json.loads((lib_dir / f"{name}.report.json").read_text())


def build_peak(work):
    """peak.c for this CPU (-march=native picks AVX-512 or AVX2)."""
    binary = work / "peak"
    if newer(binary, HERE / "peak.c"):
        run(["cc", "-O2", "-march=native", "-pthread", HERE / "peak.c", "-o", binary])
    return binary


def measure_peak(work, threads_list):
    """peak.c's FMA GFLOP/s and copy/triad GB/s (and in-cache copy GB/s) per thread count (a
    string key)."""
    binary = build_peak(work)
    out = run([binary, *threads_list]).stdout
    return {str(r["threads"]): r for r in map(json.loads, out.splitlines())}


def best_of(*peaks):
    """Per thread count and figure, the best of several measurements: noise only lowers them."""
    first = peaks[0]
    return {t: {k: (max(p[t][k] for p in peaks) if isinstance(v, float) else v) for k, v in first[t].items()}
            for t in first}
