#!/usr/bin/python3
"""Kernel bench: the AOT-compiled kernel of each layer case, timed through an aotc library at
1 and 2 threads, checked against the reference evaluator, against this machine's FP32 peak
and copy bandwidth measured in the same run. Run it through bench/kernels/run-kernels.
See README.md.
"""

import argparse
import datetime
import hashlib
import json
import math
import shlex
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent / "peers"))

import artifacts  # noqa: E402  (bench/peers)
import servers  # noqa: E402  (bench/peers)
import cases  # noqa: E402
import table  # noqa: E402

INPUT_SEED = 0


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--filter", default="", metavar="TEXT", help="only the cases whose name contains TEXT")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--check-only", action="store_true",
                   help="build and check every selected case against the reference evaluator; no timing")
    p.add_argument("--threads", default="1,2", help="thread counts, one server process each (default %(default)s)")
    p.add_argument("--rounds", type=int, default=4,
                   help="rounds over all cases; each round times every case again (default %(default)s)")
    p.add_argument("--seconds", type=float, default=0.075,
                   help="timed seconds per round, case, thread count and measure (hook, whole run); "
                        "default %(default)s")
    p.add_argument("--batch-ms", type=float, default=25.0,
                   help="milliseconds of runs a server does in one turn before the other's turn")
    p.add_argument("--gap-ms", type=float, default=10.0, help="pause between turns")
    p.add_argument("--tolerance", type=float, default=1e-4,
                   help="check: max|diff| <= TOLERANCE * max(1, max|ref|) (default %(default)s)")
    p.add_argument("--out", type=Path, default=ROOT / "build" / "bench" / "kernels" / "results.json")
    p.add_argument("--work", type=Path, default=ROOT / "build" / "bench" / "kernels" / "work",
                   help="graphs, inputs, references, libraries and servers (reused between runs)")
    p.add_argument("--aotc", type=Path, default=ROOT / "build" / "release" / "compiler" / "aotc")
    args = p.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    if args.rounds < 1 or args.seconds <= 0:
        p.error("--rounds and --seconds must be positive")
    return args


# ---- building ----

def write_if_changed(path, text):
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def prepare(case, work, aotc):
    """The case's graph, input, reference output and library + server (each redone only when
    its inputs changed). Returns (folder, report)."""
    folder = work / case.slug
    folder.mkdir(parents=True, exist_ok=True)
    air = folder / f"{case.slug}.air"
    write_if_changed(air, case.air())
    x = folder / "input.bin"
    if artifacts.newer(x, air):
        rng = np.random.default_rng(INPUT_SEED)
        rng.uniform(-1, 1, size=math.prod(case.input_shape)).astype("<f4").tofile(x)
    ref = folder / "ref.bin"
    artifacts.wait_for_aotc(aotc)
    if artifacts.newer(ref, air, x, aotc):
        # The reference evaluator on the graph as written (no passes at all).
        artifacts.run([aotc, air, "--emit=run", "--passes=", "--input", x, "-o", ref], log=folder / "ref.log")
    # --passes=infer-shapes: the library is built from the graph as written (no folding, no fusion).
    report = artifacts.compile_library(aotc, air, folder, extra=["--passes=infer-shapes"])
    return folder, report


# ---- measuring ----

def summary(samples):
    s = sorted(samples)
    q = lambda f: s[min(len(s) - 1, int(f * len(s)))]  # noqa: E731
    return {"median": statistics.median(s), "min": s[0], "p10": q(0.1), "p25": q(0.25), "p75": q(0.75),
            "p90": q(0.9), "max": s[-1], "n": len(s)}


def start_servers(case, folder, threads):
    """One aotc_server per thread count (Halide's pool cannot shrink: one process each)."""
    srv = {}
    try:
        for t in threads:
            argv = [str(folder / "aotc_server"), str(folder / "input.bin")]
            srv[t] = servers.Server(f"{case.slug}/{t}", argv, folder / f"server.{t}.log")
            srv[t].ask(f"threads {t}")
    except servers.ServerError:
        servers.close_servers(srv)
        raise
    return srv


