#!/usr/bin/env bash
# Starts the measurement fleet's queue: a Redis server in the foreground,
# nothing persisted (a restarted queue is empty; tuners send their rounds again).
#   scripts/queue.sh [--port 6379] [--password SECRET] [--bind ADDRESS]
# Needs Debian's redis-tools (scripts/setup.sh installs it), whose
# redis-check-rdb is the server when called by the name redis-server; the
# redis-server package, where installed, is used as it is.
set -euo pipefail
port=6379 password= bind=0.0.0.0
while [ $# -gt 0 ]; do
  case $1 in
    --port) port=${2:?--port needs a number}; shift 2 ;;
    --password) password=${2:?--password needs a value}; shift 2 ;;
    --bind) bind=${2:?--bind needs an address}; shift 2 ;;
    -h|--help) sed -n '2,7s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "queue: unknown option '$1' (--port, --password, --bind)" >&2; exit 2 ;;
  esac
done
args=(--port "$port" --bind "$bind" --save '' --appendonly no)
if [ -n "$password" ]; then
  args+=(--requirepass "$password")
else
  echo "queue: no --password: anyone who reaches port $port can run code on the agents" >&2
  args+=(--protected-mode no)
fi
if command -v redis-server >/dev/null; then
  exec redis-server "${args[@]}"
elif server=$(command -v redis-check-rdb); then
  exec -a redis-server "$server" "${args[@]}"
fi
echo "queue: no Redis server here: sudo apt-get install redis-tools (or run scripts/setup.sh)" >&2
exit 1
