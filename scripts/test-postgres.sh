#!/usr/bin/env bash
# Starts (or stops) a throwaway PostgreSQL server on loopback for tests and benchmarks.
#   scripts/test-postgres.sh start [PORT]   prints the TEST_DATABASE_URL to use
#   scripts/test-postgres.sh restart PORT [SECONDS]   fast shutdown, SECONDS down, start again
#   scripts/test-postgres.sh stop [PORT]
# Tests need no durability: fsync and synchronous commits are off unless PGTEST_DURABLE=1.
# Installs Debian's postgresql package when the machine lacks it. initdb refuses root, so the
# cluster belongs to the postgres user.
set -euo pipefail
cmd=${1:-start}
port=${2:-55432}
dir=${PGTEST_DIR:-/tmp/convene-pgtest-$port}

find_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  return 1
}

options() {
  local base="-p $port -k /tmp -c listen_addresses=127.0.0.1 -c max_connections=400"
  # PGTEST_DURABLE=1: PostgreSQL's own defaults, every commit flushed to the disk (bench).
  if [ "${PGTEST_DURABLE:-}" = 1 ]; then echo "$base"; return; fi
  echo "$base -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
}

as_pg() {
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi
}

case "$cmd" in
  start)
    if ! bin=$(find_bin); then
      echo "installing postgresql from Debian packages" >&2
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >&2
      apt-get install -y -qq postgresql >&2
      bin=$(find_bin)
    fi
    if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then useradd -r -m postgres; fi
    if [ -f "$dir/postmaster.pid" ]; then as_pg "$bin/pg_ctl -D $dir -m fast stop" >&2 || true; fi
    rm -rf "$dir"; mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_pg "$bin/initdb -D $dir --auth=trust -U postgres -E UTF8 >/dev/null"
    as_pg "$bin/pg_ctl -D $dir -l $dir/server.log -w -o \"$(options)\" start >/dev/null"
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  restart)
    # A fast shutdown (every session ended), SECONDS of outage, then the same cluster again.
    bin=$(find_bin)
    as_pg "$bin/pg_ctl -D $dir -m fast -w stop >/dev/null"
    sleep "${3:-0}"
    as_pg "$bin/pg_ctl -D $dir -l $dir/server.log -w -o \"$(options)\" start >/dev/null"
    ;;
  stop)
    bin=$(find_bin) || exit 0
    [ -f "$dir/postmaster.pid" ] && as_pg "$bin/pg_ctl -D $dir -m fast stop >/dev/null" || true
    ;;
  *) echo "usage: $0 start|restart|stop [port]" >&2; exit 2 ;;
esac
