"""The kernel bench's printed table (the JSON holds everything the table shows and more)."""


OPS = {"conv2d", "conv_transpose2d", "transpose", "resize", "pool2d"}


def short_schedule(schedule):
    """'conv2d vectorize-width: tile ...' -> 'vectorize-width' (the schedule's name without
    the op's); the full text is listed below the table."""
    head = schedule.split(":", 1)[0].strip()
    words = head.split(" ", 1)
    return words[1] if len(words) == 2 and words[0] in OPS else head


def fmt_us(us):
    return f"{us:.0f}" if us >= 100 else f"{us:.1f}" if us >= 10 else f"{us:.2f}"


def fmt_rate(r):
    unit = "GF/s" if r["unit"] == "GFLOP/s" else "GB/s"
    return f"{r['rate']:.1f} {unit}"


def fmt_fraction(r):
    level = r["ceiling_name"].replace("FMA peak", "").replace("copy ", "")
    mark = " !" if r["fraction"] > 1.0 else ""
    return f"{100 * r['fraction']:.0f}%{(' ' + level) if level else ''}{mark}"


def render(result):
    threads = [str(t) for t in result["threads"]]
    first = threads[0]
    headers = ["case", "schedule"]
    headers += [f"{t}t us" for t in threads] + [f"{t}t run us" for t in threads]
    for t in threads:
        headers += [f"{t}t rate", f"{t}t %peak"]
    headers += [f"{first}t/{t}t" for t in threads[1:]]
    headers += [f"cpu {t}t" for t in threads] + ["bg", "max|diff|/scale"]
    rows = []
    for row in result["cases"]:
        if "threads" not in row or "rate" not in row["threads"][first]:
            rows.append([row["case"], "-"] + ["-"] * (len(headers) - 3) + [row.get("error", "failed")[:40]])
            continue
        th = row["threads"]
        line = [row["case"], short_schedule(row["schedule"])]
        line += [fmt_us(th[t]["hook_us"]["best_median"]) for t in threads]
        line += [fmt_us(th[t]["run_us"]["best_median"]) for t in threads]
        for t in threads:
            line += [fmt_rate(th[t]), fmt_fraction(th[t])]
        line += [f"{th[t]['speedup']:.2f}" for t in threads[1:]]
        line += [f"{th[t]['cores_used']:.2f}" if th[t]["cores_used"] is not None else "-" for t in threads]
        line += [f"{row['background_cores']:.2f}"]
        check = row["check"]
        line += [f"{check['worst_relative']:.1e} {'ok' if check['ok'] else 'FAIL'}"]
        rows.append(line)

    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def fmt(cells):
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    peak = result["peak"]
    out = [f"{result['command']}   ({result['date']}, {result['rounds']} rounds x {result['seconds']} s, "
           f"{result['machine']['cpu']}, "
           f"{result['machine']['cores']} cores, load average {result['load_average_start'][0]:.2f} at the "
           f"start, {result['load_average_end'][0]:.2f} at the end)"]
    if "aotc" in result:
        a = result["aotc"]
        modified = f", modified: {' '.join(a['git_modified'])}" if a["git_modified"] else ""
        out.append(f"aotc {a['sha256']} built {a['mtime']}, checkout {a['git_head']}{modified}")
    for t in threads:
        p = peak[t]
        out.append(f"peak, {t} thread{'s' if t != '1' else ''} (this run, best of {len(result['peak_measurements'])}): "
                   f"FMA {p['gflops']:.1f} GFLOP/s ({p['isa']}); copy DRAM {p['copy_gbs']:.1f} GB/s"
                   + (f", L2 {p['copy_l2_gbs']:.1f}, L3 {p['copy_l3_gbs']:.1f} GB/s" if "copy_l2_gbs" in p else ""))
    out += ["", fmt(headers), fmt(["-" * w for w in widths])]
    out += [fmt(r) for r in rows]
    out += ["",
            "us: kernel time from the library's per-layer timing hook; run us: time of the whole run",
            "(aotc_<model>_run_with_context); each the best over the rounds of the round's median.",
            "rate: 2 x multiply-adds (compute) or bytes read + written",
            "(data) over the hook time. %peak: rate over the FMA peak measured in this run at that thread",
            "count (compute), or over the copy bandwidth measured over a footprint at the level where the",
            "kernel's data stay (L2, L3 or DRAM; data cases); '!' marks a figure above its ceiling.",
            f"{first}t/Nt: speedup. cpu: cores the server used while timed (CPU time / wall time). bg: cores",
            "other processes kept busy meanwhile. max|diff|/scale: worst over thread counts of",
            "max|out - ref| / max(1, max|ref|) against the reference evaluator.",
            "", "schedules (aotc's report):"]
    for row in result["cases"]:
        if "schedule" in row:
            out.append(f"  {row['case']}: {row['schedule']}")
    notes = []
    bg = [m["background_cores"] for m in result["peak_measurements"]]
    out.insert(len(threads) + 2 if "aotc" in result else len(threads) + 1,
               f"peak measured before the first round and after each: other processes kept "
               f"{min(bg):.2f}-{max(bg):.2f} cores busy meanwhile")
    if len(threads) > 1:
        for t in threads[1:]:
            if peak[t]["gflops"] < 0.85 * int(t) * peak[first]["gflops"]:
                notes.append(f"the {t}-thread FMA peak is only {peak[t]['gflops'] / peak[first]['gflops']:.2f}x "
                             f"the {first}-thread one: the machine was busy whenever it was measured, and "
                             f"{t}-thread fractions are not meaningful")
    for row in result["cases"]:
        if "threads" not in row:
            continue
        if row.get("flop_count_matches_report") is False:
            notes.append(f"{row['case']}: FLOP count {row['flops']:.4g} disagrees with the report's "
                         f"{row['report_flops']:.4g} (less the epilogue)")
        if len(row.get("layers_timed", [])) != 1:
            notes.append(f"{row['case']}: the library runs {len(row['layers_timed'])} layers "
                         f"({', '.join(row['layers_timed'])}); their times are summed")
        for t in threads:
            r = row["threads"][t]
            if r.get("cores_used") is not None and r["cores_used"] > int(t) + 0.3:
                notes.append(f"{row['case']}: the {t}-thread server used {r['cores_used']:.2f} cores")
            if r.get("fraction", 0) > 1.0:
                notes.append(f"{row['case']}: {t} thread(s) above its ceiling ({r['ceiling_name']}): "
                             f"{'a miscount or mistiming' if r['unit'] == 'GFLOP/s' else 'data in a faster level than assumed'}")
    if notes:
        out += ["", "notes:"] + [f"  {n}" for n in notes]
    return "\n".join(out)


