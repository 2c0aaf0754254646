"""The benchmark's output: printed tables, results.json and PNG charts."""

import json

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

from servers import INT8_SYSTEMS, SYSTEM_NAMES  # noqa: E402

TOLERANCE = 1e-3  # max|a-b| / max(1, max|ref|) above this is flagged


def latency(result, model, system, threads):
    entry = result["models"][model]["timing"].get(f"{system}/{threads}")
    return entry["best_median_ms"] if entry else None


def fmt(value, spec, missing="fail"):
    return missing if value is None else format(value, spec)


def ratio(a, b):
    return a / b if a and b else None


def main_rows(result):
    """One row per model and thread count, as printed and as stored in the JSON."""
    rows = []
    threads_list = result["threads"]
    for model, m in result["models"].items():
        base = latency(result, model, "aotc", threads_list[0])
        for threads in threads_list:
            aotc, ort = latency(result, model, "aotc", threads), latency(result, model, "ort", threads)
            baseline = latency(result, model, "base", threads)
            from_onnx = latency(result, model, "onnx", threads)
            gflops = m["flops"] / (aotc * 1e6) if aotc and m.get("flops") else None
            peak = result["peak"][str(threads)]["gflops"]
            rows.append({
                "model": model, "threads": threads, "aotc_ms": aotc, "ort_ms": ort,
                "ort_over_aotc": ort / aotc if aotc and ort else None,
                "eager_ms": latency(result, model, "eager", threads),
                "script_ms": latency(result, model, "script", threads),
                "aotc_gflops": gflops, "aotc_peak_fraction": gflops / peak if gflops else None,
                "aotc_speedup_vs_first": base / aotc if base and aotc and threads != threads_list[0] else None,
                "background_cores": m.get("background_cores"),
                "base_ms": baseline, "base_over_aotc": baseline / aotc if aotc and baseline else None,
                "onnx_ms": from_onnx, "ort_over_onnx": ort / from_onnx if ort and from_onnx else None,
                **int8_row(result, model, threads, aotc),
            })
    return rows


def int8_row(result, model, threads, aotc):
    """The int8 columns of a row: the int8 systems' times, ORT int8 over aotc int8 (above 1,
    aotc is faster) and float aotc over int8 aotc (the int8 speedup), aotc int8's rate as a
    fraction of the measured int8 dot-product peak (the float model's operation count: the
    same multiply-adds; None without an int8 peak), and whether aotc int8's top-1 agreed with
    the int8 reference (None where not checked)."""
    m = result["models"][model]
    aotc_int8, ort_int8 = latency(result, model, "aotc-int8", threads), latency(result, model, "ort-int8", threads)
    check = (m.get("int8_check") or {}).get("systems", {}).get(f"aotc-int8/{threads}")
    int8_peak = result["peak"][str(threads)].get("int8_gops")
    int8_gops = m["flops"] / (aotc_int8 * 1e6) if aotc_int8 and m.get("flops") else None
    return {"int8_export_error": m.get("int8_export", {}).get("error"),
            "aotc_int8_ms": aotc_int8, "ort_int8_ms": ort_int8,
            "eager_int8_ms": latency(result, model, "eager-int8", threads),
            "ort_int8_over_aotc_int8": ratio(ort_int8, aotc_int8), "aotc_over_aotc_int8": ratio(aotc, aotc_int8),
            "aotc_int8_gops": int8_gops, "aotc_int8_peak_fraction": ratio(int8_gops, int8_peak),
            "aotc_int8_same_top1": check["same_top1"] if check else None}


