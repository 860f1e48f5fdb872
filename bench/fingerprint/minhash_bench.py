#!/usr/bin/env python3
"""MinHash benchmark of simdup against datasketch and rensa (run by bench/fingerprint/minhash_bench.sh).

1. Signatures per second over the same real documents (zh_news.jsonl bodies):
     simdup      SELECT count(minhash(body)) FROM docs   (server-side time, one backend,
                 no parallel workers; NFKC + lower case, whitespace collapsed, character
                 5-shingles, xxh3, 128 permutations)
     datasketch  MinHash(num_perm=128).update_batch(utf-8 5-shingles); digest()
     rensa       RMinHash(num_perm=128, seed=42).update(5-shingles); digest()
   The Python shingles are those of ' '.join(text.lower().split()) (the same whitespace rule,
   lower case without NFKC), built inside the timed loop as simdup builds its own.
   Each run times the three in turn; the report gives the median of the runs and its ratios.
2. Candidate search with the GIN index on a table of len(docs) x copies rows (each document
   and copies-1 edited versions of it: one sentence dropped and a tag appended):
     WHERE minhash_bands(sig, 16, 8) && minhash_bands(minhash($1), 16, 8)
       AND minhash_jaccard(sig, minhash($1)) >= 0.8
   for Q query texts that are edited versions of documents (not rows of the table), timed per
   query inside the server (PL/pgSQL, clock_timestamp()). Median and p95 of each run, then the
   median over runs; a few queries are also timed without the index (sequential scan).
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata

NUM_PERM = 128
K = 5


def load(path, limit):
    docs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            body = d["body"].replace("\x00", "")
            if body.strip():
                docs.append(body)
            if limit and len(docs) >= limit:
                break
    return docs


def py_shingles(text):
    t = " ".join(text.lower().split())
    if len(t) < K:
        return {t} if t else set()
    return {t[i : i + K] for i in range(len(t) - K + 1)}


class Psql:
    def __init__(self, psql, host, port, db):
        self.base = [psql, "-h", host, "-p", str(port), "-U", "postgres", "-d", db,
                     "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"]

    def run(self, sql):
        out = subprocess.run(self.base + ["-c", sql], check=True, capture_output=True, text=True)
        return out.stdout.strip()

    def script(self, sql):
        out = subprocess.run(self.base + ["-f", "-"], input=sql, check=True, capture_output=True, text=True)
        return out.stdout.strip()


def median(xs):
    return statistics.median(xs)


def p95(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


SETUP = r"""
SET client_min_messages = warning;
DROP TABLE IF EXISTS docs, big;
CREATE TABLE docs (n int PRIMARY KEY, body text NOT NULL);
CREATE OR REPLACE FUNCTION bench_seconds(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
  EXECUTE q;
  RETURN extract(epoch FROM clock_timestamp() - t0);
END $$;
-- Per-query latency (ms) and result size of the GIN search for each text of qs.
CREATE OR REPLACE FUNCTION bench_search(qs text[], threshold float8)
RETURNS TABLE (ms float8, hits bigint, found_source boolean) LANGUAGE plpgsql AS $$
DECLARE q text; t0 timestamptz; i int := 0;
BEGIN
  FOREACH q IN ARRAY qs LOOP
    i := i + 1;
    t0 := clock_timestamp();
    SELECT count(*), coalesce(bool_or(doc = (SELECT src FROM bench_queries WHERE qno = i)), false)
      INTO hits, found_source
    FROM big
    WHERE minhash_bands(sig, 16, 8) && minhash_bands(minhash(q), 16, 8)
      AND minhash_jaccard(sig, minhash(q)) >= threshold;
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
    RETURN NEXT;
  END LOOP;
END $$;
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--psql", required=True)
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--db", default="postgres")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="documents to use (0 = all)")
    ap.add_argument("--copies", type=int, default=14, help="rows per document in the search table")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seqscan-queries", type=int, default=5)
    ap.add_argument("--out", help="write the results as JSON here")
    a = ap.parse_args()

    from datasketch import MinHash
    try:
        from rensa import RMinHash
        rensa_version = metadata.version("rensa")
    except ImportError as e:  # reported, not fatal
        RMinHash, rensa_version = None, f"not installed ({e})"

    docs = load(a.data, a.limit)
    nbytes = sum(len(d.encode()) for d in docs)
    print(f"{len(docs)} documents, {nbytes / 1e6:.1f} MB UTF-8, from {a.data}", flush=True)

    db = Psql(a.psql, a.host, a.port, a.db)
    db.script(SETUP)
    with tempfile.NamedTemporaryFile("w", suffix=".csv", encoding="utf-8", newline="", delete=False) as f:
        w = csv.writer(f)
        for i, d in enumerate(docs):
            w.writerow([i, d])
        csv_path = f.name
    try:
        db.run(f"\\copy docs (n, body) FROM '{csv_path}' WITH (FORMAT csv)")
    finally:
        os.unlink(csv_path)
    db.run("VACUUM ANALYZE docs")
    version = db.run("SELECT extversion FROM pg_extension WHERE extname = 'simdup'")
    server = db.run("SHOW server_version")

    # ------------------------------------------------------------------ signatures
    no_par = "SET max_parallel_workers_per_gather = 0; "
    def sql_seconds(q):
        return float(db.run(no_par + f"SELECT bench_seconds($q${q}$q$)"))

    def datasketch_seconds():
        t0 = time.perf_counter()
        for d in docs:
            m = MinHash(num_perm=NUM_PERM)
            m.update_batch([s.encode("utf-8") for s in py_shingles(d)])
            m.digest()
        return time.perf_counter() - t0

    def rensa_seconds():
        t0 = time.perf_counter()
        for d in docs:
            m = RMinHash(num_perm=NUM_PERM, seed=42)
            m.update(list(py_shingles(d)))
            m.digest()
        return time.perf_counter() - t0

    def shingles_seconds():
        t0 = time.perf_counter()
        for d in docs:
            py_shingles(d)
        return time.perf_counter() - t0

    # The Python libraries' own work, without building the shingle sets in Python.
    shingle_lists = [list(py_shingles(d)) for d in docs]
    shingle_bytes = [[s.encode("utf-8") for s in l] for l in shingle_lists]

    def datasketch_hash_only_seconds():
        t0 = time.perf_counter()
        for l in shingle_bytes:
            m = MinHash(num_perm=NUM_PERM)
            m.update_batch(l)
            m.digest()
        return time.perf_counter() - t0

    def rensa_hash_only_seconds():
        t0 = time.perf_counter()
        for l in shingle_lists:
            m = RMinHash(num_perm=NUM_PERM, seed=42)
            m.update(l)
            m.digest()
        return time.perf_counter() - t0

    sig = {"simdup": [], "datasketch": [], "rensa": [], "scan_only": [], "py_shingles_only": [],
           "datasketch_hash_only": [], "rensa_hash_only": []}
    sql_sig = "SELECT count(minhash(body)) FROM docs"
    sql_scan = "SELECT count(length(body)) FROM docs"
    sql_seconds(sql_sig)  # warm-up: caches, the library, jieba is not needed here
    for r in range(a.runs):
        sig["scan_only"].append(sql_seconds(sql_scan))
        sig["simdup"].append(sql_seconds(sql_sig))
        sig["datasketch"].append(datasketch_seconds())
        if RMinHash:
            sig["rensa"].append(rensa_seconds())
        sig["py_shingles_only"].append(shingles_seconds())
        sig["datasketch_hash_only"].append(datasketch_hash_only_seconds())
        if RMinHash:
            sig["rensa_hash_only"].append(rensa_hash_only_seconds())
        print(f"run {r + 1}: " + ", ".join(f"{k} {v[-1]:.3f}s" for k, v in sig.items() if v), flush=True)
    rate = {k: len(docs) / median(v) for k, v in sig.items() if v}

    # ------------------------------------------------------------------ search table
    print(f"building the search table: {len(docs)} x {a.copies} rows ...", flush=True)
    t0 = time.perf_counter()
    db.script(f"""
SET client_min_messages = warning;
CREATE TABLE big (
  id   bigserial PRIMARY KEY,
  doc  int NOT NULL,
  body text NOT NULL,
  sig  bigint[] GENERATED ALWAYS AS (minhash(body)) STORED
);
-- Copy v of a document drops its sentence number v and appends a tag.
INSERT INTO big (doc, body)
SELECT n, CASE WHEN v = 0 THEN body
               ELSE array_to_string((string_to_array(body, '。'))[:v] || (string_to_array(body, '。'))[v + 2:], '。')
                    || '（编辑' || v || '）' END
FROM docs, generate_series(0, {a.copies - 1}) v;
""")
    t_insert = time.perf_counter() - t0
    t0 = time.perf_counter()
    db.script("SET maintenance_work_mem = '256MB'; CREATE INDEX big_bands ON big USING gin (minhash_bands(sig, 16, 8)); VACUUM ANALYZE big;")
    t_index = time.perf_counter() - t0
    rows = int(db.run("SELECT count(*) FROM big"))
    sizes = db.run("SELECT pg_size_pretty(pg_table_size('big')) || ' / ' || pg_size_pretty(pg_relation_size('big_bands'))")
    print(f"{rows} rows: insert with generated signatures {t_insert:.1f}s, GIN index {t_index:.1f}s (table / index {sizes})", flush=True)

    # Query texts: edited versions of documents of at least 6 sentences spread over the corpus
    # (a source prepended, the third sentence dropped), not rows of the table.
    db.script(f"""
DROP TABLE IF EXISTS bench_queries;
CREATE TABLE bench_queries AS
WITH eligible AS (
  SELECT n, body, row_number() OVER (ORDER BY n) AS rn, count(*) OVER () AS total
  FROM docs WHERE cardinality(string_to_array(body, '。')) >= 6
)
SELECT row_number() OVER (ORDER BY n)::int AS qno, n AS src,
       '据新华社报道，' || array_to_string((string_to_array(body, '。'))[:2] || (string_to_array(body, '。'))[4:], '。') AS q
FROM eligible WHERE rn % greatest(1, total / {a.queries}) = 0 ORDER BY n LIMIT {a.queries};
""")
    nq = int(db.run("SELECT count(*) FROM bench_queries"))
    plan = db.run("EXPLAIN (COSTS OFF) SELECT count(*) FROM big "
                  "WHERE minhash_bands(sig, 16, 8) && minhash_bands(minhash((SELECT q FROM bench_queries WHERE qno = 1)), 16, 8) "
                  "AND minhash_jaccard(sig, minhash((SELECT q FROM bench_queries WHERE qno = 1))) >= 0.8")
    print("plan (no enable_* settings changed):\n  " + plan.replace("\n", "\n  "), flush=True)

    search = []
    for r in range(a.runs):
        out = db.run("SELECT ms, hits, found_source FROM bench_search((SELECT array_agg(q ORDER BY qno) FROM bench_queries), 0.8)")
        ms, hits, found = [], [], 0
        for line in out.splitlines():
            m, h, fs = line.split("|")
            ms.append(float(m)); hits.append(int(h)); found += fs == "t"
        search.append({"median_ms": median(ms), "p95_ms": p95(ms), "mean_hits": sum(hits) / len(hits), "found_source": found})
        print(f"search run {r + 1}: median {search[-1]['median_ms']:.2f} ms, p95 {search[-1]['p95_ms']:.2f} ms, "
              f"{search[-1]['mean_hits']:.1f} rows per query, source found for {found}/{nq}", flush=True)

    seq = []
    for r in range(a.runs):
        out = db.run("SET enable_bitmapscan = off; SET enable_indexscan = off; SET max_parallel_workers_per_gather = 0; "
                     f"SELECT ms FROM bench_search((SELECT array_agg(q ORDER BY qno) FROM bench_queries WHERE qno <= {a.seqscan_queries}), 0.8)")
        seq.append(median([float(x) for x in out.splitlines()]))
        print(f"seq-scan run {r + 1}: median {seq[-1]:.1f} ms over {a.seqscan_queries} queries", flush=True)

    res = {
        "docs": len(docs), "mb": nbytes / 1e6, "runs": a.runs, "server": server, "simdup": version,
        "datasketch": metadata.version("datasketch"), "rensa": rensa_version,
        "signature_seconds": sig, "signatures_per_second": rate,
        "search_rows": rows, "insert_seconds": t_insert, "index_seconds": t_index, "sizes": sizes,
        "queries": nq, "search": search, "seqscan_median_ms": seq, "plan": plan,
    }
    s_med = median([s["median_ms"] for s in search])
    s_p95 = median([s["p95_ms"] for s in search])
    print()
    print(f"== signatures per second (median of {a.runs} runs, {len(docs)} docs, n = {NUM_PERM}, k = {K}; one core each)")
    for k in ("simdup", "datasketch", "rensa", "scan_only"):
        if k in rate:
            print(f"  {k:<11} {rate[k]:>10.0f} /s   {len(docs) / rate[k]:.3f} s")
    # Ratios within each run (the three are timed one after another), then their median.
    def ratio(other):
        return median([o / s for o, s in zip(sig[other], sig["simdup"])])
    res["speedup_median_of_runs"] = {k: ratio(k) for k in sig if k not in ("simdup", "scan_only", "py_shingles_only") and sig[k]}
    print(f"  simdup / datasketch = {ratio('datasketch'):.1f}x   (per-run ratios {', '.join(f'{o / s:.1f}' for o, s in zip(sig['datasketch'], sig['simdup']))})")
    if sig["rensa"]:
        print(f"  simdup / rensa      = {ratio('rensa'):.2f}x   (per-run ratios {', '.join(f'{o / s:.2f}' for o, s in zip(sig['rensa'], sig['simdup']))})")
    else:
        print(f"  rensa: {rensa_version}")
    print(f"  (Python shingling alone: {rate['py_shingles_only']:.0f} docs/s; given prebuilt shingle lists:"
          f" datasketch {rate['datasketch_hash_only']:.0f} /s"
          + (f", rensa {rate['rensa_hash_only']:.0f} /s" if 'rensa_hash_only' in rate else "") + ")")
    print(f"  simdup / datasketch given prebuilt shingles = {ratio('datasketch_hash_only'):.1f}x")
    if sig["rensa_hash_only"]:
        print(f"  simdup / rensa given prebuilt shingles      = {ratio('rensa_hash_only'):.2f}x")
    print(f"== search on {rows} rows, {nq} queries, GIN on minhash_bands(sig, 16, 8), estimate >= 0.8")
    print(f"  median latency {s_med:.2f} ms, p95 {s_p95:.2f} ms (medians of {a.runs} runs)")
    print(f"  sequential scan {median(seq):.1f} ms (median of {a.seqscan_queries} queries, median of {a.runs} runs):"
          f" index search {median(seq) / s_med:.0f}x faster")
    print(f"  the source document was among the results for {min(s['found_source'] for s in search)}/{nq} queries;"
          f" {search[0]['mean_hits']:.1f} rows per query on average")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    sys.exit(main())
