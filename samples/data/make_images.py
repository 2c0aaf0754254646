#!/usr/bin/python3
"""Writes the first Fashion-MNIST test image of each class as a PNG into this folder,
named <index>_<label>.png (the index in the 10,000-image test set), for the demo
(tools/run-demo.sh) and for trying the samples. Needs dataset-fashion-mnist.

  samples/data/make_images.py [DATASET_DIR]
"""

import gzip
import struct
import sys
import zlib
from pathlib import Path

LABELS = ["t-shirt-top", "trouser", "pullover", "dress", "coat",
          "sandal", "shirt", "sneaker", "bag", "ankle-boot"]


def png_grey(pixels, width, height):
    """An 8-bit greyscale PNG (no dependency beyond zlib)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + pixels[y * width:(y + 1) * width] for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def main():
    dataset = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/datasets/fashion-mnist")
    images = gzip.open(dataset / "t10k-images-idx3-ubyte.gz").read()[16:]
    labels = gzip.open(dataset / "t10k-labels-idx1-ubyte.gz").read()[8:]
    out = Path(__file__).resolve().parent
    for label, name in enumerate(LABELS):
        index = labels.index(label)
        (out / f"{index:04d}_{name}.png").write_bytes(png_grey(images[index * 784:(index + 1) * 784], 28, 28))


if __name__ == "__main__":
    main()
