#!/usr/bin/python3
"""Tests of the camera_classify sample as a user runs it.

  camera_classify_test.py video CAMERA_CLASSIFY MAKE_TEST_VIDEO DATASET_DIR PREDICTIONS.bin
      writes the first 200 test images as an MJPEG video, runs camera_classify --video on
      it and checks the frame count and the printed labels against the true labels and
      PyTorch's predictions, allowing for the codec's loss.
  camera_classify_test.py errors CAMERA_CLASSIFY
      missing or unreadable sources and bad arguments: the exit status and the message.
"""

import re
import sys
import tempfile
from pathlib import Path

from sample_checks import check, common_errors_test, expect, finish, run

FRAMES = 200
# "[12]: Trouser 0.982 | Dress 0.010 | model 0.120 ms, total 0.300 ms" (labels may hold spaces)
FRAME_LINE = re.compile(r"^\[(\d+)\]: (.+?) (\d\.\d{3}) \|")


def video_test(camera_classify, make_test_video, dataset, predictions_file):
    labels = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
              "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
    truth = list((Path(dataset) / "t10k-labels-idx1-ubyte").read_bytes()[8:8 + FRAMES])
    pytorch = list(Path(predictions_file).read_bytes()[:FRAMES])

    with tempfile.TemporaryDirectory() as tmp:
        video = Path(tmp) / "fashion.avi"
        made = run([make_test_video, dataset, FRAMES, video])
        check(made.returncode == 0, f"make_test_video wrote {video.name} {made.stderr.strip()}")
        result = run([camera_classify, "--video", video, "--top-k", 1])
    check(result.returncode == 0, f"camera_classify --video exits 0 (got {result.returncode}) {result.stderr.strip()}")
    printed = [FRAME_LINE.match(line) for line in result.stdout.splitlines()]
    printed = [m for m in printed if m]
    check(len(printed) == FRAMES, f"{len(printed)} frames printed, {FRAMES} written")
    check([int(m.group(1)) for m in printed] == list(range(len(printed))), "frames numbered 0, 1, ... in order")
    check(re.search(rf"^{FRAMES} frames in [\d.]+ s: [\d.]+ FPS", result.stdout, re.M) is not None,
          "the summary line counts the frames and gives the FPS")

    names = [m.group(2) for m in printed]
    unknown = sorted(set(names) - set(labels))
    check(not unknown, f"every printed label is a Fashion-MNIST label {unknown}")
    n = min(len(names), FRAMES)
    agree_pytorch = sum(names[i] == labels[pytorch[i]] for i in range(n))
    agree_truth = sum(names[i] == labels[truth[i]] for i in range(n))
    pytorch_correct = sum(p == t for p, t in zip(pytorch, truth))
    print(f"video: {agree_pytorch}/{FRAMES} agree with PyTorch on the original images, {agree_truth}/{FRAMES} "
          f"with the true labels (PyTorch itself: {pytorch_correct}/{FRAMES})")
    # MJPEG at OpenCV's quality 95 of 4x-upscaled frames changes few pixels by more than
    # a few grey levels: allow 10% of the labels to change.
    check(agree_pytorch >= 0.9 * FRAMES, "at least 90% of the labels equal PyTorch's")
    check(agree_truth >= pytorch_correct - 0.05 * FRAMES, "accuracy on the video within 5 points of PyTorch's")


def errors_test(camera_classify):
    common_errors_test(camera_classify, "camera_classify")
    # Unlike face_detect, a camera is a device path only: no number for /dev/videoN.
    expect(camera_classify, ["--camera", "987"], 2, "no such camera 987$")
    expect(camera_classify, ["--video", "a.avi", "--top-k", "0"], 1, "--top-k wants a whole number >= 1")


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "video" and len(sys.argv) == 6:
        video_test(*sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "errors":
        errors_test(sys.argv[2])
    else:
        sys.exit(__doc__)
    finish()


if __name__ == "__main__":
    main()
