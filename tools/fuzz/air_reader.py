"""Reads .air files as tools/fuzz/graph_gen.py prints them (one statement per
line) back into its graph model, for `aotc-fuzz --check` and for shrinking
regression graphs. aotc's own parser (compiler/ir/parser.cpp) reads the full
language; this reads the printed subset and fails loudly on anything else."""
import re
from pathlib import Path

import graph_gen

TYPE = r"(?P<dtype>f32|i8|u8|i32)\[(?P<shape>[^\]]*)\](?P<quant>\{[^}]*\})?"
NODE = re.compile(r"^%(?P<out>\S+) = (?P<op>\w+)\((?P<ins>[^)]*)\)(?: (?P<attrs>\{[^}]*\}))?"
                  r"(?: epilogue\[(?P<epi>.*)\])?: " + TYPE + "$")
CONST = re.compile(r"^const %(?P<name>\S+): " + TYPE + " = "
                   r"(?:(?P<fn>random|splat)\((?P<arg>[^)]+)\)|\[(?P<values>.*)\])$")
INPUT = re.compile(r"^input %(?P<name>\S+): " + TYPE + "$")


def shape_of(text):
    return [int(d) for d in text.split(",")] if text else []


def names(text):
    return [t.strip()[1:] for t in text.split(",") if t.strip()]


def split_top_level(text):
    """Splits at commas outside (), [] and {}."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def post_op(text):
    """'add(%a)' -> ('add', ['a']); 'clamp{min=0, max=6}' -> ('clamp{min=0, max=6}', [])."""
    if text.endswith(")") and "(" in text:
        head, operands = text[:text.index("(")], text[text.index("(") + 1:-1]
        return head, names(operands)
    return text, []


def read(path):
    text = Path(path).read_text()
    graph = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("//")[0].strip()
        if not line or line == "}":
            continue
        if line.startswith("graph "):
            graph = graph_gen.Graph(line.split()[1])
        elif m := INPUT.match(line):
            graph.inputs.append(graph.add(graph_gen.Tensor(m["name"], shape_of(m["shape"]), None, m["dtype"],
                                                           m["quant"] or "")))
        elif m := CONST.match(line):
            values = (m["fn"], m["arg"]) if m["fn"] else [float(v) for v in m["values"].split(",")]
            graph.add(graph_gen.Tensor(m["name"], shape_of(m["shape"]), values, m["dtype"], m["quant"] or ""))
        elif line.startswith("output %"):
            graph.outputs.append(line[len("output %"):])
        elif m := NODE.match(line):
            graph.add(graph_gen.Tensor(m["out"], shape_of(m["shape"]), None, m["dtype"], m["quant"] or ""))
            epilogue = [post_op(p) for p in split_top_level(m["epi"])] if m["epi"] else []
            graph.nodes.append(graph_gen.Node(m["op"], names(m["ins"]), m["out"], m["attrs"] or "", epilogue))
        else:
            raise ValueError(f"{path}:{number}: not a statement aotc-fuzz reads: {raw}")
    if graph is None:
        raise ValueError(f"{path}: no graph")
    return graph


def recorded_target(path):
    """The target in an aotc-fuzz failure header ('// aotc-fuzz: ..., target T'), or None."""
    m = re.search(r"^// aotc-fuzz: .*target (\S+)$", Path(path).read_text(), re.MULTILINE)
    return m[1] if m else None
