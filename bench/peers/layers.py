"""Where aotc's time goes: per-layer times from the library's timing hook, against each
layer's floors, and summed by layer kind (the report's `ops`, e.g. conv2d+relu, concat).

  FLOP floor      = layer FLOPs / measured FMA peak at that thread count
  bandwidth floor = layer bytes (report: what the layer reads and writes) / measured DRAM
                    bandwidth at that thread count; data that stays in cache can beat it
A layer cannot run faster than the larger of its two floors on this machine (except for
cache-resident data); the gap between its time and that floor is what a better kernel or
schedule could win.

The plan over the chain (the report's `plan`) predicts the time of the groups it could
cost on one thread; `plan_check` puts it beside those groups' measured time in the model.
"""

import statistics


def measure(aotc_servers, report, runs):
    """aotc_servers: {threads: Server} of one model. Returns per thread count (a string key)
    one row per kernel call in execution order (a layer may make several: a Winograd
    convolution makes three), with its median time over `runs` runs."""
    calls = report["layers"]
    rows = {}
    for threads, server in aotc_servers.items():
        answer = server.ask(f"layers {runs}")
        assert [c["layer"] for c in calls] == answer["layers"], "the timing hook's calls are not the report's"
        rows[str(threads)] = [{"layer": name, "ops": calls[i]["ops"], "flops": calls[i]["flops"],
                               "bytes": calls[i]["bytes"],
                               "median_us": statistics.median(run[i] for run in answer["us"])}
                              for i, name in enumerate(answer["layers"])]
    return rows


def add_floors(rows, peaks):
    """Adds each layer's FLOP and bandwidth floors (peaks: peak.c's figures per thread count)
    and returns the sums per kind, per thread count."""
    for threads, layer_rows in rows.items():
        peak = peaks[threads]
        flops_per_us = peak["gflops"] * 1e3
        bytes_per_us = max(peak["copy_gbs"], peak["triad_gbs"]) * 1e3
        for row in layer_rows:
            row["flop_floor_us"] = row["flops"] / flops_per_us
            row["bandwidth_floor_us"] = row["bytes"] / bytes_per_us
    return {threads: by_kind(layer_rows) for threads, layer_rows in rows.items()}


def by_kind(rows):
    """Sums of time and floors per layer kind, largest time first."""
    kinds = {}
    for row in rows:
        k = kinds.setdefault(row["ops"], {"kind": row["ops"], "layers": 0, "us": 0.0, "flops": 0.0,
                                          "flop_floor_us": 0.0, "bandwidth_floor_us": 0.0,
                                          "floor_us": 0.0})
        k["layers"] += 1
        k["us"] += row["median_us"]
        k["flops"] += row["flops"]
        k["flop_floor_us"] += row["flop_floor_us"]
        k["bandwidth_floor_us"] += row["bandwidth_floor_us"]
        k["floor_us"] += max(row["flop_floor_us"], row["bandwidth_floor_us"])
    return sorted(kinds.values(), key=lambda k: -k["us"])


def plan_check(report, rows):
    """The report's plan total (one thread, µs, over the groups it timed or predicted)
    against the same groups' time in the model, per thread count."""
    costed = {c["node"] for c in report["choices"] if c["by"] in ("tuning cache", "cost model")}
    return {"groups": len(costed), "predicted_us": report["plan"]["chosen_us"],
            "measured_us": {threads: sum(r["median_us"] for r in layer_rows if r["layer"] in costed)
                            for threads, layer_rows in rows.items()}}
