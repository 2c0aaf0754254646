#!/usr/bin/python3
"""The benchmark's torchvision models, built the way tools/aotc-export-torch builds them.

Two uses:
  * imported by prepare.py and torch_server.py: build(name), reinitialised(name, seed) and
    quantized(model, seed);
  * given to the exporter as `--module models.py:<name>`: every model name is also a
    module-level function that builds the bare model, whose weights the exporter then
    loads from the --state-dict that prepare.py saved. So aotc, ONNX Runtime and PyTorch
    all run exactly the same weights (one tensor file), not two runs of the same seed.
"""

import copy
import functools
import importlib.machinery
import importlib.util
from pathlib import Path

import torch

MODELS = ["resnet18", "squeezenet1_1", "mobilenet_v2", "alexnet", "googlenet", "densenet121",
          "resnet50"]
INPUT_SHAPE = [1, 3, 224, 224]
QUANTIZED_ENGINE = "onednn"  # PyTorch's x86 int8 backend: per-channel weights
CALIBRATION_RUNS = 8  # random inputs the int8 model's observers see

ROOT = Path(__file__).resolve().parent.parent.parent
EXPORTER = ROOT / "tools" / "aotc-export-torch"


def load_exporter():
    """tools/aotc-export-torch as a Python module (the file has no .py suffix)."""
    loader = importlib.machinery.SourceFileLoader("aotc_export_torch", str(EXPORTER))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


exporter = load_exporter()


def build(name):
    """The torchvision model with its own (unused) init, in eval mode."""
    model = exporter.build_torchvision_model(name)
    return model.eval()


def reinitialised(name, seed):
    """The model with the exporter's weights for `seed` (He-normal, measured BatchNorm
    statistics), exactly the steps of exporter.export(), and the input it would draw."""
    torch.manual_seed(seed)
    model = build(name)
    generator = torch.Generator().manual_seed(seed)
    exporter.reinitialise(model, generator)
    exporter.calibrate_batch_norm(model, torch.randn(INPUT_SHAPE, generator=generator))
    x = torch.randn(INPUT_SHAPE, generator=generator)
    return model, x


def load(name, state_dict_path):
    """The model with weights saved by prepare.py."""
    model = build(name)
    model.load_state_dict(torch.load(state_dict_path, map_location="cpu"))
    return model


def quantized(model, seed):
    """A copy of the float `model` quantized by PyTorch FX (the exporter's quantize_fx),
    calibrated on CALIBRATION_RUNS random inputs drawn from `seed`: the model MODEL.int8.onnx
    is exported from, and the one eager-int8 runs (the same steps give the same model)."""
    generator = torch.Generator().manual_seed(seed)
    calibration = [torch.randn(INPUT_SHAPE, generator=generator) for _ in range(CALIBRATION_RUNS)]
    return exporter.quantize_fx(copy.deepcopy(model), calibration, QUANTIZED_ENGINE)


# For `aotc-export-torch --module models.py:<name>`: one constructor per model name.
for _name in MODELS:
    globals()[_name] = functools.partial(build, _name)
