#!/usr/bin/env bash
# The upgrades to this version, as a user does them, on a running server:
#   1. build simdup 0.1.0, 0.2.0 and 0.3.0 from their commits, those that build on this
#      PostgreSQL major (below); a cluster with a database whose tables were enabled under each
#      of them (search, and dedup in reject and mark mode; from 0.3.0 also a similarity dedup
#      table and stored MinHash signatures), with rows in them;
#   2. install this build while the server runs and a backend is busy in a simdup call
#      (scripts/install.sh renames files into place): the busy backend finishes, nothing crashes;
#      a second server that preloads simdup (shared_preload_libraries, as Citus set-ups do)
#      keeps running on the library it loaded, and after a restart runs the new one;
#   3. ALTER EXTENSION simdup UPDATE in each database (0.1.0 -> 0.2.0 -> 0.3.0 -> this version,
#      0.2.0 -> ..., 0.3.0 -> this version): each schema equals a fresh install's
#      (sql/schema/<version>.txt); the old tables still search exactly, dedup (their triggers,
#      installed before verification, still decide by the distance alone), and pair; then
#      simdup_reindex rebuilds their indexes (0.1.0's move to the key indexes) and everything
#      still holds; the similarity table still marks near-duplicates and the stored MinHash
#      signatures equal this version's; a table enabled after the update verifies its candidates.
# Which old versions build on which major: 0.1.0 and 0.2.0 have a Cargo feature for PostgreSQL
# 15 only; 0.3.0 builds on 15 to 18 but not on 14 (it calls MarkGUCPrefixReserved and
# pgstat_assoc_relation, which PostgreSQL 14 does not have), so no 14 server can run an older
# simdup: on 14 there is nothing to upgrade from and the test says so.
# Usage: tests/upgrade/upgrade.sh [--debug | --profile NAME]   (the build of this tree to
#   install: release by default)
# SIMDUP_UPGRADE_PORT (default 54331); clusters "<SIMDUP_CLUSTER>-upgrade" and
# "<SIMDUP_CLUSTER>-upgrade-preload" (default upgrade, upgrade-preload). Leaves this tree's
# build installed.
set -euo pipefail
. "$(dirname "$0")/../../scripts/setup.sh" >/dev/null
cd "$SIMDUP_ROOT"
OLD_COMMIT=6335b0abf524b2cc72885cb4e2374262b339d2be   # main when 0.1.0 was released
V020_COMMIT=3a8db1388493f719ea8e9b0997b1519aef38c624  # main when 0.2.0 was released
V030_COMMIT=d0873dd4f42a35cfc89fad242da904607c0e80d3  # main when 0.3.0 was released
# How EXPLAIN shows the planner's index path on table fps.
INDEX_PATH_RE="Tid Scan on fps"
VERSION=$(python3 -c 'import tomllib,sys; print(tomllib.load(open(sys.argv[1],"rb"))["package"]["version"])' Cargo.toml)
port=${SIMDUP_UPGRADE_PORT:-54331}
pport=$((port + 10))   # the preloading server
mode=()
case "${1:-}" in
  --debug) mode=(--debug) ;;
  --profile) mode=(--profile "$2") ;;
esac
cluster="${SIMDUP_CLUSTER:+$SIMDUP_CLUSTER-}upgrade"
sock=/tmp/simdup-$cluster/sock
# The old versions that build on this major: VERSION COMMIT DATABASE, oldest first.
case "$PG_MAJOR" in
  15) olds=("0.1.0 $OLD_COMMIT upgrade" "0.2.0 $V020_COMMIT upgrade2" "0.3.0 $V030_COMMIT upgrade3") ;;
  14) olds=() ;;
  *) olds=("0.3.0 $V030_COMMIT upgrade3") ;;