def check_outputs(srv, folder, tolerance):
    """Each server's output on input.bin against the reference evaluator's."""
    ref = np.fromfile(folder / "ref.bin", dtype="<f4")
    scale = max(1.0, float(np.abs(ref).max())) if ref.size else 1.0
    result = {"max_abs_ref": float(np.abs(ref).max()) if ref.size else 0.0, "tolerance": tolerance,
              "max_abs_diff": {}, "relative": {}}
    for t, server in srv.items():
        path = folder / f"out.{t}.bin"
        server.ask(f"output {path}")
        out = np.fromfile(path, dtype="<f4")
        if out.shape != ref.shape:
            diff = math.inf
        else:
            d = np.abs(out.astype(np.float64) - ref.astype(np.float64))
            diff = math.inf if not np.all(np.isfinite(d)) else float(d.max())
        result["max_abs_diff"][str(t)] = diff
        result["relative"][str(t)] = diff / scale
    result["worst_relative"] = max(result["relative"].values())
    result["ok"] = result["worst_relative"] <= tolerance
    return result


class Load:
    """Cores that other processes kept busy, summed over the windows a case was timed in."""

    def __init__(self):
        self.other_ticks = 0.0
        self.wall_ticks = 0.0

    def window(self, srv):
        return servers.busy_jiffies([s.process.pid for s in srv.values()]), time.time()

    def add(self, srv, start):
        (machine0, ours0), t0 = start
        machine, ours = servers.busy_jiffies([s.process.pid for s in srv.values()])
        self.other_ticks += max(0.0, (machine - machine0) - (ours - ours0))
        self.wall_ticks += (time.time() - t0) * os.sysconf("SC_CLK_TCK")

    def cores(self):
        return self.other_ticks / self.wall_ticks if self.wall_ticks else None


