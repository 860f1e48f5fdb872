#!/usr/bin/env python3
"""Could a key index find short texts wrapped in boilerplate? A design measured, not built.

The similarity dedup trigger finds its candidates in LSH bands, which estimate Jaccard
similarity. A text of under 50 characters wrapped in a header and footer longer than itself
has a low Jaccard similarity with its copy, so the pair is rarely a candidate, although the
containment rule (`containment => 0.8`) would judge it a near-duplicate (docs/quality.md, "Why
boilerplate on short texts stays below 0.95"). This script measures one way to make such pairs
candidates, and what it would cost:

- a *tiny* text A (|5-shingles| + 4 < 50 characters) keeps its containment prefix: the first
  n - floor(0.8 n) + m of its n shingle hashes in ascending order. If at least 0.8 n of A's
  shingles are in B, the smallest m of them are among these (the prefix-filter argument of
  simdup_core::similar::prefix_filter, for containment);
- every text B keeps a sketch: its s smallest shingle hashes;
- (A, B) is a candidate when at least m of A's prefix are in B's sketch. Whether the smallest
  shared shingles are in B's sketch depends on how much B adds: the only approximate step.

Part 1 scores the trigger's rule with containment 0.8 (Jaccard >= 0.5, or short texts'
3-shingle Jaccard >= 0.5, or containment >= 0.8) on the quality benchmark's labelled pairs,
with candidates = a shared band (dedup_candidates.tsv, as bench/containment_eval.py) or the key
above. Part 2 measures the price: how many rows of a real corpus each tiny text would have to
verify, among the Python documentation's sections (bench/data/en_pydoc.jsonl) and its sentences
of 50-300 characters, for tiny texts that are other sentences of the same documentation; with
hash order and with the most frequent shingles (document frequency in one half of the sections
and the Lee corpus) ordered last, measured on the other half.

Shingles are simdup's (NFKC, lower case, whitespace runs as one space, character 5-grams),
hashed with blake2b (a random order, as simdup's xxh3 is; the figures are about the order being
random, not about which hash).

Usage: python3 bench/containment_keys.py [QUALITY_DIR] [PYDOC_JSONL]
  (defaults bench/data/quality, bench/data/en_pydoc.jsonl: run bench/quality.sh and
  bench/fetch_pydoc.sh first). About 3 minutes. Prints markdown.
"""
import collections
import hashlib
import json
import math
import random
import re
import sys

from containment_eval import K, SHORT_TEXT_CHARS, load, shingles, short_set, tally

DIR = sys.argv[1] if len(sys.argv) > 1 else "bench/data/quality"
PYDOC = sys.argv[2] if len(sys.argv) > 2 else "bench/data/en_pydoc.jsonl"
C = 0.8
# (sketch size s, prefix matches m) scored on the labelled pairs.
KEYS = [(16, 1), (32, 1), (32, 3), (64, 3)]


def h(s):
    return int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest(), "little")


def tiny(n):
    return n + K - 1 < SHORT_TEXT_CHARS


def prefix(ordered, n, m):
    """The first n - floor(C n) + m of a tiny text's n ordered shingles."""
    return ordered[: min(n - math.floor(C * n) + m, n)]


def is_key(a, b, s, m):
    """Whether the smaller (tiny) set's containment prefix has m elements in the other's sketch."""
    if len(a) > len(b):
        a, b = b, a
    if not tiny(len(a)):
        return False
    p = prefix(a, len(a), m)
    return len(set(p) & set(b[:s])) >= min(m, len(p))


