#!/usr/bin/env python3
"""The README and docs say only what is true of this tree.

  check_docs.py references --repo DIR --aotc AOTC --build DIR
      In README.md, docs/*.md and every folder's README.md: each repository path a code
      span or block names exists; each relative link resolves; each option given to aotc,
      tools/aotc-export-torch, tools/aotc-fuzz or bench/peers/run-bench is one its --help
      lists; each --preset is in CMakePresets.json; each `ctest -R/-L` selector matches a
      test of the build tree.
  check_docs.py example --repo DIR --aotc AOTC --workdir DIR
      Runs the README's example as written: its shell block, with app.cpp and app.c from
      the blocks below it, in a fresh folder where build/release/compiler/aotc is the aotc
      under test. Both apps must print "ok".

Exit 0 when everything holds, 1 with one line per problem otherwise.
"""
import argparse
import functools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

TOP_FOLDERS = ("compiler", "generators", "sdk", "schemas", "samples", "tests", "tools", "bench", "docs", "cmake",
               ".ci")
# Commands whose options the docs name, by how the docs call them; the value is the path to run.
COMMANDS = {
    "aotc": None,  # the binary under test, --aotc
    "tools/aotc-export-torch": "tools/aotc-export-torch",
    "tools/aotc-fuzz": "tools/aotc-fuzz",
    "bench/peers/run-bench": "bench/peers/run-bench",
}
FENCE = re.compile(r"^```")


def markdown_files(repo):
    files = [repo / "README.md"] + sorted((repo / "docs").glob("*.md"))
    for folder in TOP_FOLDERS:
        files += sorted(p for p in (repo / folder).rglob("README.md") if "Output" not in p.parts)
    return [f for f in files if f.is_file()]


def code_lines(text):
    """Lines of fenced and indented code blocks, and inline code spans, with line numbers."""
    out = []
    in_fence = False
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if FENCE.match(line.strip()):
            in_fence = not in_fence
            continue
        if in_fence or (line.startswith("    ") and line.strip() and not line.lstrip().startswith(("-", "|"))):
            out.append((number, line.strip()))
            continue
        for span in re.findall(r"`([^`]+)`", line):
            out.append((number, span))
    return out


def path_tokens(line):
    for token in re.split(r"[\s,;()'\"=<>\[\]]+", line):
        token = token.strip(".:`*")
        token = token.removeprefix("./")
        if not token.startswith(tuple(f + "/" for f in TOP_FOLDERS)):
            continue
        if re.search(r"[*{}$%]|\bNAME\b|\bMODEL\b|\.\.\.", token) or re.search(r"/[A-Z][A-Z_]+(/|$|\.)", token):
            continue  # a pattern or a placeholder, not a path
        yield token.rstrip("/")


@functools.lru_cache(maxsize=None)
def help_options(command):
    result = subprocess.run([command, "--help"], capture_output=True, text=True, timeout=300)
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", result.stdout + result.stderr))


def command_options(line, commands):
    """(command, option) for each option the line passes to a known command."""
    words = line.split()
    current = None
    for i, word in enumerate(words):
        if i and words[i - 1].startswith("--") and "=" not in words[i - 1]:
            continue  # an option's value (--aotc build/release/compiler/aotc), not a command
        if word in ("aotc", "$aotc") or word.endswith("/aotc"):
            current = "aotc"
            continue
        if word in commands:
            current = word
            continue
        if word in ("|", "&&", ";", "||") or word.startswith(("c++", "cc", "cmake", "ctest")):
            current = None
            continue
        if current and word.startswith("--"):
            yield current, word.split("=")[0]


def check_references(args):
    repo = Path(args.repo).resolve()
    problems = []
    commands = {name: (args.aotc if path is None else str(repo / path)) for name, path in COMMANDS.items()}
    presets = json.loads((repo / "CMakePresets.json").read_text())
    preset_names = {p["name"] for kind in ("configurePresets", "buildPresets", "testPresets", "workflowPresets")
                    for p in presets.get(kind, [])}
    tests = json.loads(subprocess.run(["ctest", "--show-only=json-v1"], cwd=args.build, capture_output=True,
                                      text=True, check=True).stdout)["tests"]
    test_names = [t["name"] for t in tests]
    labels = set()
    for t in tests:
        for prop in t.get("properties", []):
            if prop["name"] == "LABELS":
                labels.update(prop["value"])
    checked = 0
    files = markdown_files(repo)
    for md in files:
        text = md.read_text()
        where = md.relative_to(repo)
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            checked += 1
            if not (md.parent / target).exists():
                problems.append(f"{where}: link to {target}, which does not exist")
        for number, line in code_lines(text):
            for token in path_tokens(line):
                checked += 1
                if not (repo / token).exists():
                    problems.append(f"{where}:{number}: names {token}, which does not exist")
            for command, option in command_options(line, commands):
                checked += 1
                if option not in help_options(commands[command]):
                    problems.append(f"{where}:{number}: {command} {option}: not an option of {command} (its --help)")
            for preset in re.findall(r"--preset[ =]([A-Za-z0-9_-]+)", line):
                checked += 1
                if preset not in preset_names:
                    problems.append(f"{where}:{number}: --preset {preset}: not in CMakePresets.json")
            if not line.startswith("ctest") and " ctest " not in f" {line} ":
                continue
            for flag, selector in re.findall(r"(-[RL]|-LE)\s+('[^']+'|\S+)", line):
                selector = selector.strip("'")
                checked += 1
                try:
                    pattern = re.compile(selector)
                except re.error:
                    problems.append(f"{where}:{number}: ctest {flag} {selector}: not a regular expression")
                    continue
                pool = test_names if flag == "-R" else labels
                if not any(pattern.search(name) for name in pool):
                    problems.append(f"{where}:{number}: ctest {flag} {selector} selects no test of {args.build}")
    for p in problems:
        print(p)
    print(f"{checked} references checked in {len(files)} files, {len(problems)} wrong")
    return 1 if problems else 0


def readme_block(text, start):
    """The fenced block of README.md whose first line starts with `start`."""
    match = re.search(r"^```[a-z+]*\n(" + re.escape(start) + r".*?)^```", text, re.M | re.S)
    if not match:
        raise SystemExit(f"README.md has no code block starting with {start!r}")
    return match.group(1)


def run_example(args):
    repo = Path(args.repo).resolve()
    text = (repo / "README.md").read_text()
    shell = readme_block(text, "aotc=build/release/compiler/aotc")
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    (work / "build/release/compiler").mkdir(parents=True)
    os.symlink(os.path.abspath(args.aotc), work / "build/release/compiler/aotc")
    os.symlink(repo / "samples", work / "samples")
    (work / "app.cpp").write_text(readme_block(text, "// app.cpp"))
    (work / "app.c").write_text(readme_block(text, "/* app.c */"))
    print(shell)
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", shell], cwd=work, capture_output=True, text=True)
    print(result.stdout + result.stderr)
    lines = [l for l in result.stdout.splitlines() if l.startswith("ok,")]
    if result.returncode != 0 or len(lines) != 2:
        print(f"FAIL: the README's example exited {result.returncode} and printed {len(lines)} 'ok' lines of 2")
        return 1
    print("the README's example ran as written")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("case", choices=["references", "example"])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--aotc", required=True)
    parser.add_argument("--build")
    parser.add_argument("--workdir")
    args = parser.parse_args()
    return check_references(args) if args.case == "references" else run_example(args)


if __name__ == "__main__":
    sys.exit(main())
