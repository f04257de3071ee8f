#!/usr/bin/env bash
# Runs a command with TEST_DATABASE_URL pointing at a throwaway PostgreSQL
# cluster started from the installed binaries, and removes it afterwards.
# With TEST_DATABASE_URL already set, it just runs the command.
set -euo pipefail
if [ -n "${TEST_DATABASE_URL:-}" ]; then exec "$@"; fi

bindir=""
for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && bindir="$d"; done
if [ -z "$bindir" ]; then
  echo "with-postgres: PostgreSQL binaries not found; install them (apt-get install postgresql) or set TEST_DATABASE_URL" >&2
  exit 1
fi
dir=$(mktemp -d /tmp/batcheval-pg.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 55432)
runas=()
if [ "$(id -u)" = "0" ]; then
  chown postgres "$dir"
  runas=(runuser -u postgres --)
fi
"${runas[@]}" "$bindir/initdb" -D "$dir/data" -U postgres -A trust --no-sync >/dev/null
"${runas[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null
cleanup() { "${runas[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
export TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
"$@"
