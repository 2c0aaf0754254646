# lit configuration for aotc's golden IR tests (see tests/lit/README.md).
import os

import lit.formats

config.name = "aotc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".air"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = lit_config.params.get("exec_root", config.test_source_root)

aotc = lit_config.params.get("aotc")
if aotc:
    aotc = os.path.abspath(aotc)
llvm_bin = lit_config.params.get("llvm_bin", "/usr/lib/llvm-14/bin")
if not aotc:
    lit_config.fatal("run with --param aotc=PATH/TO/aotc (ctest does this)")

config.substitutions.append(("%aotc", aotc))
# GPU targets need CUDA's nvcc (tests/lit/driver/cuda-stubs.air).
if os.path.exists("/usr/local/cuda/bin/nvcc"):
    config.available_features.add("nvcc")
# FileCheck and not come from Debian's llvm-14-tools.
config.environment["PATH"] = os.pathsep.join([llvm_bin, config.environment.get("PATH", os.environ.get("PATH", ""))])
for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "AOTC_KERNEL_CACHE", "AOTC_COMPILER_LAUNCHER",
            "CCACHE_DIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
