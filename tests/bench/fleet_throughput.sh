#!/usr/bin/env bash
# The fleet against a local tuning on this machine: the same tune-op run
# measured here, then by AGENTS local tessel-agent processes through a
# loopback Redis (started here, nothing persisted). Prints programs per
# second of each and their ratio, the fleet's split (search in the tuner; each
# job's build and measurement in the agent; queueing, transfer and posting
# as the overhead), checks both databases the same way, and the scaling this
# split predicts for N machines. Run it on a quiet machine.
#
# usage: tests/bench/fleet_throughput.sh [OP SHAPE TRIALS]   (default: matmul 512,512,512 256)
#        AGENTS=2 JOBS=1 (compilers per agent) BATCH=64
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${TESSEL_BUILD_DIR:-$root/build}/bin
op=${1:-matmul}
shape=${2:-512,512,512}
trials=${3:-256}
agents=${AGENTS:-2}
jobs=${JOBS:-1}
batch=${BATCH:-64}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

server=$(command -v redis-server || command -v redis-check-rdb || true)
[ -n "$server" ] || { echo "no redis-server (scripts/setup.sh installs redis-tools)" >&2; exit 1; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# Debian's server binary runs as the server when called redis-server.
ln -s "$server" "$work/redis-server"
"$work/redis-server" --bind 127.0.0.1 --port "$port" --save '' --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do grep -q "Ready to accept" "$work/redis.log" && break; sleep 0.1; done
url=redis://127.0.0.1:$port

tune() {  # label, extra args
  local label=$1
  shift
  "$bin/tessel" tune-op "$op" --shape "$shape" --trials "$trials" --batch "$batch" --db "$work/$label.db" --json --quiet "$@" >"$work/$label.json"
}

check() {  # label: records, distinct programs, error messages, best correct
  python3 - "$work/$1.db" "$work/$1.json" "$trials" "$1" <<'PY'
import json, sqlite3, sys
db, js, trials, label = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
c = sqlite3.connect(db)
n, distinct = c.execute("SELECT COUNT(*), COUNT(DISTINCT steps) FROM records").fetchone()
silent = c.execute("SELECT COUNT(*) FROM records WHERE error_code != 0 AND error_msg = ''").fetchone()[0]
valid = c.execute("SELECT COUNT(*) FROM records WHERE error_code = 0").fetchone()[0]
j = json.load(open(js))
ok = n == trials and distinct == n and silent == 0 and j["correct"]
print(f"{label}: {n} records, {distinct} distinct programs, {valid} valid, {silent} errors without a message, "
      f"best {j['best_ms']:.4f} ms checked correct: {j['correct']} -> {'ok' if ok else 'FAILED'}")
sys.exit(0 if ok else 1)
PY
}

tune local --jobs "$(nproc)"
for i in $(seq "$agents"); do
  "$bin/tessel-agent" --redis "$url" --target cpu --name "bench-$i" --jobs "$jobs" --quiet &
  pids+=($!)
done
sleep 2
tune fleet --measure "$url"
"$bin/tessel" fleet status --redis "$url"
echo
check local
check fleet
echo
python3 - "$work/local.json" "$work/fleet.json" "$agents" <<'PY'
import json, sys
local, fleet, agents = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
f = fleet["fleet"]
lr, fr = local["trials"] / local["seconds"], fleet["trials"] / fleet["seconds"]
print(f"local: {local['trials']} programs in {local['seconds']:.1f} s = {lr:.2f} programs/s")
print(f"fleet ({agents} agents on this machine): {fleet['trials']} programs in {fleet['seconds']:.1f} s = {fr:.2f} programs/s")
print(f"ratio fleet / local: {fr / lr:.2f}x")
overhead = f["round_trip_s"] - f["agent_s"]
print(f"fleet jobs: {f['jobs']}, resent {f['resent']}, duplicates {f['duplicates']}")
print(f"per job: {f['round_trip_s'] / f['jobs']:.2f} s from sending to reading the result, of which the agent "
      f"{f['agent_s'] / f['jobs']:.2f} s (build {(f['agent_s'] - f['measure_s']) / f['jobs']:.2f} s, "
      f"measure {f['measure_s'] / f['jobs']:.2f} s)")
print(f"overhead (encoding, queueing, transfer, decoding, checks, posting): "
      f"{overhead / f['jobs'] * 1e3:.2f} ms per job = {100 * overhead / f['agent_s']:.3f} % of its build and measurement")
# The tuner's time: its search, its wait for the agents (sending, waiting,
# reading), and the rest (recording, training the cost model). With N
# machines the agents' work and the overhead divide by N, the rest does not.
search, wait = fleet["search_seconds"], f["wait_s"]
rest = max(0.0, fleet["seconds"] - search - wait)
print(f"split of the fleet run ({fleet['seconds']:.1f} s): search {search:.1f} s, waiting for the agents {wait:.1f} s "
      f"(their build and measurement: {f['agent_s']:.1f} s of work over {agents} agents), the tuner's other work {rest:.1f} s")
for n in (1, 2, 4, 8, 16):
    t = search + rest + (f["agent_s"] + overhead) / n
    print(f"  expected with {n:2d} agents like one here: {fleet['trials'] / t:.2f} programs/s")
PY
