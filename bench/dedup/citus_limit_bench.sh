#!/usr/bin/env bash
# What simdup.similar_verify_limit costs a single-row INSERT on a Citus distributed table with
# similarity dedup, every candidate verified (limit 0: one query over every shard that verifies
# them all) against the limit (64: a first query over every shard counting the index values each
# candidate shares with the new row, then, when there are candidates, a second one verifying only
# the chosen ones), side by side in one run, on one cluster.
#
#   bench/dedup/citus_limit_bench.sh
#
# A throwaway coordinator + 2 workers (scripts/citus_cluster.sh through bench/common.sh's
# bench_citus, base port CITUS_LIMIT_PORT, default 57432; stopped on exit). The table:
# sd (id bigint PRIMARY KEY, body text), create_distributed_table('sd', 'id', shard_count => 4),
# simdup_enable_similar('sd', 'body', 0.5, on_duplicate => 'mark') (which adds dup_of).
#
# Texts: windows of the real Chinese news of bench/data/zh_news.jsonl (bench/fetch/news.sh), the
# bodies joined, taken as bench/dedup/family_bench.sh takes them (one after the other, skipping
# repeated and repetitive passages, so that no two are near-duplicates). Stored, by COPY (the
# checked write, in batches of 1,000 rows, at the default limit):
#
#   news    CITUS_LIMIT_ROWS (2000) windows of SIMDUP_BENCH_CORE + SIMDUP_BENCH_OWN (750)
#           characters;
#   family  CITUS_LIMIT_FAMILY (1000) rows: a common part (the corpus's first SIMDUP_BENCH_CORE
#           (450) characters) followed by its own window of SIMDUP_BENCH_OWN (300) characters:
#           Jaccard about 0.42 between two, under the threshold, so each is a candidate of every
#           other and none is marked.
#
# Then VACUUM ANALYZE, and three kinds of single-row INSERT ... VALUES, each timed in the server
# (clock_timestamp() around it, in a transaction that is rolled back, as bench/common.sh's
# timed_rollback), CITUS_LIMIT_REPS (15) of each kind for each limit, interleaved (a round: the
# three kinds at one limit, then at the other; the first limit alternating and the kinds' order
# rotating between rounds); each round is one psql session (an application's pooled connection),
# warmed first by a query over every shard and one untimed, rolled-back insert of another news
# window at each limit (a session's first checked insert costs 5-15 ms more: the connections to
# the workers, the first plans), the limit set with SET simdup.similar_verify_limit as the
# superuser postgres:
#
#   unrelated  a further news window, not stored (no candidates);
#   duplicate  a stored news window with a few characters appended (one candidate, marked);
#   family     a new family row (every family row a candidate).
#
# Reported: the time of each part; the medians in ms of each kind at each limit (and the fastest
# and slowest), limit / 0 per kind, how many rows each insert marked, and how many stored rows
# share a band with the first insert of each kind (`_simdup_similar_bands(...) && ...`, counted
# over every shard: its candidates by the bands); a line with the load average, cores,
# PostgreSQL version, git commit and the total run time. CITUS_LIMIT_VALUE (64): the limit
# compared with 0.
#
# simdup must be installed in the PostgreSQL 15 of SIMDUP_PG_CONFIG (scripts/install.sh); this
# script does not install it.
BENCH_PG=0 . "$(dirname "${BASH_SOURCE[0]}")/../common.sh"   # bench_citus, psql0, bench_workdir
export PG_CONFIG="${SIMDUP_PG_CONFIG:-/usr/bin/pg_config}"
PG_BIN="$("$PG_CONFIG" --bindir)"
SIMDUP_CITUS_PORT="${CITUS_LIMIT_PORT:-57432}"
SIMDUP_CITUS_KEEP=0   # always stopped on exit
ROWS="${CITUS_LIMIT_ROWS:-2000}"
FAMILY="${CITUS_LIMIT_FAMILY:-1000}"
REPS="${CITUS_LIMIT_REPS:-15}"
LIMIT="${CITUS_LIMIT_VALUE:-64}"
CORE="${SIMDUP_BENCH_CORE:-450}"
OWN="${SIMDUP_BENCH_OWN:-300}"
[ -f "$DATA/zh_news.jsonl" ] || { echo "no $DATA/zh_news.jsonl: run bench/fetch/news.sh" >&2; exit 1; }