def print_main_table(rows, first_threads, systems):
    """A system that did not run prints as "fail", one not asked for (--systems) as "-"; the
    baseline's columns only where it ran, the int8 ones only where an int8 system was asked for
    ("-" for a model without an int8 export; "*" after aotc int8's time where its top-1
    differed from the int8 reference's)."""
    with_base = any(r["base_ms"] is not None for r in rows)
    with_int8 = any(s in systems for s in INT8_SYSTEMS)

    def ms(r, system, key, width=9):
        missing = "fail" if system in systems and not (system in INT8_SYSTEMS and r["int8_export_error"]) else "-"
        return f"{fmt(r[key], f'{width}.2f', missing):>{width}}"

    head = (f"{'model':<14} {'thr':>3} {'aotc ms':>9} {'onnx ms':>9} {'ORT ms':>9} {'ORT/aotc':>8} {'ORT/onnx':>8} "
            f"{'eager ms':>9} "
            f"{'script ms':>9} {'aotc GF/s':>9} {'%peak':>6} {'aotc t' + str(first_threads) + '/tN':>9} {'bg':>5}"
            + (f" {'base ms':>9} {'base/aotc':>9}" if with_base else "")
            + (f" {'aotc-i8 ms':>10} {'ORT-i8 ms':>10} {'eager-i8 ms':>11} {'ORT-i8/aotc-i8':>14} {'aotc/aotc-i8':>12}"
               f" {'i8 %peak':>8}"
               if with_int8 else ""))
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['model']:<14} {r['threads']:>3} {ms(r, 'aotc', 'aotc_ms')} {ms(r, 'onnx', 'onnx_ms')} "
              f"{ms(r, 'ort', 'ort_ms')} {fmt(r['ort_over_aotc'], '8.2f', '-'):>8} "
              f"{fmt(r['ort_over_onnx'], '8.2f', '-'):>8} "
              f"{ms(r, 'eager', 'eager_ms')} {ms(r, 'script', 'script_ms')} "
              f"{fmt(r['aotc_gflops'], '9.1f', '-'):>9} "
              f"{fmt(r['aotc_peak_fraction'] and 100 * r['aotc_peak_fraction'], '5.1f', '-'):>5}% "
              f"{fmt(r['aotc_speedup_vs_first'], '8.2f', ''):>8}{'x' if r['aotc_speedup_vs_first'] else ' '} "
              f"{fmt(r['background_cores'], '5.2f', '-'):>5}"
              + (f" {fmt(r['base_ms'], '9.2f'):>9} {fmt(r['base_over_aotc'], '9.3f', '-'):>9}" if with_base else "")
              + (f" {ms(r, 'aotc-int8', 'aotc_int8_ms', 9)}{'*' if r['aotc_int8_same_top1'] is False else ' '}"
                 f" {ms(r, 'ort-int8', 'ort_int8_ms', 10)} {ms(r, 'eager-int8', 'eager_int8_ms', 11)}"
                 f" {fmt(r['ort_int8_over_aotc_int8'], '14.2f', '-'):>14}"
                 f" {fmt(r['aotc_over_aotc_int8'], '12.2f', '-'):>12}"
                 f" {fmt(r['aotc_int8_peak_fraction'] and 100 * r['aotc_int8_peak_fraction'], '7.1f', '-'):>7}%"
                 if with_int8 else ""))
    for model, error in dict.fromkeys((r["model"], r["int8_export_error"]) for r in rows if r["int8_export_error"]):
        print(f"{model}: no int8 export ({error})")


def print_output_check(result):
    references = {m.get("output_reference") for m in result["models"].values()} - {None}
    reference = SYSTEM_NAMES[references.pop()] if len(references) == 1 else "PyTorch eager"
    print(f"\noutputs vs {reference} ({result['threads'][0]} thread): "
          f"max|a-b| / max(1, max|ref|), worst over thread counts; * = above {TOLERANCE:g}")
    systems = [s for s in result["systems"] if s not in INT8_SYSTEMS]
    print(f"{'model':<14} " + " ".join(f"{SYSTEM_NAMES[s]:>14}" for s in systems))
    for model, m in result["models"].items():
        cells = []
        for s in systems:
            errors = [v for k, v in m["output_error"].items() if k.startswith(s + "/")]
            worst = max(errors) if errors else None
            flag = "*" if worst is not None and worst > TOLERANCE else " "
            cells.append(f"{fmt(worst, '13.2e', 'n/a'):>13}{flag}")
        print(f"{model:<14} " + " ".join(cells))


def print_int8_check(result):
    """The int8 systems against the int8 reference (ONNX Runtime's int8 where it ran), at the
    first thread count, worst over thread counts: same top-1, max |a-b| in output steps."""
    checks = {model: m["int8_check"] for model, m in result["models"].items() if m.get("int8_check")}
    if not checks:
        return
    print(f"\nint8 outputs vs the int8 reference ({result['threads'][0]} thread): same top-1, max|a-b| in "
          "quantization steps of the output (its last DequantizeLinear's scale; plain max|a-b| where it "
          "could not be read); * = top-1 differs")
    for model, check in checks.items():
        lead = check["reference_lead_steps"]
        cells = []
        for system in INT8_SYSTEMS:
            entries = [v for k, v in check["systems"].items() if k.startswith(system + "/")]
            if not entries:
                continue
            same = all(e["same_top1"] for e in entries)
            worst = max(entries, key=lambda e: e["max_abs"])
            size = (f"{worst['max_steps']:.1f} steps" if worst["max_steps"] is not None
                    else f"max|a-b| {worst['max_abs']:.3g}")
            cells.append(f"{SYSTEM_NAMES[system]}: top-1 {'same' if same else 'DIFFERS*'}, {size}")
        print(f"{model:<14} vs {SYSTEM_NAMES[check['reference'].split('/')[0]]} "
              f"(its top-1 leads by {fmt(lead, '.1f', '?')} steps): " + "; ".join(cells))


