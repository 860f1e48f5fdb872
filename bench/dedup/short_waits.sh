#!/usr/bin/env bash
# Concurrent writers of short texts into one similarity dedup table: throughput, and how many of
# them wait on simdup's lock stripes, against the build of another git revision.
#
#   bench/dedup/short_waits.sh [REV]
#
# The table: sdocs (id bigserial PRIMARY KEY, body text) with simdup_enable_similar('sdocs',
# 'body', 0.5, on_duplicate => 'skip'): the similarity index (35 bands of 3 rows) and the
# short-text index, empty at the start of each run. A run inserts the 7,281 real news titles of
# bench/data/zh_news.jsonl (24 characters on average; bench/fetch/news.sh), or with
# SIMDUP_BENCH_TEXTS=en the first 15-45 characters (a seeded random length, as the `stripes`
# example of bench/rust cuts them) of the 2,769 sentences of at least 20 characters of
# bench/data/en_news.jsonl (the Lee corpus has no titles), each once, one per transaction, in
# the same order, by pgbench with C clients (SIMDUP_BENCH_CLIENTS, "1 2 4 8"),
# synchronous_commit = off. Meanwhile one session samples pg_stat_activity every 10 ms: how many
# of the pgbench backends are active, and how many of them wait on an advisory lock (simdup's
# lock stripes are advisory locks; nothing else here takes one).
#
# With REV (a commit, e.g. HEAD~1), its build (a git worktree in /tmp with its own target
# directory, release) and this tree's are installed in turn (scripts/install.sh), the cluster
# restarted after each (simdup is preloaded, so a running server keeps the library it started
# with), SIMDUP_BENCH_ROUNDS (3) times interleaved: REV, this tree, REV, this tree. Without
# REV, this tree's build alone. Prints every run, then the medians per build and client count.
# Takes about 2 minutes a round and build, plus the first build of REV (~3 min).
# Its own throwaway cluster "<SIMDUP_CLUSTER>-shortwaits" (bench/common.sh: bench_cluster).
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
REV="${1:-}"
CLIENTS="${SIMDUP_BENCH_CLIENTS:-1 2 4 8}"
ROUNDS="${SIMDUP_BENCH_ROUNDS:-3}"
TEXTS="${SIMDUP_BENCH_TEXTS:-zh}"
case "$TEXTS" in zh|en) ;; *) echo "SIMDUP_BENCH_TEXTS: zh or en, not $TEXTS" >&2; exit 2 ;; esac
[ -f "$DATA/${TEXTS}_news.jsonl" ] || { echo "no $DATA/${TEXTS}_news.jsonl: run bench/fetch/news.sh" >&2; exit 1; }
bench_workdir shortwaits
old_tree="$WORK/rev" old_target="/tmp/simdup-shortwaits-target"
on_exit 'if [ -d "$old_tree" ]; then git worktree remove --force "$old_tree" >/dev/null 2>&1 || true; fi'
sql() { psql -d postgres "$@"; }

# This tree's build (again after REV's; without REV, SIMDUP_BENCH_NO_INSTALL=1 keeps the one installed).
install_this() {
  if [ -z "$REV" ] && [ "${SIMDUP_BENCH_NO_INSTALL:-0}" = 1 ]; then return; fi
  scripts/install.sh --pg-config "$PG_CONFIG" >/dev/null
}
install_rev() { CARGO_TARGET_DIR="$old_target" scripts/install.sh --source "$old_tree" --pg-config "$PG_CONFIG" >/dev/null; }
restart() { scripts/cluster.sh restart "$cluster"; }

builds="this"
if [ -n "$REV" ]; then
  git worktree add --detach "$old_tree" "$REV" >/dev/null 2>&1 || { echo "short_waits.sh: no revision $REV" >&2; exit 2; }
  echo "== building $REV ($(git -C "$old_tree" log --oneline -1)) into $old_target" >&2
  install_rev
  builds="rev this"
fi
PG_EXTRA_OPTS="-c synchronous_commit=off -c shared_preload_libraries=simdup" bench_cluster shortwaits
banner "short texts ($TEXTS), concurrent writers, this tree $(git log --oneline -1 | cut -c1-60)"
sql -c "CREATE EXTENSION simdup; CREATE TABLE titles (id serial PRIMARY KEY, body text NOT NULL);
         CREATE UNLOGGED TABLE samples (run text, waiting int, active int);"