def layers_interleaved(srv, runs, batch, gap_s):
    """Like servers.interleaved, with the per-layer timing hook (`layers K`): each server does
    `batch` runs per turn, in rotating order, until it has `runs`. Returns per thread count the
    kernel time of each run (sum over the library's layers, us) and the layer names."""
    keys = list(srv)
    samples = {k: [] for k in keys}
    names = {}
    for round_index in range(-(-runs // batch)):
        shift = round_index % len(keys)
        for key in keys[shift:] + keys[:shift]:
            n = min(batch, runs - len(samples[key]))
            answer = srv[key].ask(f"layers {n}")
            names[key] = answer["layers"]
            samples[key] += [sum(run) for run in answer["us"]]
            time.sleep(gap_s)
    return samples, names


class Timing:
    """One case's servers and what they measured, round after round."""

    def __init__(self, case, folder, args):
        self.case, self.folder = case, folder
        self.srv = start_servers(case, folder, args.threads)
        self.load = Load()
        self.hook = {t: [] for t in args.threads}  # per round: list of samples
        self.whole = {t: [] for t in args.threads}
        self.cpu_ms = {t: 0.0 for t in args.threads}
        self.wall_ms = {t: 0.0 for t in args.threads}
        self.names = []
        # Warm-up; the slowest server's time per run sets how many runs a round and a turn hold.
        try:
            estimate_ms = max(statistics.median(s.ask("run 5")["ms"]) for s in self.srv.values())
        except servers.ServerError:
            self.close()
            raise
        self.runs = max(5, min(50000, round(args.seconds * 1e3 / max(estimate_ms, 1e-4))))
        self.batch = max(1, min(self.runs, round(args.batch_ms / max(estimate_ms, 1e-4))))

    def round(self, gap_s):
        start = self.load.window(self.srv)
        hook, names = layers_interleaved(self.srv, self.runs, self.batch, gap_s)
        whole, _ = servers.interleaved(self.srv, self.runs, self.batch, gap_s, 1)
        self.load.add(self.srv, start)
        self.names = names[next(iter(self.srv))]
        for t in self.srv:
            self.hook[t].append(hook[t])
            self.whole[t].append([ms * 1e3 for ms in whole[t]["samples"][0]])
            self.cpu_ms[t] += whole[t]["cpu_ms"]
            self.wall_ms[t] += whole[t]["wall_ms"]

    def result(self):
        per_thread = {}
        for t in self.srv:
            per_thread[str(t)] = {
                # Best median over the rounds (noise only slows a round down), and every sample.
                "hook_us": {"best_median": min(statistics.median(r) for r in self.hook[t]),
                            "round_medians": [statistics.median(r) for r in self.hook[t]],
                            **summary([x for r in self.hook[t] for x in r])},
                "run_us": {"best_median": min(statistics.median(r) for r in self.whole[t]),
                           "round_medians": [statistics.median(r) for r in self.whole[t]],
                           **summary([x for r in self.whole[t] for x in r])},
                "cores_used": self.cpu_ms[t] / self.wall_ms[t] if self.wall_ms[t] else None,
            }
        return {"runs_per_round": self.runs, "batch": self.batch, "layers_timed": self.names,
                "background_cores": self.load.cores(), "threads": per_thread}

    def close(self):
        servers.close_servers(self.srv)


# ---- figures ----

def measure_peak(args):
    """peak.c once (every thread count), with the cores other processes kept busy meanwhile."""
    tick = os.sysconf("SC_CLK_TCK")
    t0, (machine0, _), times0 = time.time(), servers.busy_jiffies([]), os.times()
    peak = artifacts.measure_peak(args.work, args.threads)
    (machine1, _), times1 = servers.busy_jiffies([]), os.times()
    own = sum(times1[:4]) - sum(times0[:4])  # this process and peak.c (a waited-for child)
    background = max(0.0, (machine1 - machine0) - own * tick) / ((time.time() - t0) * tick)
    return {"peak": peak, "background_cores": background, "loadavg": os.getloadavg()[0]}


def cache_level(nbytes, peak):
    """Where a kernel's data (bytes read plus written per run) stay while it runs back to back:
    the copy bandwidth measured over a footprint at that level is its ceiling."""
    threads = peak["threads"]
    if "l2_bytes" in peak and nbytes <= 0.75 * peak["l2_bytes"] * threads:
        return "L2", peak["copy_l2_gbs"]
    if "l3_bytes" in peak and nbytes <= 0.75 * peak["l3_bytes"]:
        return "L3", peak["copy_l3_gbs"]
    return "DRAM", peak["copy_gbs"]


def add_figures(row, case, report, peak):
    """Rates and fractions of the peak per thread count, speedups, FLOP-count cross-check."""
    layers = report["layers"]
    row["schedule"] = "; ".join(layer["schedule"] for layer in layers)
    row["report_flops"] = sum(layer["flops"] for layer in layers)
    row["bytes"] = sum(layer["bytes"] for layer in layers)
    row["flops"] = case.flops
    if case.kind == "compute":
        expected = case.flops + math.prod(case.output_shape) * case.epilogue_ops
        row["flop_count_matches_report"] = abs(row["report_flops"] - expected) <= 1e-6 * expected
    first = None
    for t, r in row["threads"].items():
        us = r["hook_us"]["best_median"]
        p = peak[t]
        if case.kind == "compute":
            r["rate"], r["unit"] = case.flops / us * 1e-3, "GFLOP/s"
            r["ceiling"], r["ceiling_name"] = p["gflops"], "FMA peak"
        else:
            r["rate"], r["unit"] = row["bytes"] / us * 1e-3, "GB/s"
            level, ceiling = cache_level(row["bytes"], p)
            r["ceiling"], r["ceiling_name"] = ceiling, f"copy {level}"
            r["fraction_of_dram_copy"] = r["rate"] / p["copy_gbs"]
        r["fraction"] = r["rate"] / r["ceiling"]
        r["floor_us"] = (case.flops if case.kind == "compute" else row["bytes"]) / (r["ceiling"] * 1e3)
        if first is None:
            first = us
        else:
            r["speedup"] = first / us


def aotc_identity(aotc):
    """Which compiler built the libraries: its hash and time, and the checkout's commit."""
    artifacts.wait_for_aotc(aotc)
    data = aotc.read_bytes()
    git = ["git", "-C", str(ROOT)]
    head = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    changed = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no"], capture_output=True,
                             text=True).stdout.split("\n")
    return {"path": str(aotc), "sha256": hashlib.sha256(data).hexdigest()[:16],
            "mtime": datetime.datetime.fromtimestamp(aotc.stat().st_mtime, datetime.timezone.utc)
            .isoformat(timespec="seconds"),
            # Uncommitted changes that can affect the kernels (the bench's own files aside).
            "git_head": head, "git_modified": sorted(line[3:] for line in changed
                                                     if line.strip() and not line[3:].startswith("bench/"))}


def build_all(selected, rows, args):
    """Builds every case; if aotc was replaced meanwhile (someone rebuilt it), builds again, so
    that one compiler built them all. Returns ({slug: (folder, report)}, aotc identity)."""
    for _ in range(3):
        before = aotc_identity(args.aotc)
        built = {}
        for case, row in zip(selected, rows):
            row.pop("error", None)
            try:
                built[case.slug] = prepare(case, args.work, args.aotc)
            except (RuntimeError, OSError, ValueError) as e:
                row["error"] = f"build: {e}"
                print(f"  {case.name}: BUILD FAILED: {e}", file=sys.stderr, flush=True)
        after = aotc_identity(args.aotc)
        if after["sha256"] == before["sha256"]:
            return built, after
        print("  aotc changed while building: building again with the new one", flush=True)
    raise RuntimeError("aotc keeps changing: no consistent build")


def machine():
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "host": os.uname().nodename}


