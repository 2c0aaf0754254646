#!/usr/bin/python3
"""Peer benchmark: aotc against ONNX Runtime, PyTorch eager and TorchScript on torchvision
models, batch 1, in float32 and in int8 (PyTorch FX quantization), with the machine's own FP32
peak and memory bandwidth measured in the same run. Run it through bench/peers/run-bench,
which installs the peers first. See README.md.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import artifacts
import fixed_cost
import layers
import report
import servers
from models import MODELS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated (default: all: %(default)s)")
    p.add_argument("--threads", default="1,2", help="thread counts (default %(default)s)")
    p.add_argument("--runs", type=int, default=30, help="timed runs per system, thread count and repetition")
    p.add_argument("--repeats", type=int, default=2, help="repetitions; the best median is kept")
    p.add_argument("--batch", type=int, default=5, help="runs per turn before the next system's turn")
    p.add_argument("--warmup", type=int, default=5, help="untimed runs per server before timing")
    p.add_argument("--layers", default=None, metavar="MODEL",
                   help="model for the per-layer analysis (default densenet121 if benchmarked, "
                        "else the first model; 'none' to skip)")
    p.add_argument("--chain", default="1,101", help="layer counts of the fixed-cost models")
    p.add_argument("--chain-runs", type=int, default=2000, help="timed runs of each fixed-cost model")
    p.add_argument("--seed", type=int, default=0, help="weights and input seed (the exporter's)")
    p.add_argument("--opset", type=int, default=17,
                   help="ONNX opset of the float export (the int8 export is opset 13)")
    p.add_argument("--out", type=Path, default=ROOT / "build" / "bench" / "results")
    p.add_argument("--work", type=Path, default=ROOT / "build" / "bench" / "work",
                   help="exported models, libraries and programs (reused between runs)")
    p.add_argument("--aotc", type=Path, default=ROOT / "build" / "release" / "compiler" / "aotc")
    p.add_argument("--node-modules", type=Path, default=ROOT / "build" / "bench" / "node_modules")
    p.add_argument("--retries", type=int, default=1,
                   help="times a model is timed again when the FMA peak or the copy bandwidth "
                        "measured right after it fell below 85%% or 70%% of the run's best "
                        "(default %(default)s)")
    p.add_argument("--systems", default=",".join(servers.SYSTEMS),
                   help="systems to time (default: all: %(default)s)")
    p.add_argument("--baseline-aotc", type=Path, default=None, metavar="AOTC",
                   help="another aotc binary (e.g. an older commit's): its libraries are timed "
                        "interleaved with this aotc's as system 'base', for A/B comparisons")
    args = p.parse_args()
    args.systems = [s for s in args.systems.split(",") if s]
    unknown = [s for s in args.systems if s not in servers.SYSTEMS]
    if unknown or not args.systems:
        p.error(f"--systems: choose from {', '.join(servers.SYSTEMS)}")
    if args.baseline_aotc:
        args.systems.append("base")
    args.models = [m for m in args.models.split(",") if m]
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        p.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(MODELS)}")
    args.threads = [int(t) for t in args.threads.split(",")]
    args.chain = [int(n) for n in args.chain.split(",")]
    if args.layers is None:
        args.layers = "densenet121" if "densenet121" in args.models else args.models[0]
    if args.layers != "none" and args.layers not in args.models:
        p.error(f"--layers {args.layers}: not among --models")
    return args


measure_peak, best_of = artifacts.measure_peak, artifacts.best_of  # shared with bench/kernels


def max_relative_error(path, reference):
    import numpy as np
    a, ref = np.fromfile(path, dtype="<f4"), np.fromfile(reference, dtype="<f4")
    if a.shape != ref.shape:
        return float("inf")
    return float(np.abs(a - ref).max() / max(1.0, float(np.abs(ref).max())))


# The reference of the output check: the first of these that runs (float systems); the int8
# systems are checked against each other, ONNX Runtime's int8 first.
REFERENCE_SYSTEMS = ["eager", "script", "ort", "base", "aotc"]
INT8_REFERENCE_SYSTEMS = ["ort-int8", "eager-int8", "aotc-int8"]


def write_outputs(running, folder):
    """Every server writes its output for the same input file: {key: path}."""
    out = folder / "outputs"
    out.mkdir(exist_ok=True)
    paths = {}
    for (system, threads), server in running.items():
        paths[(system, threads)] = out / f"{system}.{threads}.bin"
        server.ask(f"output {paths[(system, threads)]}")
    return paths


def check_outputs(paths, reference_key):
    """Each float system's output against the reference system's (PyTorch eager where it runs)
    at the first thread count."""
    if reference_key not in paths:
        return {}
    return {f"{s}/{t}": max_relative_error(p, paths[reference_key]) for (s, t), p in paths.items()
            if s not in servers.INT8_SYSTEMS}


def check_int8_outputs(paths, reference_key, step):
    """Each int8 system's output against the int8 reference's (ONNX Runtime's where it runs) at
    the first thread count: whether the top-1 is the same, and the max |a-b|, also in
    quantization steps of the output (`step`, the scale of the graph's last DequantizeLinear,
    where it was read). Not against the float reference: quantization moves the outputs far
    more than the float tolerance. With random weights the top logits can lie within a step of
    each other: `reference_lead_steps` says how decisive the reference's top-1 is."""
    import numpy as np
    if reference_key not in paths:
        return None
    ref = np.fromfile(paths[reference_key], dtype="<f4")
    top2 = np.sort(ref)[-2:]
    check = {"reference": "{}/{}".format(*reference_key), "output_step": step,
             "reference_lead_steps": float(top2[1] - top2[0]) / step if step and ref.size > 1 else None,
             "systems": {}}
    for (s, t), path in paths.items():
        if s not in servers.INT8_SYSTEMS or (s, t) == reference_key:
            continue
        a = np.fromfile(path, dtype="<f4")
        if a.shape != ref.shape:
            check["systems"][f"{s}/{t}"] = {"same_top1": False, "max_abs": float("inf"), "max_steps": None,
                                            "flagged": True}
            continue
        max_abs = float(np.abs(a - ref).max())
        same = bool(a.argmax() == ref.argmax())
        check["systems"][f"{s}/{t}"] = {"same_top1": same, "top1": int(a.argmax()),
                                        "reference_top1": int(ref.argmax()), "max_abs": max_abs,
                                        "max_steps": max_abs / step if step else None, "flagged": not same}
    return check


def blas_check(running):
    """The PyTorch servers must have loaded the OpenMP OpenBLAS, not the reference BLAS; they
    all run with the same environment, so the first one is asked."""
    for key in (k for k in running if k[0] in ("eager", "script")):
        loaded = running[key].ask("blas")["blas"]
        ok = any(servers.OPENBLAS_OPENMP in p for p in loaded) and not any("/blas/" in p for p in loaded)
        if not ok:
            print(f"  WARNING: {key} loaded {loaded}, not {servers.OPENBLAS_OPENMP}", flush=True)
        return {"libraries": loaded, "openblas_openmp": ok}
    return None


def bench_model(model, args, result):
    """Exports, compiles, times and checks one model; per-layer times too if it is --layers."""
    folder = args.work / model
    entry = {"errors": {}, "timing": {}, "output_error": {}}
    result["models"][model] = entry
    try:
        artifacts.prepare_model(model, folder, args.seed, args.opset)
    except RuntimeError as e:
        entry["errors"]["prepare"] = str(e)
        print(f"  {model}: export failed, skipped:\n{e}", flush=True)
        return None
    systems = list(args.systems)
    # How prepare.py made MODEL.int8.onnx, or why torch could not export it (then the model
    # runs without its int8 systems).
    int8_json = folder / f"{model}.int8.json"
    int8 = json.loads(int8_json.read_text()) if int8_json.exists() else {"error": f"no {int8_json.name}"}
    entry["int8_export"] = int8
    if "error" in int8 and any(s in systems for s in servers.INT8_SYSTEMS):
        systems = [s for s in systems if s not in servers.INT8_SYSTEMS]
        print(f"  {model}: no int8 export, its int8 systems skipped: {int8['error']}", flush=True)
    aotc_report = None
    try:
        aotc_report = artifacts.compile_library(args.aotc, folder / f"{model}.fb", folder)
        entry["flops"] = aotc_report["totals"]["flops"]
        entry["aotc_totals"] = aotc_report["totals"]
    except RuntimeError as e:
        entry["errors"]["aotc"] = str(e)
        systems.remove("aotc")
        print(f"  {model}: aotc failed:\n{e}", flush=True)
    # The other aotc libraries, each in a folder of its own:
    # (system, aotc, model file, folder, library name (None: the file's stem), what).
    others = [("onnx", args.aotc, f"{model}.onnx", "from_onnx", None, "aotc on the ONNX file"),
              ("base", args.baseline_aotc, f"{model}.fb", "baseline", None, "the baseline aotc"),
              ("aotc-int8", args.aotc, f"{model}.int8.onnx", "int8", f"{model}_int8", "aotc on the int8 ONNX file")]
    for system, aotc, model_file, subfolder, name, what in others:
        if system not in systems:
            continue
        try:
            (folder / subfolder).mkdir(exist_ok=True)
            artifacts.compile_library(aotc, folder / model_file, folder / subfolder, name=name)
        except RuntimeError as e:
            entry["errors"][system] = str(e)
            systems.remove(system)
            print(f"  {model}: {what} failed:\n{e}", flush=True)

    print(f"  {model}: starting {len(systems) * len(args.threads)} servers", flush=True)
    running, errors = servers.start_servers(model, folder, args.threads, args.node_modules,
                                            folder, systems)
    entry["errors"].update({f"{s}/{t}": e for (s, t), e in errors.items()})
    layer_rows = None
    try:
        entry["blas"] = blas_check(running)
        entry["errors"].update({f"{s}/{t}": e for (s, t), e in servers.warm_up(running, args.warmup).items()})
        print(f"  {model}: timing {len(running)} servers, interleaved", flush=True)
        timing, entry["background_cores"] = servers.interleaved(running, args.runs, args.batch,
                                                                0.03, args.repeats)
        entry["timing"] = {f"{s}/{t}": v for (s, t), v in timing.items()}
        # The machine's own peak right after: a shared host can slow the cores for tens of
        # seconds (every system's multi-thread times rose 1.5-2x together in such spells).
        entry["peak_after"] = measure_peak(args.work, args.threads)
        reference = next((s for s in REFERENCE_SYSTEMS if (s, args.threads[0]) in running), None)
        entry["output_reference"] = reference
        outputs = write_outputs(running, folder)
        entry["output_error"] = check_outputs(outputs, (reference, args.threads[0]))
        int8_reference = next((s for s in INT8_REFERENCE_SYSTEMS if (s, args.threads[0]) in running), None)
        entry["int8_check"] = check_int8_outputs(outputs, (int8_reference, args.threads[0]),
                                                 int8.get("output_step"))
        if model == args.layers and aotc_report:
            print(f"  {model}: per-layer times", flush=True)
            aotc_servers = {t: running[("aotc", t)] for t in args.threads if ("aotc", t) in running}
            layer_rows = layers.measure(aotc_servers, aotc_report, args.runs)
            entry["plan"] = layers.plan_check(aotc_report, layer_rows)
    finally:
        servers.close_servers(running)
    for key, error in entry["errors"].items():
        print(f"  {model}: {key} failed: {error}", flush=True)
    return layer_rows


def best_peak(result, *peaks):
    """The best of the given peak measurements and those taken after each model so far."""
    return best_of(*peaks, *(m["peak_after"] for m in result["models"].values() if "peak_after" in m))


def cpu_class():
    """The machine class int8 speed depends on: vendor, family and model (as /proc/cpuinfo
    gives them) and the vector and dot-product extensions present."""
    fields = {}
    for line in open("/proc/cpuinfo"):
        key, _, value = line.partition(":")
        if not line.strip():
            break  # the first processor is enough
        fields.setdefault(key.strip(), value.strip())
    flags = set(fields.get("flags", "").split())
    return {"vendor": fields.get("vendor_id"), "family": fields.get("cpu family"), "model": fields.get("model"),
            "flags": {f: f in flags for f in ("avx2", "avx512f", "avx512_vnni", "avx_vnni")}}


def versions(args):
    def output(argv, env=None):
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=120,
                                  env={**os.environ, **(env or {})}).stdout.strip()
        except OSError as e:
            return str(e)
    package = args.node_modules / "onnxruntime-node" / "package.json"
    cpu = [line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")]
    return {
        "cpu": cpu[0] if cpu else "?", "cores": os.cpu_count(), "cpu_class": cpu_class(),
        "aotc": output([str(args.aotc), "--version"]),
        "baseline_aotc": str(args.baseline_aotc) if args.baseline_aotc else None,
        "onnxruntime_node": json.loads(package.read_text())["version"] if package.exists() else None,
        "node": output(["node", "--version"]),
        "torch": output(["/usr/bin/python3", "-c", "import torch, torchvision; "
                         "print(torch.__version__, torchvision.__version__)"]),
    }


def main():
    args = parse_args()
    started = time.time()
    args.out.mkdir(parents=True, exist_ok=True)
    args.work.mkdir(parents=True, exist_ok=True)
    result = {"command": " ".join(sys.argv), "systems": args.systems, "threads": args.threads, "runs": args.runs,
              "repeats": args.repeats, "batch": args.batch, "warmup": args.warmup,
              "seed": args.seed, "opset": args.opset, "machine": versions(args),
              "load_average_start": os.getloadavg(), "models": {}}

    print(f"peak FMA and bandwidth on {args.threads} thread(s)", flush=True)
    peak_before = measure_peak(args.work, args.threads)
    layer_rows = None
    for model in args.models:
        print(f"{model}:", flush=True)
        model_started = time.time()
        rows = bench_model(model, args, result)
        for _ in range(args.retries):
            # A model timed while the machine was slower is timed again (the attempt is kept).
            low = report.slower_figures(result["models"][model].get("peak_after"),
                                        best_peak(result, peak_before))
            if not low:
                break
            print(f"  {model}: the machine was slower while it was timed ({'; '.join(low)}); "
                  "timing it again", flush=True)
            attempt = result["models"][model]
            rows = bench_model(model, args, result)
            result["models"][model]["discarded_attempts"] = attempt.pop("discarded_attempts", []) + [attempt]
        layer_rows = rows or layer_rows
        result["models"][model]["seconds"] = time.time() - model_started
        print(f"  {model}: {result['models'][model]['seconds']:.0f} s", flush=True)
    print(f"fixed cost: chains of {args.chain} relu layers", flush=True)
    result["fixed_cost"] = fixed_cost.measure(args.aotc, args.work, args.chain, args.threads,
                                              args.chain_runs, args.repeats)
    # Peak again at the end: the best of all is what the machine can do.
    result["peak"] = best_peak(result, peak_before, measure_peak(args.work, args.threads))
    if layer_rows:
        kinds = layers.add_floors(layer_rows, result["peak"])
        result["layers"] = {"model": args.layers, "layers": layer_rows, "kinds": kinds}
    result["load_average_end"] = os.getloadavg()
    result["elapsed_s"] = time.time() - started
    result["table"] = report.main_rows(result)

    c = result["machine"]["cpu_class"]
    flags = " ".join(f if on else "no " + f for f, on in c["flags"].items())
    print(f"\n{result['machine']['cpu']} ({c['vendor']} family {c['family']} model {c['model']}; {flags}), "
          f"{result['machine']['cores']} cores; aotc "
          f"{result['machine']['aotc']}, ONNX Runtime {result['machine']['onnxruntime_node']} (node), "
          f"torch/torchvision {result['machine']['torch']}")
    for t, p in result["peak"].items():
        int8 = f", {p['int8_gops']:.1f} GOP/s int8 (vpdpbusd)" if p.get("int8_gops") else ""
        print(f"measured peak, {t} thread(s): {p['gflops']:.1f} GFLOP/s FP32 FMA ({p['isa']}){int8}, "
              f"copy {p['copy_gbs']:.1f} GB/s, triad {p['triad_gbs']:.1f} GB/s")
    print(f"median of {args.runs} runs after warm-up, best of {args.repeats} repetitions, systems "
          f"interleaved in batches of {args.batch}; load average {result['load_average_start'][0]:.2f} "
          f"at start, {result['load_average_end'][0]:.2f} at end\n")
    report.print_main_table(result["table"], args.threads[0], args.systems)
    report.print_output_check(result)
    report.print_int8_check(result)
    report.print_cores_used(result)
    report.print_machine_spells(result)
    if "layers" in result:
        report.print_kinds(result)
    report.print_fixed_cost(result["fixed_cost"])

    report.write_json(result, args.out / "results.json")
    charts = report.write_charts(result, args.out)
    print(f"\nwrote {args.out / 'results.json'} and {len(charts)} charts in {args.out}; "
          f"took {result['elapsed_s'] / 60:.1f} min")


if __name__ == "__main__":
    main()