def print_cores_used(result):
    """Warns where a system used clearly more cores than it was given (thread setting not
    honoured) or clearly fewer than 2 when given 2 (nothing ran in parallel)."""
    for model, m in result["models"].items():
        for key, t in m["timing"].items():
            threads = int(key.split("/")[1])
            if t["cores_used"] is not None and t["cores_used"] > threads + 0.3:
                print(f"note: {model} {key} used {t['cores_used']:.2f} cores for {threads} thread(s) "
                      "(spinning workers, or the thread setting not honoured)")


# A figure below this fraction of the run's best means a slower machine. The copy bandwidth
# varies more by itself (two threads: 33-45 GB/s in quiet runs here; 25 in a slow spell).
SPELL_FRACTIONS = {"gflops": 0.85, "copy_gbs": 0.7}


def slower_figures(peak_after, best):
    """The figures of a peak measurement (per thread count) below SPELL_FRACTIONS of the best:
    "copy 13 GB/s (53% of this run's best), 1 thread(s)", ...; empty if none."""
    low = []
    for threads, p in (peak_after or {}).items():
        for key, label, unit in (("gflops", "FMA peak", "GFLOP/s"), ("copy_gbs", "copy", "GB/s")):
            if p[key] < SPELL_FRACTIONS[key] * best[threads][key]:
                low.append(f"{label} {p[key]:.0f} {unit} ({100 * p[key] / best[threads][key]:.0f}% of this "
                           f"run's best), {threads} thread(s)")
    return low


def print_machine_spells(result):
    """Warns where the FMA peak or the copy bandwidth measured right after a model's timing fell
    below SPELL_FRACTIONS of the run's best: the machine itself was slower while that model was
    timed, so its figures (every system's) are suspect."""
    for model, m in result["models"].items():
        low = slower_figures(m.get("peak_after"), result["peak"])
        if low:
            print(f"note: right after {model} was timed: {'; '.join(low)}; the machine was slower "
                  f"then: time {model} again before comparing its figures")


def print_kinds(result):
    model, kinds, peaks = result["layers"]["model"], result["layers"]["kinds"], result["peak"]
    for threads, rows in kinds.items():
        total = sum(k["us"] for k in rows)
        run_ms = latency(result, model, "aotc", int(threads))
        p = peaks[str(threads)]
        print(f"\n{model}, {threads} thread(s): aotc time by layer kind (timing hook, median per layer); "
              f"floors at {p['gflops']:.0f} GFLOP/s and {max(p['copy_gbs'], p['triad_gbs']):.1f} GB/s")
        print(f"{'kind':<28} {'layers':>6} {'ms':>8} {'share':>6} {'GFLOP/s':>8} "
              f"{'FLOP floor':>10} {'BW floor':>9} {'time/floor':>10}")
        for k in rows:
            print(f"{k['kind']:<28} {k['layers']:>6} {k['us'] / 1e3:8.2f} {100 * k['us'] / total:5.1f}% "
                  f"{k['flops'] / (k['us'] * 1e3):8.1f} {k['flop_floor_us'] / 1e3:10.2f} "
                  f"{k['bandwidth_floor_us'] / 1e3:9.2f} {fmt(k['floor_us'] and k['us'] / k['floor_us'], '9.1f', '-'):>9}x")
        floor = sum(k["floor_us"] for k in rows)
        print(f"{'total':<28} {sum(k['layers'] for k in rows):>6} {total / 1e3:8.2f} {'':>6} {'':>8} "
              f"{sum(k['flop_floor_us'] for k in rows) / 1e3:10.2f} "
              f"{sum(k['bandwidth_floor_us'] for k in rows) / 1e3:9.2f} {total / floor:9.1f}x")
        print(f"(sum of per-layer medians {total / 1e3:.2f} ms; median whole run {fmt(run_ms, '.2f')} ms "
              "without the hook)")
    plan = result["models"][model].get("plan")
    if plan:
        measured = ", ".join(f"{us / 1e3:.2f} ms on {t} thread(s)" for t, us in plan["measured_us"].items())
        print(f"\n{model}: the plan over the chain predicted {plan['predicted_us'] / 1e3:.2f} ms (one thread) for "
              f"the {plan['groups']} groups it costed; measured in the model: {measured}")


