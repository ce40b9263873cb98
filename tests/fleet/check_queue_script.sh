#!/usr/bin/env bash
# scripts/queue.sh starts a queue that answers with its password and refuses
# without it, and stops on SIGTERM. Exits 77 (skipped) without redis-tools,
# 1 instead where TESSEL_REQUIRE names redis (or all).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v redis-cli >/dev/null; then
  echo "redis-cli is not installed (redis-tools)"
  [[ ",${TESSEL_REQUIRE:-}," =~ ,(redis|all), ]] && exit 1
  exit 77
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$root/scripts/queue.sh" --port "$port" --password pw --bind 127.0.0.1 > /tmp/queue-test-$$.log 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f /tmp/queue-test-$$.log' EXIT
for _ in $(seq 50); do
  [ "$(redis-cli -p "$port" -a pw --no-auth-warning ping 2>/dev/null)" = PONG ] && break
  sleep 0.1
done
[ "$(redis-cli -p "$port" -a pw --no-auth-warning ping)" = PONG ] || { cat /tmp/queue-test-$$.log; exit 1; }
redis-cli -p "$port" ping 2>&1 | grep -q NOAUTH || { echo "the queue answered without its password"; exit 1; }
[ "$(redis-cli -p "$port" -a pw --no-auth-warning config get save | tail -1)" = "" ] || { echo "the queue persists"; exit 1; }
kill -TERM $server
wait $server || true
echo "scripts/queue.sh: answers on $port with its password, refuses without, persists nothing"