def part1():
    texts, band = load(DIR)
    cache = {}

    def hashes(i):
        if i not in cache:
            cache[i] = sorted(h(x) for x in shingles(texts[i]))
        return cache[i]

    rows = []
    for line in open(f"{DIR}/pairs.jsonl", encoding="utf-8"):
        p = json.loads(line)
        a, b = hashes(p["a"]), hashes(p["b"])
        if not a or not b:
            continue
        inter = len(set(a) & set(b))
        j, c = inter / (len(a) + len(b) - inter), inter / min(len(a), len(b))
        s3 = 0.0
        if tiny(min(len(a), len(b))):
            sa, sb = short_set(texts[p["a"]]), short_set(texts[p["b"]])
            if sa is not None and sb is not None:
                s3 = len(sa & sb) / len(sa | sb)
        near = j >= 0.5 or s3 >= 0.5 or c >= C
        rows.append((p["lang"], p["kind"], p["label"], near, band[p["id"]], a, b))

    print("## Part 1: the rule with containment 0.8, candidates from bands, or bands and the key\n")
    print("Recall per edit kind (the lowest, and the three kinds that add or replace text), precision")
    print("over the labelled pairs without merge50, shares of hard negatives and half-merged texts flagged.\n")
    print("| candidates | lang | lowest kind | boiler | insert | merge80 | precision | hard flagged | merge50 flagged |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, key in [("bands (the trigger today)", None)] + [(f"bands or key s = {s}, m = {m}", (s, m)) for s, m in KEYS]:
        for lang in ["zh", "en"]:
            pos, neg, precision = tally(
                (kind, lab, near and (shared or (key is not None and is_key(a, b, *key))))
                for lg, kind, lab, near, shared, a, b in rows
                if lg == lang
            )
            r = {k: v[0] / v[1] for k, v in pos.items()}
            low = min(r, key=r.get)
            print(
                f"| {label} | {lang} | {low} {r[low]:.3f} | {r['boiler']:.3f} | {r['insert']:.3f} | {r['merge80']:.3f} "
                f"| {precision:.4f} | {neg['hard'][0] / neg['hard'][1]:.4f} | {neg['merge50'][0] / neg['merge50'][1]:.4f} |"
            )
    print()


def sentences(doc):
    return re.split(r"(?<=[.!?])\s+", doc)


def candidates_per_tiny(tinies, pool, order, s, m):
    """Mean number of pool rows whose sketch holds m of a tiny text's prefix, and how many of
    them contain the tiny text verbatim."""
    ordered = lambda t: sorted(shingles(t), key=order)
    sketches = collections.defaultdict(list)
    for j, t in enumerate(pool):
        for x in ordered(t)[:s]:
            sketches[x].append(j)
    found = containing = 0
    for t in tinies:
        a = ordered(t)
        p = prefix(a, len(a), m)
        count = collections.Counter(j for x in p for j in sketches.get(x, ()))
        hits = [j for j, v in count.items() if v >= min(m, len(p))]
        found += len(hits)
        containing += sum(t in pool[j] for j in hits)
    return found / len(tinies), containing / len(tinies)


def part2():
    docs = [json.loads(line)["body"] for line in open(PYDOC, encoding="utf-8")]
    rng = random.Random(1)
    tiny_pool = list(dict.fromkeys(s for d in docs for s in sentences(d) if 15 <= len(s) < 50))
    rng.shuffle(tiny_pool)
    tinies = tiny_pool[:1500]
    mid = list(dict.fromkeys(s for d in docs for s in sentences(d) if 50 <= len(s) <= 300))
    rng.shuffle(mid)
    mid = mid[:8000]
    by_hash = lambda x: h(x)
    print("## Part 2: rows a tiny text would verify (Python documentation)\n")
    print(f"{len(tinies)} tiny texts (sentences of 15-49 characters); s = 32. Share of the pool in brackets.\n")
    print("| order | pool | m = 1 | m = 2 | m = 3 | m = 4 | of them (m = 1) containing the tiny text verbatim |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for name, pool in [(f"{len(docs):,} sections", docs), (f"{len(mid):,} sentences of 50-300 characters", mid)]:
        cells, contain = [], 0.0
        for m in [1, 2, 3, 4]:
            n, c = candidates_per_tiny(tinies, pool, by_hash, 32, m)
            cells.append(f"{n:.1f} ({n / len(pool):.2%})")
            contain = c if m == 1 else contain
        print(f"| hash | {name} | " + " | ".join(cells) + f" | {contain:.2f} |")
    # Frequent shingles last: document frequency in half of the sections and in the Lee corpus.
    shuffled = docs[:]
    random.Random(2).shuffle(shuffled)
    train, test = shuffled[: len(docs) // 2], shuffled[len(docs) // 2:]
    df = collections.Counter()
    for d in train:
        df.update(shingles(d))
    try:
        for line in open(PYDOC.replace("en_pydoc", "en_news"), encoding="utf-8"):
            df.update(shingles(json.loads(line)["body"]))
    except FileNotFoundError:
        pass
    test_tinies = list(dict.fromkeys(s for d in test for s in sentences(d) if 15 <= len(s) < 50))
    random.Random(1).shuffle(test_tinies)
    test_tinies = test_tinies[:1500]
    for common_n in [0, 300, 3000]:
        common = {x for x, _ in df.most_common(common_n)}
        order = lambda x, common=common: (x in common, h(x))
        n, contain = candidates_per_tiny(test_tinies, test, order, 32, 1)
        print(
            f"| the {common_n:,} most frequent shingles last | the other {len(test):,} sections | "
            f"{n:.1f} ({n / len(test):.2%}) | | | | {contain:.2f} |"
        )
    print()


if __name__ == "__main__":
    part1()
    part2()
