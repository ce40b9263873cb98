#!/usr/bin/env python3
"""The model corpus test: every corpus model, in every exported form, is
imported (`tessel inspect`: parameters, FLOPs) and run untuned on the
framework's input (`tessel run --inputs --expect`), and must match the
framework's output within 1e-3 of the largest output.

    check_corpus.py --tessel BIN [--models a,b] [--formats opset13,opset17,torchscript]
                    [--corpus DIR] [--json FILE] [--markdown FILE] [--tune N --db FILE]

The corpus is exported first by export_corpus.py (cached outside the
repository). Exit 77 (CTest's skip) with the reason where Debian's Python
torch is absent; 1 when a model fails; 0 when all pass.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORTER = os.path.join(HERE, "export_corpus.py")
FORMATS = {
    # the file, and whether --input-shapes is passed (TorchScript records no
    # shapes; the opset-13 export has a symbolic batch that it sizes)
    "opset13": ("opset13.onnx", True),
    "opset17": ("opset17.onnx", False),
    "torchscript": ("model.pt", True),
}
SKIP = 77


def run(cmd, timeout):
    started = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p, time.time() - started


def last_error(p):
    lines = [l for l in (p.stderr + p.stdout).splitlines() if l.strip()]
    return lines[-1] if lines else f"exit {p.returncode}"


def check(tessel, folder, meta, fmt):
    file, shapes = FORMATS[fmt]
    path = os.path.join(folder, file)
    extra = ["--input-shapes", ",".join(str(d) for d in meta["input_shape"])] if shapes else []
    row = {"model": meta["name"], "format": fmt}
    p, _ = run([tessel, "inspect", path, "--json"] + extra, 600)
    if p.returncode != 0:
        row.update(imports=False, error=last_error(p))
        return row
    info = json.loads(p.stdout)
    row.update(imports=True, params=info["params"], flops=info["flops"], nodes=info["nodes"], tasks=len(info["tasks"]))
    p, seconds = run([tessel, "run", path, "--inputs", os.path.join(folder, "input.npz"), "--expect",
                      os.path.join(folder, "expected.npz"), "--repeats", "1", "--json"] + extra, 1800)
    row["run_s"] = round(seconds, 1)
    try:
        out = json.loads(p.stdout)
    except json.JSONDecodeError:
        row.update(runs=False, error=last_error(p))
        return row
    err, ref = out["expect_max_abs_err"], out["expect_max_abs_ref"]
    row.update(runs=True, max_abs_err=err, max_abs_ref=ref, relative_err=err / ref if ref else None,
               matches=bool(out["expect_correct"]), libtorch_err=out["max_abs_err"])
    if not row["matches"]:
        row["error"] = f"largest error {err:.3g} is more than 1e-3 x the largest output {ref:.3g}"
    return row


def tune(tessel, folder, meta, fmt, row, db, per_task):
    """tessel tune with `per_task` programs per task, then the run with the
    tuned kernels against the framework's output."""
    file, shapes = FORMATS[fmt]
    path = os.path.join(folder, file)
    extra = ["--input-shapes", ",".join(str(d) for d in meta["input_shape"])] if shapes else []
    trials = per_task * row["tasks"]
    p, seconds = run([tessel, "tune", path, "--trials", str(trials), "--db", db, "--json", "--quiet"] + extra, 7200)
    row.update(tune_trials=trials, tune_s=round(seconds))
    try:
        out = json.loads(p.stdout)
    except json.JSONDecodeError:
        row.update(tunes=False, tune_error=last_error(p))
        return row
    valid = sum(1 for t in out["tasks"] if t.get("best_ms"))
    row.update(tunes=p.returncode == 0 and valid == len(out["tasks"]), tasks_tuned=valid,
               estimate_ms=out.get("estimated_ms"))
    p, _ = run([tessel, "run", path, "--db", db, "--inputs", os.path.join(folder, "input.npz"), "--expect",
                os.path.join(folder, "expected.npz"), "--repeats", "3", "--json"] + extra, 1800)
    try:
        out = json.loads(p.stdout)
        row.update(tuned_matches=bool(out["expect_correct"]), tuned_ms=out["tessel_ms"], libtorch_ms=out["libtorch_ms"])
    except json.JSONDecodeError:
        row.update(tuned_matches=False, tune_error=last_error(p))
    return row


