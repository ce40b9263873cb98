#!/usr/bin/env python3
"""A soak of the tuner (docs/reliability.md, "Soak").

Runs `tessel tune MODEL` for a wall-clock time while a helper thread SIGKILLs a
random measurement worker or compiler job of the tuner every few seconds, then
stops the tuning with SIGINT and checks what is left:
  - the tuner did not crash: it exits 130 (stopped by the signal) or 0;
  - the database passes SQLite's integrity check and `tessel db stats`, with
    no damaged record, and its session is `stopped` or `finished`;
  - every record of the session is a measured program or an error record with
    its message (a killed kernel is `kernel crashed the worker: worker killed
    by signal 9`, a killed compiler of a single program is a build error);
  - the tuner's resident memory against the trials recorded: the growth per
    thousand trials over the run's second half (after the caches fill).
With --heap-watch LIB (tests/soak/heap_watch.c built as a shared library) the
tuner's heap is logged too, and the summary adds the floors (the least of each
four minutes, past the round's transient allocations) of the heap in use and
of the resident set, as growth per thousand trials over the second half.
Prints a JSON summary (and writes it with --json FILE); exits 1 when a check
fails. Usage:
  tests/soak/soak.py --tessel build/bin/tessel --minutes 60 [--model resnet18]
                     [--heap-watch heap_watch.so]
"""
import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

# Process names (as /proc/PID/comm shows them) the killer may pick.
WORKERS = {"tessel-worker"}
COMPILERS = {"c++", "g++", "gcc", "cc1plus", "as", "ld", "collect2", "clang++", "clang"}


