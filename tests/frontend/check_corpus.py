#!/usr/bin/python3
"""Runs `aotc FILE --emit=graph` on one corpus model and checks how it ends.

    check_corpus.py --aotc AOTC --expectations corpus/expectations.tsv corpus/valid/X.fb
        X must load: exit 0, the graph text on stdout, nothing on stderr.
    check_corpus.py --aotc AOTC --expectations corpus/expectations.tsv corpus/invalid/X.fb
        X must fail as expectations.tsv says: that exit code (never a signal or a
        sanitizer report), one line on stderr naming the file and containing the
        listed fragment, nothing on stdout.
    check_corpus.py --expectations corpus/expectations.tsv --listing corpus/invalid
        every invalid model has an expectation, and every expectation a model.
"""

import argparse
import subprocess
import sys
from pathlib import Path


def read_expectations(path):
    expectations = {}
    for line in Path(path).read_text().splitlines():
        if line and not line.startswith("#"):
            name, code, fragment = line.split("\t")
            expectations[name] = (int(code), fragment)
    return expectations


def check_listing(expectations, directory):
    files = {p.name for p in Path(directory).iterdir() if p.suffix in (".fb", ".tflite", ".onnx")}
    problems = [f"{name}: in the corpus but not in the expectations" for name in sorted(files - set(expectations))]
    problems += [f"{name}: expected but missing from the corpus" for name in sorted(set(expectations) - files)]
    return problems


def check_model(aotc, expectations, model):
    run = subprocess.run([aotc, str(model), "--emit=graph"], capture_output=True, text=True, errors="replace",
                         timeout=120)
    stdout, stderr, code = run.stdout, run.stderr, run.returncode
    problems = []
    if code < 0 or code >= 128:
        problems.append(f"killed by a signal or crashed (exit status {code})")
    if "Sanitizer" in stderr or "runtime error:" in stderr:
        problems.append("a sanitizer reported an error")
    if model.parent.name == "valid":
        if code != 0:
            problems.append(f"exit code {code}, expected 0")
        if not stdout.startswith(f"graph {model.stem} {{"):
            problems.append("stdout does not start with the graph text")
        if stderr:
            problems.append("unexpected output on stderr")
    else:
        if model.name not in expectations:
            return [f"no expectation listed for {model.name}"]
        want_code, fragment = expectations[model.name]
        if code != want_code:
            problems.append(f"exit code {code}, expected {want_code}")
        if stdout:
            problems.append("a failed load wrote to stdout")
        lines = stderr.splitlines()
        if len(lines) != 1:
            problems.append(f"expected a one-line message on stderr, got {len(lines)} lines")
        if str(model) not in stderr:
            problems.append("the message does not name the file")
        if fragment not in stderr:
            problems.append(f"the message lacks: {fragment}")
    if problems:
        problems.append(f"stderr was:\n{stderr}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--aotc")
    parser.add_argument("--expectations", required=True)
    parser.add_argument("--listing", metavar="DIR")
    parser.add_argument("model", nargs="?", type=Path)
    args = parser.parse_args()
    expectations = read_expectations(args.expectations)
    if args.listing:
        problems = check_listing(expectations, args.listing)
    elif args.aotc and args.model:
        problems = check_model(args.aotc, expectations, args.model)
    else:
        parser.error("give --listing DIR, or --aotc and a model")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
