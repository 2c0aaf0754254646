#!/usr/bin/python3
"""Unpacks the Fashion-MNIST test set (t10k images and labels) of Debian's
dataset-fashion-mnist from .gz into a directory, for the samples' tests.

  unpack_fashion_mnist.py SOURCE_DIR DEST_DIR
"""

import gzip
import shutil
import sys
from pathlib import Path


def main():
    source, dest = Path(sys.argv[1]), Path(sys.argv[2])
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        packed = source / f"{name}.gz"
        if not packed.exists():
            print(f"{packed} is missing (apt-get install dataset-fashion-mnist)")
            return 1
        with gzip.open(packed, "rb") as src, open(dest / name, "wb") as dst:
            shutil.copyfileobj(src, dst)
        print(f"{packed} -> {dest / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