def markdown(result):
    """Two Markdown tables (compute cases, data cases): the form of generators/README.md's
    "Measured" section."""
    threads = [str(t) for t in result["threads"]]
    first = threads[0]
    out = []
    for kind, unit, ceiling in (("compute", "GFLOP/s", "% of FMA peak"), ("data", "GB/s", "% of copy (level)")):
        rows = [r for r in result["cases"] if r["kind"] == kind and "rate" in r.get("threads", {}).get(first, {})]
        if not rows:
            continue
        head = ["case", "schedule"] + [f"{t} thr µs" for t in threads]
        for t in threads:
            head += [f"{t} thr {unit}", f"{t} thr {ceiling}"]
        head += [f"{first}→{t} thr speedup" for t in threads[1:]] + ["max\\|diff\\|/scale"]
        out += ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
        for r in rows:
            th = r["threads"]
            cells = [r["case"], short_schedule(r["schedule"])]
            cells += [fmt_us(th[t]["hook_us"]["best_median"]) for t in threads]
            for t in threads:
                level = th[t]["ceiling_name"].replace("FMA peak", "").replace("copy ", "")
                cells += [f"{th[t]['rate']:.1f}", f"{100 * th[t]['fraction']:.0f}%" + (f" {level}" if level else "")]
            cells += [f"{th[t]['speedup']:.2f}" for t in threads[1:]]
            cells += [f"{r['check']['worst_relative']:.0e}" + ("" if r["check"]["ok"] else " FAIL")]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)