def markdown(rows):
    lines = ["| model | format | imports | parameters | GFLOPs | tasks | runs | largest error / largest output |",
             "|---|---|---|---:|---:|---:|---|---:|"]
    for r in rows:
        rel = f"{r['relative_err']:.1e}" if r.get("relative_err") is not None else "-"
        lines.append("| {} | {} | {} | {} | {} | {} | {} | {} |".format(
            r["model"], r["format"], "yes" if r.get("imports") else "no: " + r.get("error", ""),
            f"{r['params']:,}" if "params" in r else "-", f"{r['flops'] / 1e9:.3f}" if "flops" in r else "-",
            r.get("tasks", "-"), ("yes" if r.get("matches") else "no") if r.get("imports") else "-", rel))
    tuned = [r for r in rows if "tunes" in r]
    if tuned:
        lines += ["", "| model | format | trials | tuning s | tasks with a program | estimate ms | tuned run ms "
                  "| LibTorch ms | tuned run matches |", "|---|---|---:|---:|---:|---:|---:|---:|---|"]
        for r in tuned:
            est = f"{r['estimate_ms']:.1f}" if r.get("estimate_ms") else "-"
            lines.append("| {} | {} | {} | {} | {} of {} | {} | {} | {} | {} |".format(
                r["model"], r["format"], r["tune_trials"], r["tune_s"], r.get("tasks_tuned", 0), r["tasks"], est,
                f"{r['tuned_ms']:.1f}" if "tuned_ms" in r else "-",
                f"{r['libtorch_ms']:.1f}" if "libtorch_ms" in r else "-",
                "yes" if r.get("tuned_matches") else "no"))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--models", default="")
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--corpus", default="")
    ap.add_argument("--json", default="")
    ap.add_argument("--markdown", default="")
    ap.add_argument("--tune", type=int, default=0, metavar="N",
                    help="also tune each model with N programs per task (into --db), then run it tuned")
    ap.add_argument("--db", default="corpus_tuning.db")
    args = ap.parse_args()
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    export = [python, EXPORTER] + (["--out", args.corpus] if args.corpus else []) + \
             (["--models", args.models] if args.models else [])
    p = subprocess.run(export, capture_output=True, text=True)
    if p.returncode == 3:
        print("SKIP: the corpus cannot be exported here: " + p.stderr.strip() +
              " (scripts/setup.sh installs python3-torchvision)")
        return SKIP
    if p.returncode != 0:
        print(p.stdout + p.stderr)
        return 1
    corpus = p.stdout.strip().splitlines()[-1]
    models = args.models.split(",") if args.models else subprocess.run(
        [python, EXPORTER, "--list"], capture_output=True, text=True, check=True).stdout.split()
    formats = [f for f in args.formats.split(",") if f]
    rows, failed = [], 0
    for m in models:
        folder = os.path.join(corpus, m)
        with open(os.path.join(folder, "meta.json")) as f:
            meta = json.load(f)
        for fmt in formats:
            row = check(args.tessel, folder, meta, fmt)
            if args.tune and row.get("matches"):
                tune(args.tessel, folder, meta, fmt, row, args.db, args.tune)
            rows.append(row)
            ok = row.get("matches", False) and (not args.tune or (row.get("tunes") and row.get("tuned_matches")))
            failed += not ok
            detail = f"error {row['relative_err']:.1e} of the largest output" if row.get("relative_err") is not None \
                else row.get("error", "")
            if args.tune:
                detail += f"; tuned with {row.get('tune_trials')} trials in {row.get('tune_s')} s, " \
                          f"{row.get('tasks_tuned', 0)} of {row.get('tasks')} tasks with a program"
            print(f"{'ok  ' if ok else 'FAIL'} {m} {fmt}: {detail} ({row.get('run_s', 0)} s)", flush=True)
            if not ok and row.get("error"):
                print(f"     {row['error']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(rows))
    print(f"{len(rows) - failed} of {len(rows)} pass")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
