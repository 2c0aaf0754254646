"""Benchmark servers as child processes, and the interleaved timing loop.

Every system (aotc, ONNX Runtime, PyTorch eager, TorchScript) at every thread count is one
persistent child process that answers one JSON line per command on stdin (see
aotc_server.c for the protocol). The driver alternates short batches of runs across all of
them, so that whatever else the machine is doing slows every system alike instead of
landing on whichever happened to run at that moment.
"""

import json
import os
import statistics
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OPENBLAS_OPENMP = "/usr/lib/x86_64-linux-gnu/openblas-openmp"
# "onnx": aotc compiling the .onnx file ONNX Runtime runs (aotc's ONNX frontend), not the .fb.
# The int8 systems run the model quantized by PyTorch FX: aotc and ONNX Runtime its QDQ ONNX
# file (MODEL.int8.onnx), PyTorch the converted FX module itself.
INT8_SYSTEMS = ["aotc-int8", "ort-int8", "eager-int8"]
SYSTEMS = ["aotc", "onnx", "ort", "eager", "script", *INT8_SYSTEMS]
# "base": the same model compiled by another aotc binary (--baseline-aotc), for A/B runs.
SYSTEM_NAMES = {"aotc": "aotc", "onnx": "aotc from ONNX", "ort": "ONNX Runtime", "eager": "PyTorch eager",
                "script": "TorchScript", "base": "aotc baseline", "aotc-int8": "aotc int8",
                "ort-int8": "ONNX Runtime int8", "eager-int8": "PyTorch int8"}
TORCH_SYSTEMS = ("eager", "script", "eager-int8")


class ServerError(RuntimeError):
    pass


class Server:
    """One child process speaking the line protocol; its stderr goes to a log file."""

    def __init__(self, key, argv, log_path, env=None):
        self.key = key
        self.log_path = log_path
        self.log = open(log_path, "w")
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.log, text=True, bufsize=1,
                                        env={**os.environ, **(env or {})})

    def ask(self, command):
        try:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            raise ServerError(f"{self.key}: no answer to '{command}' "
                              f"(exit {self.process.poll()}): {self.log_tail()}")
        return json.loads(line)

    def log_tail(self):
        self.log.flush()
        text = Path(self.log_path).read_text(errors="replace").strip().splitlines()
        return " | ".join(text[-5:]) or "no message"

    def close(self):
        if self.process.poll() is None:
            try:
                self.process.stdin.write("quit\n")
                self.process.stdin.flush()
                self.process.wait(timeout=30)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self.log.close()


def server_argv(system, model, folder, node_modules):
    """The command line of one system's server for one prepared model folder."""
    if system in ("aotc", "base", "onnx", "aotc-int8"):
        server = folder / {"aotc": "", "base": "baseline", "onnx": "from_onnx", "aotc-int8": "int8"}[system]
        return [str(server / "aotc_server"), str(folder / "input.bin")], {}
    if system in ("ort", "ort-int8"):
        onnx_file = folder / (f"{model}.onnx" if system == "ort" else f"{model}.int8.onnx")
        return (["node", str(HERE / "ort_server.js"), str(onnx_file), str(folder / "input.bin")],
                {"NODE_PATH": str(node_modules)})
    # PyTorch: Debian's torch with the OpenMP build of OpenBLAS as its BLAS.
    library_path = ":".join(p for p in [OPENBLAS_OPENMP, os.environ.get("LD_LIBRARY_PATH")] if p)
    return ([str(HERE / "torch_server.py"), model, str(folder), "--mode", system],
            {"LD_LIBRARY_PATH": library_path})


def start_servers(model, folder, threads_list, node_modules, log_dir, systems=SYSTEMS):
    """Starts every (system, threads) server; returns ({key: Server}, {key: error text}).
    The processes start together (their imports and session set-up overlap), then each is
    given its thread count; a system that fails to start is reported, not fatal."""
    servers, errors = {}, {}
    for system in systems:
        for threads in threads_list:
            key = (system, threads)
            argv, env = server_argv(system, model, folder, node_modules)
            if system in TORCH_SYSTEMS:
                env["OMP_NUM_THREADS"] = str(threads)  # OpenBLAS's OpenMP pool too
            log = log_dir / f"{model}.{system}.{threads}.log"
            servers[key] = Server(f"{model}/{system}/{threads}", argv, log, env)
    for key, server in list(servers.items()):
        try:
            server.ask(f"threads {key[1]}")
        except ServerError as e:
            errors[key] = str(e)
            server.close()
            del servers[key]
    return servers, errors


def close_servers(servers):
    for server in servers.values():
        server.close()


def warm_up(servers, runs):
    """Untimed runs first: ORT's first runs allocate, TorchScript's profiling executor
    specialises the graph on its first runs, caches and page tables fill. A server that
    fails here is closed and dropped; returns {key: error text}."""
    errors = {}
    for key, server in list(servers.items()):
        try:
            server.ask(f"run {runs}")
        except ServerError as e:
            errors[key] = str(e)
            server.close()
            del servers[key]
    return errors


def busy_jiffies(pids):
    """CPU time so far, in clock ticks: of the whole machine (everything but idle and iowait),
    and of the given processes (all their threads) plus this one."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    machine = sum(fields) - fields[3] - fields[4]
    ours = sum(os.times()[:2]) * os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read().rpartition(")")[2].split()  # fields after the command name
            ours += int(stat[11]) + int(stat[12])  # utime, stime
        except OSError:
            pass
    return machine, ours


class BackgroundLoad:
    """How many cores other processes kept busy while the benchmark timed: a number well
    above 0 means the machine was shared, and multi-thread results are suspect."""

    def __init__(self, servers):
        self.pids = [s.process.pid for s in servers.values()]
        self.start = busy_jiffies(self.pids)
        self.t0 = time.time()

    def cores(self):
        machine, ours = busy_jiffies(self.pids)
        ticks = (time.time() - self.t0) * os.sysconf("SC_CLK_TCK")
        return max(0.0, ((machine - self.start[0]) - (ours - self.start[1])) / ticks)


def interleaved(servers, runs, batch, gap_s, repeats):
    """Times every server `repeats` times; each repetition gives each server `runs` timed runs
    in batches of `batch`, in rotating order, with a short pause between batches so that the
    previous system's spinning worker threads have gone to sleep. Returns per key the
    medians of the repetitions, the best of them, all samples and the cores used, and the
    cores that other processes used meanwhile."""
    load = BackgroundLoad(servers)
    keys = list(servers)
    result = {k: {"medians": [], "samples": [], "cpu_ms": 0.0, "wall_ms": 0.0} for k in keys}
    for _ in range(repeats):
        samples = {k: [] for k in keys}
        for round_index in range(-(-runs // batch)):
            shift = round_index % len(keys)
            for key in keys[shift:] + keys[:shift]:
                n = min(batch, runs - len(samples[key]))
                answer = servers[key].ask(f"run {n}")
                samples[key] += answer["ms"]
                result[key]["cpu_ms"] += answer["cpu_ms"]
                result[key]["wall_ms"] += sum(answer["ms"])
                time.sleep(gap_s)
        for key in keys:
            result[key]["medians"].append(statistics.median(samples[key]))
            result[key]["samples"].append(samples[key])
    for r in result.values():
        r["best_median_ms"] = min(r["medians"])
        # CPU time over wall time while timed: about the thread count, if it was honoured.
        r["cores_used"] = r["cpu_ms"] / r["wall_ms"] if r["wall_ms"] else None
    return result, load.cores()