esac
if ((${#olds[@]} == 0)); then
  echo "upgrade: no earlier simdup release builds on PostgreSQL $PG_MAJOR (0.3.0 needs 15 or newer): nothing to upgrade from" >&2
  exit 0
fi
fail() { echo "upgrade test: FAILED: $*" >&2; exit 1; }
step() { printf '\033[1mupgrade:\033[0m %s\n' "$*" >&2; }
db=upgrade   # the database q() talks to
q() { psql -X -q -At -v ON_ERROR_STOP=1 -h "$sock" -p "$port" -U postgres -d "$db" "$@"; }

old=$(mktemp -d); v020=$(mktemp -d); v030=$(mktemp -d)
trap 'rm -rf "$old" "$v020" "$v030"; scripts/cluster.sh stop "$cluster"; scripts/cluster.sh stop "$cluster-preload"' EXIT
pq() { psql -X -q -At -v ON_ERROR_STOP=1 -h "/tmp/simdup-$cluster-preload/sock" -p "$pport" -U postgres -d postgres "$@"; }
# The tables each old version's database gets: search on an adopted fingerprint column (random
# fingerprints and a cluster of near-duplicates of row 1), dedup in reject and mark mode.
make_tables() {
q <<'SQL'
CREATE EXTENSION simdup;
-- Search: random fingerprints and a cluster of near-duplicates of row 1.
CREATE TABLE fps (id int PRIMARY KEY, fp bigint);
INSERT INTO fps SELECT g, hashint8extended(g, 7) FROM generate_series(1, 20000) g;
INSERT INTO fps SELECT 100000 + g, (SELECT fp FROM fps WHERE id = 1) # (1::bigint << (g % 64)) # (1::bigint << ((g * 13) % 64))
FROM generate_series(1, 40) g;
SELECT simdup_enable('fps', NULL, 'fp');
-- Dedup: reject and mark.
CREATE TABLE news (id int PRIMARY KEY, body text);
SELECT simdup_enable('news', 'body', on_duplicate => 'reject');
INSERT INTO news VALUES
  (1, '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。'),
  (2, 'PostgreSQL is a powerful, open source object-relational database system with over thirty years of active development.');
CREATE TABLE archive (id int PRIMARY KEY, body text);
SELECT simdup_enable('archive', 'body', on_duplicate => 'mark');
INSERT INTO archive VALUES
  (1, '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。'),
  (2, '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九！');
ANALYZE;
SQL
}
# From 0.3.0: a similarity dedup table in mark mode and stored MinHash signatures.
make_similar_tables() {
q <<'SQL'
CREATE TABLE sim (id int PRIMARY KEY, body text);
SELECT count(*) FROM simdup_enable_similar('sim', 'body', threshold => 0.5, on_duplicate => 'mark');
INSERT INTO sim VALUES
  (1, 'The city council approved a new budget for parks, libraries and public transport on Monday evening after a long debate.'),
  (2, 'The city council approved a new budget for parks, libraries and public transport on Monday evening after a long debate!'),
  (3, '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三。');
CREATE TABLE mh (id int PRIMARY KEY, body text, sig bigint[]);
INSERT INTO mh SELECT id, body, minhash(body, 5, 128) FROM sim;
INSERT INTO mh SELECT 10 + id, body, minhash(body, 5, 128) FROM news;
SQL
}
# The similarity and MinHash tables after the update: the stored signatures equal this version's
# and estimate the same Jaccard similarity; a near-duplicate of an old row is marked with it.
check_similar_tables() { # check_similar_tables PHASE
  local got
  [ "$(q -c "SELECT count(*) FROM mh WHERE sig IS DISTINCT FROM minhash(body, 5, 128)")" = 0 ] \
    || fail "$1: stored MinHash signatures differ from this version's"
  [ "$(q -c "SELECT minhash_jaccard(a.sig, b.sig) > 0.5 AND minhash_jaccard(a.sig, c.sig) < 0.2 FROM mh a, mh b, mh c WHERE a.id = 1 AND b.id = 2 AND c.id = 3")" = t ] \
    || fail "$1: minhash_jaccard on the stored signatures"
  [ "$(q -c "SELECT string_agg(id || ':' || coalesce(dup_of::text, '-'), ' ' ORDER BY id) FROM sim WHERE id <= 3")" = "1:- 2:1 3:-" ] \
    || fail "$1: the similarity table's rows stored before the update"
  got=$(q -c "INSERT INTO sim VALUES (100 + (SELECT count(*) FROM sim), '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三！') RETURNING dup_of")
  [ "$got" = 3 ] || fail "$1: the similarity trigger marked a near-duplicate with dup_of = '$got'"
  [ "$(q -c "SELECT count(*) FROM simdup_similar('sim', (SELECT body FROM sim WHERE id = 1)) s")" -ge 2 ] \
    || fail "$1: simdup_similar"
}

# One target directory for both old versions, kept between runs: they pin the same crates, which
# build once. Their own crates have the same names in both trees (the library, libsimdup.so, is
# one file name for both), and cargo judges a path crate fresh by the modification times of its
# sources; tar gives the files their commit's time, older than the other tree's build. So every
# file is touched first, and cargo rebuilds those crates from the tree at hand.
old_target="$SIMDUP_ROOT/target/old-versions"
scripts/cluster.sh start "$cluster" "$port"

# An older version built from its commit into DIR and installed, and a database DB whose tables
# were enabled under it.
old_version_db() { # old_version_db VERSION COMMIT DIR DB
  local version=$1 commit=$2 src=$3
  step "build and install simdup $version (commit ${commit:0:7}); a database enabled under it"
  git -C "$SIMDUP_ROOT" archive "$commit" | tar -x -C "$src"
  find "$src" -type f -exec touch {} +
  CARGO_TARGET_DIR="$old_target" scripts/install.sh --source "$src" --debug --pg-config "$PG_CONFIG"
  psql -X -q -h "$sock" -p "$port" -U postgres -d postgres -c "CREATE DATABASE $4"
  db=$4
  make_tables
  [ "$(q -c "SELECT extversion FROM pg_extension WHERE extname = 'simdup'")" = "$version" ] || fail "$version is not installed"
  [ "$(q -c "SELECT string_agg(id || ':' || coalesce(dup_of::text, '-'), ' ' ORDER BY id) FROM archive")" = "1:- 2:1" ] \
    || fail "$version mark mode"
  [ "$version" = 0.3.0 ] && make_similar_tables
  return 0
}
dbs=()
for o in "${olds[@]}"; do
  read -r version commit odb <<<"$o"
  case "$version" in 0.1.0) dir=$old ;; 0.2.0) dir=$v020 ;; *) dir=$v030 ;; esac
  old_version_db "$version" "$commit" "$dir" "$odb"
  dbs+=("$odb")