def descendants(root_pid):
    """(pid, comm) of every process below root_pid."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # comm is in parentheses and may hold spaces: split after the last ')'.
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append((int(entry), comm))
    out, todo = [], [root_pid]
    while todo:
        for pid, comm in children.get(todo.pop(), []):
            out.append((pid, comm))
            todo.append(pid)
    return out


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def count_records(db):
    """Records written so far, read without disturbing the writer (WAL)."""
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT count(*) FROM records").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return None


class Killer(threading.Thread):
    """SIGKILLs a random worker or compiler job of the tuner every few seconds."""

    def __init__(self, tuner_pid, mean_seconds, rng):
        super().__init__(daemon=True)
        self.tuner_pid, self.mean, self.rng = tuner_pid, mean_seconds, rng
        self.stop = threading.Event()
        self.kills = {"worker": 0, "compiler": 0}
        self.misses = 0  # moments when no worker or compiler was running

    def run(self):
        while not self.stop.wait(self.rng.uniform(0.5 * self.mean, 1.5 * self.mean)):
            procs = [(p, c) for p, c in descendants(self.tuner_pid) if c in WORKERS or c in COMPILERS]
            if not procs:
                self.misses += 1
                continue
            pid, comm = self.rng.choice(procs)
            try:
                os.kill(pid, signal.SIGKILL)
                self.kills["worker" if comm in WORKERS else "compiler"] += 1
            except ProcessLookupError:
                self.misses += 1


def slope_per_thousand(samples, key="rss_kib"):
    """Least-squares slope of samples[key] over records, per 1000 records."""
    if len(samples) < 3:
        return None
    xs = [s["records"] for s in samples]
    ys = [s[key] for s in samples]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    return 1000 * sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def floors(samples, key, window=240):
    """The least sample of each window of seconds (with its records)."""
    least = {}
    for s in samples:
        w = int(s["seconds"] // window)
        if w not in least or s[key] < least[w][key]:
            least[w] = s
    return [least[w] for w in sorted(least)]


def floor_half(points):
    """The points of the second half of the run."""
    return [p for p in points if p["seconds"] >= 0.5 * points[-1]["seconds"]] if points else []


def heap_samples(path, pid, start, samples):
    """The heap log's lines of the tuner, each with the records at its time."""
    out = []
    try:
        lines = open(path).read().split("\n")
    except OSError:
        return out
    for line in lines:
        parts = line.split()
        if len(parts) < 7 or parts[0] != str(pid):
            continue
        seconds = int(parts[1]) - start
        fields = dict(p.split("=") for p in parts[2:])
        before = [s for s in samples if s["seconds"] <= seconds]
        if before:
            out.append({"seconds": seconds, "records": before[-1]["records"], "inuse_kib": int(fields["inuse"]) // 1024})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", required=True, help="the tessel executable")
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--kill-every", type=float, default=5, help="mean seconds between kills")
    ap.add_argument("--db", help="database (default: a new one in a temporary folder)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="also write the summary here")
    ap.add_argument("--heap-watch", help="heap_watch.so: log the tuner's heap (see the docstring)")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="tessel-soak-")
    db = args.db or os.path.join(work, "soak.db")
    log = open(os.path.join(work, "tune.log"), "w")
    # More trials than the time allows: the soak ends it with SIGINT.
    cmd = [args.tessel, "tune", args.model, "--trials", "1000000", "--db", db, "--quiet"]
    start = time.time()
    env = dict(os.environ)
    heap_log = os.path.join(work, "heap.log")
    if args.heap_watch:
        env.update(LD_PRELOAD=os.path.abspath(args.heap_watch), HEAP_WATCH_OUT=heap_log)
    tuner = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    killer = Killer(tuner.pid, args.kill_every, random.Random(args.seed))
    killer.start()
    samples = []
    deadline = start + 60 * args.minutes
    while time.time() < deadline and tuner.poll() is None:
        time.sleep(5)
        rss, records = rss_kib(tuner.pid), count_records(db)
        if rss is not None and records is not None:
            samples.append({"seconds": round(time.time() - start, 1), "records": records, "rss_kib": rss})
    killer.stop.set()
    killer.join()
    crashed_early = tuner.poll() is not None
    if not crashed_early:
        tuner.send_signal(signal.SIGINT)
    try:
        status = tuner.wait(timeout=300)
    except subprocess.TimeoutExpired:
        tuner.kill()
        status = "hung after SIGINT"
    log.close()

    failures = []
    if crashed_early:
        failures.append(f"the tuner ended before the soak did (status {status})")
    elif status not in (0, 130):
        failures.append(f"the tuner exited with {status} after SIGINT")

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
    if integrity != "ok":
        failures.append(f"integrity check: {integrity}")
    sessions = con.execute("SELECT status, count(*) FROM sessions GROUP BY status").fetchall()
    if any(s not in ("stopped", "finished") for s, _ in sessions):
        failures.append(f"sessions left as {sessions}")
    records = con.execute("SELECT count(*) FROM records").fetchone()[0]
    errors = con.execute("SELECT error_code, substr(error_msg, 1, 60), count(*) FROM records "
                         "WHERE error_code != 0 GROUP BY 1, 2 ORDER BY 3 DESC").fetchall()
    unexplained = con.execute("SELECT count(*) FROM records WHERE error_code != 0 AND error_msg = ''").fetchone()[0]
    if unexplained:
        failures.append(f"{unexplained} error records without a message")
    killed_kernels = con.execute("SELECT count(*) FROM records WHERE error_msg LIKE "
                                 "'kernel crashed the worker: worker killed by signal 9%'").fetchone()[0]
    con.close()

    stats = subprocess.run([args.tessel, "db", "stats", "--db", db, "--json"], capture_output=True, text=True)
    db_stats = None
    if stats.returncode != 0:
        failures.append(f"db stats failed: {stats.stderr.strip()}")
    else:
        db_stats = json.loads(stats.stdout)
        if db_stats.get("damaged_records", 0):
            failures.append(f"{db_stats['damaged_records']} damaged records")

    # The second half: the program caches and the cost model's data have grown in.
    half = [s for s in samples if s["seconds"] >= 0.5 * samples[-1]["seconds"]] if samples else []
    summary = {
        "command": " ".join(cmd),
        "minutes": round((time.time() - start) / 60, 1),
        "tuner_status": status,
        "kills": killer.kills,
        "kill_misses": killer.misses,
        "records": records,
        "killed_kernels_recorded": killed_kernels,
        "error_records": [{"code": c, "message": m, "count": n} for c, m, n in errors],
        "integrity_check": integrity,
        "sessions": sessions,
        "rss_kib_first": samples[0]["rss_kib"] if samples else None,
        "rss_kib_last": samples[-1]["rss_kib"] if samples else None,
        "rss_kib_per_1000_trials_second_half": slope_per_thousand(half),
        "rss_floor_kib_per_1000_trials_second_half": slope_per_thousand(floor_half(floors(samples, "rss_kib"))),
        "failures": failures,
        "work_dir": work,
    }
    if args.heap_watch:
        heap = floors(heap_samples(heap_log, tuner.pid, int(start), samples), "inuse_kib")
        summary["heap_floor_kib_first_last"] = [heap[0]["inuse_kib"], heap[-1]["inuse_kib"]] if heap else None
        summary["heap_floor_kib_per_1000_trials_second_half"] = slope_per_thousand(floor_half(heap), "inuse_kib")
    with open(os.path.join(work, "samples.json"), "w") as f:
        json.dump(samples, f)
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
