#!/usr/bin/env python3
"""Checks that the folders of core/ depend on each other one way.

Reads every `#include "folder/..."` in core/ and fails, naming the includes, when
- the folders' include graph has a cycle (e.g. measure/ -> search/ -> measure/),
- a folder includes one it must stay below (FORBIDDEN, BOTTOM),
- a file of core/ includes a Qt header (core/ is the engine without Qt),
- a file of core/ outside core/reference/ compares an op's name (`op == "Conv"`):
  what an op is and does belongs to the op registry (core/graph/op_registry.h)
  and the tables of library ops and converters, looked up by name.
Usage: scripts/check-core-deps.py [CORE_DIR]   (exit 0: clean, 1: violations)
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
    if problems:
        print("\n".join(problems))
        return 1
    print(f"core/: {len(edges)} folders with includes, no cycle, no forbidden include, no Qt, "
          "no op name compared outside the registry")
    return 0


if __name__ == "__main__":
    sys.exit(main())
