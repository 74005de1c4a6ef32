#!/bin/bash
# sync watch latency: an edit on A visible in the store of B running `app sync watch`, median of N (default 20).
# MODE=remote (default): A runs `sync now` after each edit; the figure is A's sync plus B's watch.
# MODE=local: A runs `sync watch` too and nobody runs `sync now`; the figure is A's watch noticing
# the commit, pushing, and B's watch pulling.
# Runs as root (the throw-away PostgreSQL cluster runs as postgres). Usage: N=20 [MODE=local] tools/lib/sync_watch_latency.sh
set -e
BIN=${TRIPBOARD_BIN_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/.build/debug}
D=$(mktemp -d /tmp/tbw-XXXX); chmod 755 $D; chown postgres $D
PG=/usr/lib/postgresql/15/bin
PORT=$((30000 + RANDOM % 20000))
setpriv --reuid=postgres --regid=postgres --init-groups $PG/initdb -D $D/data -A trust -U tripboard --no-sync >/dev/null
setpriv --reuid=postgres --regid=postgres --init-groups $PG/pg_ctl -D $D/data -o "-c listen_addresses='' -k $D -p $PORT -c fsync=off" -l $D/log -w start >/dev/null
CI="host=$D port=$PORT dbname=postgres user=tripboard"
mkdir -p $D/a $D/b
export HOME=/tmp
A="env TRIPBOARD_CONTAINER=$D/a/c TRIPBOARD_DEVICE_DIR=$D/a/dev $BIN/app"
B="env TRIPBOARD_CONTAINER=$D/b/c TRIPBOARD_DEVICE_DIR=$D/b/dev $BIN/app"
$A sync init-server --server "$CI" >/dev/null
echo "correct horse battery staple" | $A sync setup --server "$CI" 2>/dev/null
echo "correct horse battery staple" | $B sync setup --server "$CI" 2>/dev/null
TRIP=$($A trip add --name T0 --start 2026-12-01 --end 2026-12-02)
$A sync now >/dev/null; $B sync now >/dev/null
$B sync watch --json > $D/watch.out 2> $D/watch.err &
WPID=$!
if [ "${MODE:-remote}" = local ]; then $A sync watch --json > $D/watch-a.out 2> $D/watch-a.err & APID=$!; fi
sleep 1.5
for i in $(seq 1 ${N:-20}); do
  $A trip edit $TRIP --name "T$i" >/dev/null
  S=$(date +%s.%N)
  if [ "${MODE:-remote}" != local ]; then $A sync now >/dev/null; fi
  while [ "$(sqlite3 $D/b/c/store/TripBoard.sqlite "SELECT name FROM trips")" != "T$i" ]; do sleep 0.01; done
  E=$(date +%s.%N)
  echo "$E - $S" | bc
done | sort -n > $D/lat
echo "median (edit committed on A -> visible on B, $([ "${MODE:-remote}" = local ] && echo "A's watch pushing it" || echo "including A's sync now")):" $(sed -n "$(( (${N:-20}+1)/2 ))p" $D/lat) "s; min $(head -1 $D/lat) max $(tail -1 $D/lat)"
kill -TERM $WPID; wait $WPID; echo "watch exit $?"
if [ -n "${APID:-}" ]; then kill -TERM $APID; wait $APID; echo "A's watch exit $?"; fi
setpriv --reuid=postgres --regid=postgres --init-groups $PG/pg_ctl -D $D/data -m immediate stop >/dev/null
rm -rf $D
