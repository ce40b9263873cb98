#!/usr/bin/env python3
"""Checks that the folders of core/ depend on each other one way.

Reads every `#include "folder/..."` in core/ and fails, naming the includes, when
- the folders' include graph has a cycle (e.g. measure/ -> search/ -> measure/),
- a folder includes one it must stay below (FORBIDDEN, BOTTOM),
- a file of core/ includes a Qt header (core/ is the engine without Qt),
- a file of core/ outside core/reference/ compares an op's name (`op == "Conv"`):
  what an op is and does belongs to the op registry (core/graph/op_registry.h)
  and the tables of library ops and converters, looked up by name;
- a file of core/, app/ or ui/ parses a target string outside core/target/ and
  the edges where targets arrive as text (TARGET_EDGES), or compares a target
  (or the kind of device a kernel runs on) with a string literal anywhere
  outside core/target/: in memory a target is a target::Target.
Usage: scripts/check-core-deps.py [CORE_DIR]   (exit 0: clean, 1: violations)
The target rule reads app/ and ui/ beside CORE_DIR.
"""
import os
import re
import sys
from collections import defaultdict

# Edges named by the design (codegen knows nothing of measuring; fusion
# partitions graphs without knowing how tasks are searched; the database
# stores rows, and tuning/ connects it to the search).
FORBIDDEN = {("codegen", "measure"), ("fusion", "search"), ("store", "search")}
# Folders at the bottom of the pipeline, with the only folders they may include:
# what a target is (target/) is read by every stage and reads none of them.
BOTTOM = {"target": set()}

# Where target strings are read: the CLI's and the agent's arguments (app/),
# the database's rows (store/), the fleet's job JSON, dataset files and
# knowledge files. The studio's target box would be one (ui/ has none yet).
TARGET_EDGES = ("app/", "core/store/", "core/fleet/job_format.cpp", "core/tuning/dataset.cpp",
                "core/knowledge/knowledge_base.cpp")
TARGET_PARSE = re.compile(r'\bparseTarget\s*\(')
# `x == "cpu"`, `"cuda -arch=sm_90" != y`, `kindName() == ...`.
TARGET_LITERAL = re.compile(r'[!=]=\s*"(cpu|cuda)\b|"(cpu|cuda)\b[^"]*"\s*[!=]=|kindName\(\)\s*[!=]=')
# Names that are not targets: the worker's seccomp profiles.
TARGET_LITERAL_ALLOWED = ("core/measure/worker_sandbox.cpp",)

INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^">]+)[">]', re.M)
OP_COMPARISON = re.compile(r'\bop\s*==\s*"')
# The oracle stays independent of the registry it checks.
OP_COMPARISONS_ALLOWED = ("reference",)


def scan(core):
    edges = defaultdict(lambda: defaultdict(list))  # folder -> folder -> ["file: include"]
    qt, comparisons = [], []
    for folder, _, files in os.walk(core):
        for name in sorted(files):
            if not name.endswith((".h", ".cpp")):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, core)
            src = rel.split(os.sep)[0]
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            if src not in OP_COMPARISONS_ALLOWED:
                for number, line in enumerate(text.splitlines(), 1):
                    if OP_COMPARISON.search(line):
                        comparisons.append(f"{rel}:{number}: {line.strip()}")
            for kind, target in INCLUDE.findall(text):
                if kind == "<" and re.match(r"Q[A-Za-z]*(/|$)", target):
                    qt.append(f"{rel}: #include <{target}>")
                parts = target.split("/")
                if kind == '"' and len(parts) > 1 and parts[0] != src and os.path.isdir(os.path.join(core, parts[0])):
                    edges[src][parts[0]].append(f"{rel}: #include \"{target}\"")
    return edges, qt, comparisons


def target_problems(root):
    """Target strings parsed off the edges, or targets compared with literals."""
    out = []
    for top in ("core", "app", "ui"):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp")):
                    continue
                rel = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
                if rel.startswith("core/target/"):
                    continue
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                    lines = f.read().splitlines()
                for number, line in enumerate(lines, 1):
                    code = line.split("//")[0]
                    if TARGET_PARSE.search(code) and not rel.startswith(TARGET_EDGES):
                        out.append(f"a target string parsed off the edges (take a target::Target): {rel}:{number}: "
                                   f"{line.strip()}")
                    if TARGET_LITERAL.search(code) and rel not in TARGET_LITERAL_ALLOWED:
                        out.append(f"a target compared with a string (compare target::Target, or its kind): "
                                   f"{rel}:{number}: {line.strip()}")
    return out


def cycles(edges):
    """Strongly connected components with more than one folder (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    nodes = set(edges) | {w for v in edges.values() for w in v}
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    core = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "core")
    edges, qt, comparisons = scan(core)
    problems = []
    for component in cycles(edges):
        problems.append("include cycle between " + ", ".join(f"{c}/" for c in component) + ":")
        for a in component:
            for b in component:
                for where in edges[a].get(b, []):
                    problems.append(f"  {a}/ -> {b}/  {where}")
    for a, b in sorted(FORBIDDEN):
        for where in edges.get(a, {}).get(b, []):
            problems.append(f"{a}/ must not include {b}/: {where}")
    for a, allowed in sorted(BOTTOM.items()):
        for b, wheres in sorted(edges.get(a, {}).items()):
            if b not in allowed:
                problems += [f"{a}/ is at the bottom and must not include {b}/: {where}" for where in wheres]
    problems += [f"core/ must not include Qt: {q}" for q in qt]
    problems += [f"an op name compared outside the op registry: {c}" for c in comparisons]
    problems += target_problems(os.path.join(core, ".."))
    if problems:
        print("\n".join(problems))
        return 1
    print(f"core/: {len(edges)} folders with includes, no cycle, no forbidden include, no Qt, "
          "no op name compared outside the registry; no target parsed off the edges or compared with a string")
    return 0


if __name__ == "__main__":
    sys.exit(main())