done
last_old="$version"
db=${dbs[0]}

PG_EXTRA_OPTS="-c shared_preload_libraries=simdup" scripts/cluster.sh start "$cluster-preload" "$pport"
pq -c "CREATE EXTENSION simdup" >/dev/null
[ "$(pq -c "SELECT simhash('preloaded server') IS NOT NULL")" = t ] || fail "the preloading server does not run simdup $last_old"

step "install this build while a backend is busy in simdup ($last_old library mapped)"
q -c "SELECT count(simhash(repeat(body, 20000))) FROM news, generate_series(1, 40)" >/tmp/simdup-upgrade-busy.out 2>&1 &
busy=$!
sleep 1
scripts/install.sh "${mode[@]}" --pg-config "$PG_CONFIG"
wait "$busy" || { cat /tmp/simdup-upgrade-busy.out; fail "a backend running simdup died while the new build was installed"; }
[ "$(cat /tmp/simdup-upgrade-busy.out)" = 80 ] || fail "the busy backend's answer: $(cat /tmp/simdup-upgrade-busy.out)"
pg_isready -q -h "$sock" -p "$port" || fail "the server is down after the install"
# The preloading server keeps running on the library its postmaster loaded: new backends
# inherit it, so this version's functions are not there until a restart.
pg_isready -q -h "/tmp/simdup-$cluster-preload/sock" -p "$pport" || fail "the preloading server is down after the install"
[ "$(pq -c "SELECT simhash('preloaded server') IS NOT NULL")" = t ] || fail "the preloading server cannot run simdup after the install"
pq -c "ALTER EXTENSION simdup UPDATE" >/dev/null 2>&1 && fail "$VERSION functions loaded without a restart of the preloading server"
scripts/cluster.sh restart "$cluster-preload"
pq -c "ALTER EXTENSION simdup UPDATE"
[ "$(pq -c "SELECT extversion FROM pg_extension WHERE extname = 'simdup'")" = "$VERSION" ] || fail "the preloading server did not update"
[ "$(pq -c "SELECT _simdup_key(1, 0) IS NOT NULL")" = t ] || fail "the preloading server does not run the new library after its restart"
step "preloading server: kept running on its library during the install, runs the new one after a restart"