python3 - "$DATA/${TEXTS}_news.jsonl" "$TEXTS" <<'PY' | sql -c "\copy titles (body) FROM STDIN"
import json, random, re, sys
rng = random.Random(1)
for line in open(sys.argv[1], encoding="utf-8"):
    doc = json.loads(line)
    if sys.argv[2] == "zh":
        texts = [(doc.get("title") or "").strip()]
    else:
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", doc.get("body") or "")]
        texts = [s[: 15 + rng.randrange(31)] for s in sentences if len(s) >= 20]
    for t in texts:
        if t:
            print(t.replace("\\", "\\\\").replace("\t", " ").replace("\n", " ").replace("\r", " "))
PY
n=$(sql -At -c "SELECT count(*) FROM titles")
echo "INSERT INTO sdocs (body) SELECT body FROM titles WHERE id = (SELECT nextval('title_seq'));" >"$WORK/insert.sql"

: >"$WORK/results"
for round in $(seq 1 "$ROUNDS"); do
  for build in $builds; do
    if [ "$build" = rev ]; then install_rev; else install_this; fi
    restart
    for c in $CLIENTS; do
      run="$build/$c/$round"
      sql -c "DROP TABLE IF EXISTS sdocs; DROP SEQUENCE IF EXISTS title_seq;
               CREATE TABLE sdocs (id bigserial PRIMARY KEY, body text NOT NULL); CREATE SEQUENCE title_seq;" \
           -c "SELECT count(*) FROM simdup_enable_similar('sdocs', 'body', 0.5, on_duplicate => 'skip')" >/dev/null
      # The sampler stops when no pgbench backend has been seen for a second after the first.
      sql -c "DO \$\$ DECLARE w int; a int; seen bool := false; idle int := 0; BEGIN
                 FOR i IN 1..60000 LOOP
                   PERFORM pg_catalog.pg_stat_clear_snapshot();
                   SELECT count(*) FILTER (WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'),
                          count(*) FILTER (WHERE state = 'active')
                     INTO w, a FROM pg_catalog.pg_stat_activity WHERE application_name = 'pgbench';
                   IF a > 0 THEN seen := true; idle := 0; INSERT INTO samples VALUES ('$run', w, a);
                   ELSIF seen THEN idle := idle + 1; EXIT WHEN idle > 100; END IF;
                   PERFORM pg_catalog.pg_sleep(0.01);
                 END LOOP; END \$\$" &
      sampler=$!
      tps=$("$PG_BIN/pgbench" -n -h "$SOCK" -p "$port" -U postgres -c "$c" -j $(( c < 2 ? 1 : 2 )) -t $((n / c)) -f "$WORK/insert.sql" postgres 2>&1 \
            | sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p')
      wait "$sampler"
      read -r stored waiting active < <(sql -At -F ' ' -c "SELECT (SELECT count(*) FROM sdocs), round(avg(waiting), 2), round(avg(active), 2) FROM samples WHERE run = '$run'")
      echo "$run: $tps titles/s, $stored of $(( n / c * c )) stored; active writers $active on average, waiting on a stripe $waiting"
      echo "$build $c $tps $waiting $active" >>"$WORK/results"
    done
  done
done
echo
echo "== medians of $ROUNDS (titles/s; writers waiting on a stripe / active, sampled every 10 ms)"
python3 - "$WORK/results" "$REV" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    build, c, tps, waiting, active = line.split()
    runs[(build, int(c))].append((float(tps), float(waiting), float(active)))
rev = sys.argv[2]
print("| clients | " + (f"{rev}: titles/s | waiting / active | " if rev else "") + "this tree: titles/s | waiting / active |" + (" this / rev |" if rev else ""))
print("| ---: |" + (" ---: | ---: |" if rev else "") + " ---: | ---: |" + (" ---: |" if rev else ""))
med = lambda xs, i: statistics.median(x[i] for x in xs)
for c in sorted({c for _, c in runs}):
    cells = []
    for build in (["rev", "this"] if rev else ["this"]):
        xs = runs[(build, c)]
        cells += [f"{med(xs, 0):,.0f}", f"{med(xs, 1):.2f} / {med(xs, 2):.2f}"]
    if rev:
        cells.append(f"{med(runs[('this', c)], 0) / med(runs[('rev', c)], 0):.2f}")
    print(f"| {c} | " + " | ".join(cells) + " |")
PY