t_start=$(date +%s.%N); t_part=$t_start
part() { # part NAME: prints the time since the previous part
  local now; now=$(date +%s.%N)
  printf 'part: %s in %.1f s\n' "$1" "$(echo "$now - $t_part" | bc)"
  t_part=$now
}
commit="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src core sql || echo ' + uncommitted changes')"
banner "similarity dedup on Citus: single-row INSERT at simdup.similar_verify_limit = 0 and $LIMIT; $ROWS news rows + $FAMILY family rows stored, $REPS inserts of each kind at each limit"

bench_workdir citus-limit
# The texts: news.tsv and family.tsv (id TAB body, COPY's text format: no tab, newline or
# backslash in a body), and one file a timed insert, ins/KIND_I.sql (its key, a space, and its
# body dollar-quoted). Family rows first (ids ROWS + 1 ...), then the news, then the unrelated
# windows, all from one pass over the corpus.
mkdir "$WORK/ins"
python3 - "$DATA/zh_news.jsonl" "$WORK" "$ROWS" "$FAMILY" "$REPS" "$CORE" "$OWN" "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)" <<'PY'
import sys
path, work, rows, family, reps, core, own = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:8])
sys.path.insert(0, sys.argv[8])
from windows import Windows  # as family_bench.sh takes them
corpus = Windows(path, core)
windows, common = corpus.take, corpus.common
fam = [common + w for w in windows(own, family + reps)]
news = windows(core + own, rows + reps + 1)
with open(f"{work}/news.tsv", "w") as f:
    for i, b in enumerate(news[:rows], 1):
        print(f"{i}\t{b}", file=f)
with open(f"{work}/family.tsv", "w") as f:
    for i, b in enumerate(fam[:family], 1):
        print(f"{rows + i}\t{b}", file=f)
tag = "$simdup_text$"
def insert(kind, i, key, body):
    assert tag not in body
    with open(f"{work}/ins/{kind}_{i}.sql", "w") as f:
        print(f"{key} {tag}{body}{tag}", file=f)
