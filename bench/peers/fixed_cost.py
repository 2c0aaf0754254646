"""The fixed cost of an aotc library: per run and per layer, independent of the model.

Two synthetic models, chains of L tiny relu layers on a 1x8x4x4 tensor (128 floats: the
work is nanoseconds), compiled with only shape inference (the default pipeline would fold
relu(relu(x)) into one node), timed like the real models. The median run time is linear
in L: t(L) = per_run + L * per_layer, so two chain lengths give both terms.
"""


import numpy as np

import artifacts
import servers

SHAPE = "f32[1,8,4,4]"


def chain_air(name, layers):
    lines = [f"graph {name} {{", f"  input %x0: {SHAPE}"]
    lines += [f"  %x{i} = relu(%x{i - 1}): {SHAPE}" for i in range(1, layers + 1)]
    lines += [f"  output %x{layers}", "}"]
    return "\n".join(lines) + "\n"


def build_chain(aotc, work, layers):
    name = f"chain{layers}"
    folder = work / "fixed_cost" / name
    folder.mkdir(parents=True, exist_ok=True)
    air = folder / f"{name}.air"
    text = chain_air(name, layers)
    if not air.exists() or air.read_text() != text:
        air.write_text(text)
    np.linspace(-1, 1, 128, dtype="<f4").tofile(folder / "input.bin")
    artifacts.compile_library(aotc, air, folder, extra=["--passes=infer-shapes"])
    return folder


def measure(aotc, work, lengths, threads_list, runs, repeats):
    """Returns {"threads": {"per_run_us", "per_layer_us", "median_us": {"L": us}}}."""
    folders = {length: build_chain(aotc, work, length) for length in lengths}
    chain = {}
    for length, folder in folders.items():
        for threads in threads_list:
            argv = [str(folder / "aotc_server"), str(folder / "input.bin")]
            chain[(length, threads)] = servers.Server(f"chain{length}/{threads}", argv,
                                                      folder / f"server.{threads}.log")
    try:
        for (length, threads), server in chain.items():
            server.ask(f"threads {threads}")
        errors = servers.warm_up(chain, 100)
        if errors:
            raise servers.ServerError(f"fixed-cost servers failed: {errors}")
        timing, background = servers.interleaved(chain, runs, max(1, runs // 4), 0.01, repeats)
    finally:
        servers.close_servers(chain)

    short, long_ = min(lengths), max(lengths)
    result = {}
    for threads in threads_list:
        us = {length: timing[(length, threads)]["best_median_ms"] * 1e3 for length in lengths}
        per_layer = (us[long_] - us[short]) / (long_ - short)
        result[str(threads)] = {"per_run_us": us[short] - per_layer * short, "per_layer_us": per_layer,
                                "median_us": {str(length): t for length, t in us.items()},
                                "background_cores": background}
    return result