def print_fixed_cost(fixed):
    print("\naotc fixed cost (chains of tiny relu layers, 1x8x4x4):")
    for threads, f in fixed.items():
        lengths = ", ".join(f"L={length}: {us:.2f} us" for length, us in f["median_us"].items())
        # Below ~0.1 us the intercept is lost in the medians' noise (it can come out negative).
        per_run = f"{f['per_run_us']:.2f} us{' (~0)' if f['per_run_us'] < 0.1 else ''}"
        print(f"  {threads} thread(s): {per_run} per run + {f['per_layer_us']:.3f} us per layer   "
              f"(median run {lengths}; other processes used {f['background_cores']:.2f} cores)")


# ---- charts ----


def chart_model(result, model, path):
    """Latency of every system at every thread count for one model."""
    threads_list, systems = result["threads"], result["systems"]
    fig, ax = plt.subplots(figsize=(max(8, 1.6 * len(systems)), 4.5))
    width = 0.8 / len(threads_list)
    for j, threads in enumerate(threads_list):
        values = [latency(result, model, s, threads) or 0 for s in systems]
        xs = [i + (j - (len(threads_list) - 1) / 2) * width for i in range(len(systems))]
        bars = ax.bar(xs, values, width, label=f"{threads} thread{'s' if threads > 1 else ''}")
        ax.bar_label(bars, labels=[f"{v:.1f}" if v else "fail" for v in values], fontsize=8)
    ax.set_xticks(range(len(systems)), [SYSTEM_NAMES[s] for s in systems])
    ax.set_ylabel("median latency per run (ms, lower is better)")
    ax.set_title(f"{model}, batch 1, 3x224x224")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def chart_layers(model, layer_rows, kinds, path):
    """Per-layer time against the FLOP and bandwidth floors, one panel per thread count;
    bars coloured by layer kind (the kinds that take most time get their own colour)."""
    width = max(12, 0.12 * max(len(rows) for rows in layer_rows.values()))
    fig, axes = plt.subplots(len(layer_rows), 1, figsize=(width, 4.5 * len(layer_rows)), squeeze=False)
    top = [k["kind"] for k in next(iter(kinds.values()))[:7]]  # same colours in every panel
    colours = {kind: plt.cm.tab10(i) for i, kind in enumerate(top)}
    for ax, (threads, rows) in zip(axes[:, 0], layer_rows.items()):
        xs = range(len(rows))
        ax.bar(xs, [r["median_us"] for r in rows], color=[colours.get(r["ops"], "lightgrey") for r in rows])
        for kind in top:  # legend entries for the bar colours
            ax.bar([0], [0], color=colours[kind], label=f"aotc: {kind}")
        ax.step(xs, [r["flop_floor_us"] for r in rows], where="mid", color="black",
                label="FLOP floor (flops / peak)")
        ax.step(xs, [r["bandwidth_floor_us"] for r in rows], where="mid", color="magenta",
                label="bandwidth floor (bytes / DRAM GB/s)")
        ax.set_yscale("log")
        ax.set_xlim(-1, len(rows))
        ax.set_ylabel("microseconds (median, log)")
        ax.set_title(f"{model}: per layer, {threads} thread(s), in execution order")
        ax.legend(loc="upper right", fontsize=8, ncol=3)
    axes[-1, 0].set_xlabel("layer index (names in results.json)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def chart_kinds(model, kinds, path):
    """Time per layer kind against the summed floors, one panel per thread count."""
    fig, axes = plt.subplots(1, len(kinds), figsize=(7 * len(kinds), 5), squeeze=False)
    for ax, (threads, rows) in zip(axes[0], kinds.items()):
        rows = rows[:12]  # the kinds that matter; the rest are in the printed table
        ys = range(len(rows))
        h = 0.27
        ax.barh([y - h for y in ys], [k["us"] / 1e3 for k in rows], h, label="aotc")
        ax.barh(ys, [k["flop_floor_us"] / 1e3 for k in rows], h, label="FLOP floor")
        ax.barh([y + h for y in ys], [k["bandwidth_floor_us"] / 1e3 for k in rows], h,
                label="bandwidth floor")
        ax.set_yticks(list(ys), [k["kind"] for k in rows], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("ms per run (sum over layers of the kind)")
        ax.set_title(f"{model}, {threads} thread(s): by layer kind")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_charts(result, out):
    paths = []
    for model in result["models"]:
        paths.append(out / f"latency_{model}.png")
        chart_model(result, model, paths[-1])
    if result.get("layers"):
        model = result["layers"]["model"]
        paths.append(out / f"layers_{model}.png")
        chart_layers(model, result["layers"]["layers"], result["layers"]["kinds"], paths[-1])
        paths.append(out / f"kinds_{model}.png")
        chart_kinds(model, result["layers"]["kinds"], paths[-1])
    return paths


def write_json(result, path):
    path.write_text(json.dumps(result, indent=1))