def report_failures(rows, tolerance):
    """Prints every failed case loudly; returns the exit status."""
    failures = [r for r in rows if "error" in r or not r.get("check", {}).get("ok", False)]
    if not failures:
        return 0
    print("\n" + "!" * 78, file=sys.stderr)
    for r in failures:
        why = r.get("error") or (f"max|diff| / max(1, max|ref|) = {r['check']['worst_relative']:.3g} > "
                                 f"{tolerance:g} (per thread count: {r['check']['relative']})")
        print(f"FAILED: {r['case']}: {why}", file=sys.stderr)
    print(f"{len(failures)} case(s) FAILED", file=sys.stderr)
    print("!" * 78, file=sys.stderr)
    return 1


def main():
    args = parse_args()
    selected = cases.select(args.filter)
    if args.list:
        for c in selected:
            print(f"{c.kind:8} {c.name}")
        return 0
    if not selected:
        print(f"run-kernels: no case name contains '{args.filter}' (--list shows them)", file=sys.stderr)
        return 1
    args.work.mkdir(parents=True, exist_ok=True)
    started = time.time()
    result = {"command": shlex.join(["bench/kernels/run-kernels"] + sys.argv[1:]),
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": machine(), "threads": args.threads, "rounds": args.rounds, "seconds": args.seconds,
              "tolerance": args.tolerance, "load_average_start": os.getloadavg()}

    print(f"building {len(selected)} case(s) in {args.work} (graph, input, reference, library, server)",
          flush=True)
    rows = [{"case": case.name, "slug": case.slug, "kind": case.kind, "input_shape": case.input_shape,
             "output_shape": case.output_shape, "air": case.air()} for case in selected]
    built, result["aotc"] = build_all(selected, rows, args)

    # Start every case's servers and check their outputs before any timing.
    print("starting the servers, checking outputs against the reference evaluator", flush=True)
    timings = {}
    try:
        for case, row in zip(selected, rows):
            if case.slug not in built:
                continue
            folder, report = built[case.slug]
            try:
                timing = Timing(case, folder, args)
                timings[case.slug] = timing
                row["check"] = check_outputs(timing.srv, folder, args.tolerance)
                ok = "ok" if row["check"]["ok"] else "FAILED"
                print(f"  {case.name:45} max|diff|/scale {row['check']['worst_relative']:.1e} {ok}", flush=True)
            except (servers.ServerError, RuntimeError, OSError, ValueError) as e:
                row["error"] = f"server: {e}"
                print(f"  {case.name}: FAILED: {e}", file=sys.stderr, flush=True)
        if args.check_only:
            return report_failures(rows, args.tolerance)

        print(f"measuring the peak ({', '.join(map(str, args.threads))} threads)", flush=True)
        peaks = [measure_peak(args)]
        for r in range(args.rounds):
            print(f"timing round {r + 1}/{args.rounds}: {len(timings)} case(s)", flush=True)
            for case, row in zip(selected, rows):
                timing = timings.get(case.slug)
                if timing is None:
                    continue
                try:
                    timing.round(args.gap_ms / 1e3)
                except (servers.ServerError, ValueError) as e:
                    row["error"] = f"timing: {e}"
                    print(f"  {case.name}: FAILED: {e}", file=sys.stderr, flush=True)
                    timing.close()
                    del timings[case.slug]
            peaks.append(measure_peak(args))  # after every round: the peak too is the best of several
    finally:
        for timing in timings.values():
            timing.close()
    peak = artifacts.best_of(*[m["peak"] for m in peaks])
    for case, row in zip(selected, rows):
        if case.slug in timings:
            row.update(timings[case.slug].result())
            add_figures(row, case, built[case.slug][1], peak)

    result.update({"peak": peak, "peak_measurements": peaks,
                   "load_average_end": os.getloadavg(), "elapsed_s": time.time() - started, "cases": rows})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    args.out.with_suffix(".md").write_text(table.markdown(result))
    print()
    print(table.render(result))
    print(f"\nJSON: {args.out}")
    return report_failures(rows, args.tolerance)


if __name__ == "__main__":
    sys.exit(main())
