#!/usr/bin/env python3
"""Scores the near-duplicate benchmark pairs with the common Python recipes.

Usage (inside bench/.venv, see bench/python/setup_venv.sh; bench/quality/quality.sh runs it):
    python bench/quality/quality_py.py DIR

DIR holds texts.jsonl and pairs.jsonl written by
`cargo run --release -p simdup-bench --example quality_pairs -- export ...`. Every text is
fingerprinted once, then every pair is scored; the result is DIR/scores_python.tsv with one
row per pair:

  py_simhash  Hamming distance (0..64) of the "common Python recipe" of
              bench/python/py_baselines.py: jieba.lcut(body), tokens of only
              punctuation/whitespace/symbols dropped, word counts as weights,
              simhash.Simhash(counts, f=64) (PyPI simhash 2.1.2)
  py_minhash  Jaccard estimate (0..1) of datasketch.MinHash(num_perm=128) over the character
              5-shingles of body.lower(), as in bench/python/py_baselines.py (datasketch 2.0.0)
  pg_trgm     PostgreSQL pg_trgm's similarity(a, b) (0..1), computed here as pg_trgm computes
              it (trigrams() below): words are the maximal runs of letters and digits, each
              lower-cased and padded with two spaces in front and one behind, its trigrams
              (3 consecutive characters) collected into a set; similarity = |A & B| / |A | B|.
              Unicode letters count as letters (pg_trgm in a UTF-8 locale: CJK characters are
              letters; in the C locale pg_trgm would see no Chinese word at all). pg_trgm keeps a
              trigram of more than 3 bytes as a 24-bit CRC, so two different Chinese trigrams
              may collide there (chance ~1e-7 per pair of trigrams); here they never do.

Only the body is hashed (the recipes have no notion of a title).
"""

import json
import logging
import os
import re
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import py_baselines as pb  # noqa: E402  (the same recipe functions as the throughput baseline)


_WORD = re.compile(r"[^\W_]+")


def trigrams(text):
    """The set of pg_trgm trigrams of text (see the module docstring)."""
    out = set()
    for w in _WORD.findall(text):
        p = "  " + w.lower() + " "
        out.update(p[i:i + 3] for i in range(len(p) - 2))
    return out


def trgm_similarity(a, b):
    """pg_trgm's similarity(): 0 when either side has no trigram."""
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    pb.jieba.setLogLevel(logging.WARNING)
    pb.jieba.initialize()
    t0 = time.perf_counter()
    ids, bodies = [], []
    with open(os.path.join(d, "texts.jsonl"), encoding="utf-8") as f:
        for line in f:
            t = json.loads(line)
            ids.append(t["id"])
            bodies.append(t["body"])
    index = {x: i for i, x in enumerate(ids)}
    print(f"{len(ids)} texts", file=sys.stderr, flush=True)

    fps = []
    for i, b in enumerate(bodies):
        fps.append(pb.simhash_recipe(b))
        if i % 10000 == 9999:
            print(f"  simhash {i + 1}/{len(bodies)} ({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)
    print(f"simhash recipe done ({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)

    sigs = np.empty((len(bodies), pb.NUM_PERM), dtype=np.uint64)
    for i, b in enumerate(bodies):
        m = pb.MinHash(num_perm=pb.NUM_PERM)
        m.update_batch([s.encode("utf-8") for s in pb.shingles(b)])
        sigs[i] = m.hashvalues
        if i % 10000 == 9999:
            print(f"  minhash {i + 1}/{len(bodies)} ({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)
    print(f"datasketch MinHash done ({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)

    tri = [frozenset(trigrams(b)) for b in bodies]
    print(f"pg_trgm trigrams done ({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)

    out = os.path.join(d, "scores_python.tsv")
    n = 0
    with open(os.path.join(d, "pairs.jsonl"), encoding="utf-8") as f, \
            open(out, "w", encoding="utf-8", newline="\n") as o:
        o.write("pair\tpy_simhash\tpy_minhash\tpg_trgm\n")
        for line in f:
            p = json.loads(line)
            a, b = index[p["a"]], index[p["b"]]
            dist = bin(fps[a] ^ fps[b]).count("1")
            j = np.count_nonzero(sigs[a] == sigs[b]) / pb.NUM_PERM
            t = trgm_similarity(tri[a], tri[b])
            o.write(f"{p['id']}\t{dist}\t{j:.4f}\t{t:.4f}\n")
            n += 1
    print(f"wrote {out}: {n} pairs ({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