for db in "${dbs[@]}"; do
from=$(q -c "SELECT extversion FROM pg_extension WHERE extname = 'simdup'")
step "$db: ALTER EXTENSION simdup UPDATE ($from -> $VERSION)"
q -c "ALTER EXTENSION simdup UPDATE"
[ "$(q -c "SELECT extversion FROM pg_extension WHERE extname = 'simdup'")" = "$VERSION" ] || fail "$db: not at $VERSION"
scripts/schema_check.sh "$sock" "$port" --database "$db"

step "$db: the $from tables after the update, then after simdup_reindex"
for phase in updated reindexed; do
  if [ "$phase" = reindexed ]; then
    q -c "SELECT simdup_reindex('fps'), simdup_reindex('news'), simdup_reindex('archive')" >/dev/null
    want_kind=key
  else
    want_kind=$([ "$from" = 0.1.0 ] && echo block || echo key)
  fi
  [ "$(q -c "SELECT string_agg(DISTINCT kind, ',') FROM simdup_block_indexes('fps')")" = "$want_kind" ] || fail "$phase: block index kind"
  plan=$(q -c "EXPLAIN (COSTS OFF) SELECT id FROM fps WHERE hamming(fp, (SELECT fp FROM fps WHERE id = 1)) <= 10")
  grep -Eq "$INDEX_PATH_RE" <<<"$plan" || fail "$phase: hamming(fp, q) <= k is not served by the block indexes: $plan"
  mism=$(q <<'SQL'
CREATE TEMP TABLE qs AS SELECT fp FROM fps WHERE id IN (1, 2, 3, 100001) UNION ALL SELECT hashint8extended(g, 9) FROM generate_series(1, 26) g;
SET enable_seqscan = off;
CREATE TEMP TABLE via_index AS SELECT q.fp AS q, k, f.id FROM qs q, generate_series(0, 16) k, fps f WHERE hamming(f.fp, q.fp) <= k;
RESET enable_seqscan;
SET simdup.index_search = off;
CREATE TEMP TABLE via_seq AS SELECT q.fp AS q, k, f.id FROM qs q, generate_series(0, 16) k, fps f WHERE hamming(f.fp, q.fp) <= k;
RESET simdup.index_search;
SELECT count(*) || ' ' || (SELECT count(*) FROM via_index WHERE k = 16)
FROM ((TABLE via_index EXCEPT ALL TABLE via_seq) UNION ALL (TABLE via_seq EXCEPT ALL TABLE via_index)) x;
SQL
)
  [ "${mism%% *}" = 0 ] || fail "$phase: index answers differ from a sequential scan ($mism)"
  [ "${mism##* }" -gt 40 ] || fail "$phase: too few matches to mean anything ($mism)"
  # Dedup, reject: a near-duplicate of a row stored under 0.1.0 is refused with 23505.
  err=$(q -c "INSERT INTO news VALUES (10 + (SELECT count(*) FROM news), 'PostgreSQL is a powerful, open source object-relational database system with over thirty years of active development!')" 2>&1 || true)
  grep -q "near-duplicate row violates simdup_dedup" <<<"$err" || fail "$phase: reject mode let a near-duplicate in: $err"
  # The fields drivers map unique violations by, as libpq hands them to a client (psql prints
  # PG_DIAG_SCHEMA_NAME, PG_DIAG_TABLE_NAME and PG_DIAG_CONSTRAINT_NAME at VERBOSITY verbose).
  for field in "ERROR:  23505" "SCHEMA NAME:  public" "TABLE NAME:  news" "CONSTRAINT NAME:  simdup_dedup"; do
    grep -q "$field" <<<"$(q -v VERBOSITY=verbose -c "INSERT INTO news VALUES (99, 'PostgreSQL is a powerful, open source object-relational database system with over thirty years of active development!')" 2>&1)" \
      || fail "$phase: the client does not get the field $field"
  done
  n=$(q -c "INSERT INTO news VALUES (20 + (SELECT count(*) FROM news), '$phase: ' || (CASE '$phase' WHEN 'updated' THEN '完全不同的一段新闻：今天上午，一场春雨降临城市，气温明显下降。' ELSE 'An unrelated story: the city council approved a new budget for parks and libraries on Monday.' END)) RETURNING id" | wc -l)
  [ "$n" = 1 ] || fail "$phase: reject mode refused a new document"
  # Dedup, mark: dup_of names the 0.1.0 row.
  got=$(q -c "INSERT INTO archive VALUES (30 + (SELECT count(*) FROM archive), '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。。') RETURNING dup_of")
  [ "$got" = 1 ] || fail "$phase: mark mode gave dup_of = '$got'"
  # Batch.
  [ "$(q -c "SELECT count(*) FROM simdup_pairs('fps', 3) WHERE a = '1' OR b = '1'")" -ge 1 ] || fail "$phase: simdup_pairs"
  [ "$(q -c "SELECT count(*) FROM simdup_pairs('archive', 10, verify => true) WHERE a = '1'")" -ge 1 ] || fail "$phase: simdup_pairs verified"
  # The old triggers keep their five arguments: no verification, as before the update.
  [ "$(q -c "SELECT threshold IS NULL FROM simdup_tables WHERE tbl = 'archive'::regclass")" = t ] || fail "$phase: archive's thresholds"
  if [ "$from" = 0.3.0 ]; then
    check_similar_tables "$phase"
    step "$db $phase: similarity table and stored MinHash signatures: ok"
  fi
  step "$db $phase: kind $want_kind, search exact ($mism), reject, mark, pairs: ok"
done
# A table enabled after the update verifies its candidates: an unrelated text within k (every
# row is, at k = 64) is no near-duplicate, an edited copy is.
got=$(q <<'SQL'
CREATE TABLE fresh (id int PRIMARY KEY, body text);
SELECT simdup_enable('fresh', 'body', on_duplicate => 'mark', max_distance => 64);
INSERT INTO fresh SELECT id, body FROM archive WHERE id = 1;
INSERT INTO fresh SELECT 2, body FROM news WHERE id = 2;
INSERT INTO fresh SELECT 3, body FROM archive WHERE id = 2;
SELECT string_agg(id || ':' || coalesce(dup_of::text, '-'), ' ' ORDER BY id) FROM fresh;
DROP TABLE fresh;
SQL
)
[ "$(tail -1 <<<"$got")" = "1:- 2:- 3:1" ] || fail "$db: a table enabled after the update: $got"
scripts/schema_check.sh "$sock" "$port" --database "$db"
done
step "all upgrade checks passed"
