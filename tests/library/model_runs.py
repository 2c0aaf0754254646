"""What the library test scripts share: running commands, and random inputs for a model."""

import subprocess
import sys

import numpy as np


def run(cmd):
    """Runs cmd, printing it; on failure prints the tail of its output and exits FAILED."""
    print("$ " + " ".join(str(c) for c in cmd), flush=True)
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if result.returncode != 0:
        sys.stdout.write(result.stdout[-3000:] + result.stderr[-3000:])
        raise SystemExit(f"FAILED: exit code {result.returncode}")
    return result


def random_inputs(aotc, model, workdir):
    """One standard-normal float32 file per graph input of model, fresh seed (printed); their paths."""
    graph = run([aotc, model, "--emit=graph", "--passes="]).stdout
    shapes = [[int(d) for d in line.split("f32[", 1)[1].split("]", 1)[0].split(",")]
              for line in graph.splitlines() if line.strip().startswith("input %")]
    seed = np.random.SeedSequence().entropy % 2**32
    print(f"inputs {shapes}, seed {seed}")
    rng = np.random.default_rng(seed)
    inputs = []
    for i, shape in enumerate(shapes):
        inputs.append(workdir / f"input{i}.bin")
        rng.standard_normal(shape).astype("<f4").tofile(inputs[-1])
    return inputs