for i in range(1, reps + 1):
    insert("unrelated", i, 10_000_000 + i, news[rows + i - 1])
    # stored news rows spread over the table, "（完）" appended
    insert("duplicate", i, 20_000_000 + i, news[(i - 1) * rows // reps] + "（完）")
    insert("family", i, 30_000_000 + i, fam[family + i - 1])
insert("warm", 0, 40_000_000, news[rows + reps])
PY
part "texts from $DATA/zh_news.jsonl"

bench_citus
part "cluster start (coordinator + 2 workers, base port $BASE)"
psql0 -o /dev/null <<'SQL'
CREATE TABLE sd (id bigint PRIMARY KEY, body text);
SELECT create_distributed_table('sd', 'id', shard_count => 4);
SELECT simdup_enable_similar('sd', 'body', 0.5, on_duplicate => 'mark');
SQL
default_limit=$(psql0 -At -c 'SHOW simdup.similar_verify_limit')
versions="simdup $(psql0 -At -c "SELECT extversion FROM pg_extension WHERE extname = 'simdup'"), Citus $(psql0 -At -c "SELECT extversion FROM pg_extension WHERE extname = 'citus'"), $("$PG_BIN/postgres" --version)"
echo "$versions; commit $commit; simdup.similar_verify_limit default $default_limit"
part "table created and enabled"

psql0 -c "\\copy sd (id, body) FROM '$WORK/news.tsv'"
part "COPY of $ROWS news rows"
psql0 -c "\\copy sd (id, body) FROM '$WORK/family.tsv'"
part "COPY of $FAMILY family rows"
psql0 -c "VACUUM ANALYZE sd"
echo "stored: $(psql0 -At -c "SELECT count(*) || ' rows, ' || count(dup_of) || ' marked' FROM sd")"
part "VACUUM ANALYZE"

# The band parameters of the similarity index (k, bands, rows), to count each kind's candidates.
bands=$(psql0 -At -c "SELECT substring(indexdef from '_simdup_similar_bands\\(body, ([0-9]+, [0-9]+, [0-9]+)\\)')
                      FROM pg_indexes WHERE tablename = 'sd' AND indexdef LIKE '%_simdup_similar_bands%' LIMIT 1")
: >"$WORK/cand"
for kind in unrelated duplicate family; do
  read -r _ body <"$WORK/ins/${kind}_1.sql"
  c=$(psql0 -At -c "SELECT count(*) FROM sd WHERE _simdup_similar_bands(body, ${bands:-5, 35, 3}) && _simdup_similar_bands($body, ${bands:-5, 35, 3})" 2>&1) || c="?"
  echo "$kind $c" >>"$WORK/cand"
done
part "candidates counted (bands: ${bands:-?})"

# One round: a psql session, warmed, then the three kinds at each limit; lines "KIND LIMIT MS DUP_OF".
: >"$WORK/times"
for i in $(seq "$REPS"); do
  limits="0 $LIMIT"; [ $((i % 2)) = 0 ] && limits="$LIMIT 0"
  kinds=("unrelated duplicate family" "duplicate family unrelated" "family unrelated duplicate")
  {
    echo "SELECT count(*) FROM sd \\gset warm_"
    read -r key lit <"$WORK/ins/warm_0.sql"
    for l in $limits; do
      echo "SET simdup.similar_verify_limit = $l; BEGIN; INSERT INTO sd (id, body) VALUES ($key, $lit); ROLLBACK;"
    done
    for l in $limits; do
      echo "SET simdup.similar_verify_limit = $l;"
      for kind in ${kinds[$((i % 3))]}; do
        read -r key lit <"$WORK/ins/${kind}_$i.sql"
        cat <<SQL
BEGIN;
SELECT clock_timestamp() AS t0 \\gset
INSERT INTO sd (id, body) VALUES ($key, $lit);
SELECT '$kind $l ' || round(extract(epoch FROM clock_timestamp() - :'t0') * 1000, 3) || ' ' || coalesce((SELECT dup_of FROM sd WHERE id = $key), 0);
ROLLBACK;
SQL
      done
    done
  } >"$WORK/round.sql"
  psql0 -At -f "$WORK/round.sql" >>"$WORK/times"
done
part "$((REPS * 6)) timed inserts ($REPS rounds)"

total=$(echo "$(date +%s.%N) - $t_start" | bc)
echo
echo "load $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; $("$PG_BIN/postgres" --version); commit $commit; total run time $(printf '%.0f' "$total") s"
python3 - "$WORK/times" "$WORK/cand" "$LIMIT" "$REPS" <<'PY'
import statistics as st, sys
times, cand, limit, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rows = [l.split() for l in open(times) if l.strip()]
cands = dict(l.split(None, 1) for l in open(cand))
print(f"| insert | stored rows sharing a band | limit 0: median ms (min-max) | limit {limit}: median ms (min-max) | limit {limit} / 0 | marked (0 / {limit}) |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for kind in ("unrelated", "duplicate", "family"):
    ms = {l: [float(r[2]) for r in rows if r[0] == kind and r[1] == l] for l in ("0", limit)}
    marked = {l: sum(1 for r in rows if r[0] == kind and r[1] == l and r[3] != "0") for l in ("0", limit)}
    assert all(len(v) == reps for v in ms.values()), (kind, {l: len(v) for l, v in ms.items()})
    m0, ml = st.median(ms["0"]), st.median(ms[limit])
    span = lambda xs: f"({min(xs):.1f}-{max(xs):.1f})"
    print(f"| {kind} | {cands.get(kind, '?').strip()} | {m0:.2f} {span(ms['0'])} | {ml:.2f} {span(ms[limit])} | {ml / m0:.2f} | {marked['0']} / {marked[limit]} of {reps} |")
PY
