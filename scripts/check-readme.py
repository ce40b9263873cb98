#!/usr/bin/env python3
"""Checks the README and the guide's command pages against the build: every
command of their shell blocks runs a program that exists (build/bin/...,
scripts/..., or a command the set-up installs), each `tessel` command exists,
and every --option a line passes is one that program's --help (or its
command's) lists; and every link to a file of the repository (and to a heading
of a Markdown file) leads somewhere, in those pages and the rest of docs/. It runs nothing else, so it is quick;
CTest runs it as `readme_commands`.

    check-readme.py --bin BUILD/bin [FILE.md ...]   (default: README.md docs/cli.md docs/studio.md)

Exit 1 with a line per problem (file and line, what is wrong).
"""
import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def blocks(text):
    """(line number, command) for each line of each ```sh block."""
    out, inside, start = [], False, 0
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            inside = not inside and line.strip() in ("```sh", "```bash")
            continue
        if inside and line.strip() and not line.lstrip().startswith("#"):
            out.append((n, re.split(r"\s#\s", line, maxsplit=1)[0].strip()))
    return out


def help_text(cmd, cache={}):
    key = tuple(cmd)
    if key not in cache:
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
        p = subprocess.run(cmd + ["--help"], capture_output=True, text=True, timeout=60, env=env)
        cache[key] = (p.returncode, p.stdout + p.stderr)
    return cache[key]


def check(words, bindir):
    """Problems of one command line (a list of words)."""
    if words[:2] == ["xvfb-run", "-a"]:
        if not shutil.which("xvfb-run"):
            return ["xvfb-run is not installed (scripts/setup.sh installs xvfb)"]
        words = words[2:]
    prog = words[0]
    if prog.startswith("build/bin/"):
        path = os.path.join(bindir, prog[len("build/bin/"):])
    elif prog.startswith("scripts/"):
        path = os.path.join(ROOT, prog)
    else:
        return [] if shutil.which(prog) else [f"'{prog}' is not a command here, nor built or installed by the set-up"]
    if not os.access(path, os.X_OK):
        return [f"{prog} does not exist or is not executable"]
    if prog.startswith("scripts/"):
        return []  # the scripts' own options are checked by their tests
    cmd = [path]
    # tessel's commands, and the two-word ones (db stats, knowledge build, fleet status)
    rest = [w for w in words[1:] if not w.startswith("-")]
    if os.path.basename(path) == "tessel" and rest:
        code, _ = help_text([path, rest[0]])
        if code != 0:
            return [f"'tessel {rest[0]}' is not a command"]
        cmd.append(rest[0])
        if len(rest) > 1 and help_text([path, rest[0], rest[1]])[0] == 0 and rest[0] in ("db", "knowledge", "fleet"):
            cmd.append(rest[1])
    code, text = help_text(cmd)
    if code != 0:
        return [f"'{' '.join([prog] + cmd[1:])} --help' failed: {text.strip()[:200]}"]
    problems = []
    for w in words[1:]:
        opt = re.match(r"\[?(--[a-z][a-z0-9-]*)", w)
        if opt and opt.group(1) != "--help" and opt.group(1) not in text:
            problems.append(f"{opt.group(1)} is not an option of {' '.join([prog] + cmd[1:])}")
    return problems


def slug(heading):
    """A heading's anchor, as GitHub makes it."""
    return re.sub(r"[^a-z0-9 _-]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path):
    text = open(path, encoding="utf-8").read()
    return {slug(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}


def broken_links(path):
    """(line, link, why) for each link to a missing file or heading."""
    out = []
    for n, line in enumerate(open(path, encoding="utf-8").read().splitlines(), 1):
        for link in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z]+:", link):
                continue  # http:, mailto:
            target, _, anchor = link.partition("#")
            file = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else path
            if not os.path.exists(file):
                out.append((n, link, "no such file"))
            elif anchor and file.endswith(".md") and anchor not in anchors(file):
                out.append((n, link, f"no heading '{anchor}' in {os.path.relpath(file, ROOT)}"))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the build's bin folder")
    ap.add_argument("files", nargs="*", default=[os.path.join(ROOT, f) for f in ("README.md", "docs/cli.md",
                                                                                 "docs/studio.md")])
    a = ap.parse_args()
    bad = commands = 0
    for path in a.files:
        name = os.path.relpath(path, ROOT)
        lines = blocks(open(path, encoding="utf-8").read())
        commands += len(lines)
        for n, line in lines:
            for problem in check(shlex.split(line), a.bin):
                print(f"{name}:{n}: {line}\n  {problem}")
                bad += 1
        for n, link, why in broken_links(path):
            print(f"{name}:{n}: link {link}: {why}")
            bad += 1
    # The links of every other page of the guide too.
    others = sorted(set(glob.glob(os.path.join(ROOT, "docs", "*.md")) + [os.path.join(ROOT, "CONTRIBUTING.md")]) -
                    {os.path.abspath(f) for f in a.files})
    for path in others:
        for n, link, why in broken_links(path):
            print(f"{os.path.relpath(path, ROOT)}:{n}: link {link}: {why}")
            bad += 1
    print(f"{commands} commands of {len(a.files)} file(s) and the links of {len(a.files) + len(others)} checked, "
          f"{bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
