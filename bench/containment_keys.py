#!/usr/bin/env python3
"""Could a key index find short texts wrapped in boilerplate? The design of the containment
index, measured before it was built (simdup_core::similar::Keys; what was built is measured by
the keys_cost example of bench/rust).

The similarity dedup trigger finds its candidates in LSH bands, which estimate Jaccard
similarity. A text of under 50 characters wrapped in a header and footer longer than itself
has a low Jaccard similarity with its copy, so the pair is rarely a candidate, although the
containment rule (`containment => 0.8`) would judge it a near-duplicate (docs/quality.md, "Tiny
texts in boilerplate: the containment index"). This script measures one way to make such pairs
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

from containment_eval import K, SHORT_TEXT_CHARS, decided, load, shingles, short_set, tally

DIR = sys.argv[1] if len(sys.argv) > 1 else "bench/data/quality"
PYDOC = sys.argv[2] if len(sys.argv) > 2 else "bench/data/en_pydoc.jsonl"
C = 0.8
# (sketch size s, prefix matches m, order) scored on the labelled pairs.
KEYS = [(16, 1, "hash"), (32, 1, "hash"), (32, 3, "hash"), (32, 1, "frequency"), (32, 2, "frequency")]


def h(s):
    return int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest(), "little")


def tiny(n):
    return n + K - 1 < SHORT_TEXT_CHARS


def prefix(ordered, n, m):
    """The first n - floor(C n) + m of a tiny text's n ordered shingles."""
    return ordered[: min(n - math.floor(C * n) + m, n)]


def is_key(a, b, s, m):
    """Whether the smaller (tiny) of two ordered shingle lists has m elements of its containment
    prefix in the other's sketch (its first s)."""
    if len(a) > len(b):
        a, b = b, a
    if not tiny(len(a)):
        return False
    p = prefix(a, len(a), m)
    return len(set(p) & set(b[:s])) >= min(m, len(p))


def by_hash(x):
    return h(x)


def by_frequency(df):
    """The order rarest first: by document frequency in a reference corpus (unseen first), then
    by hash."""
    return lambda x: (df.get(x, 0), h(x))


def document_frequency(docs):
    df = collections.Counter()
    for d in docs:
        df.update(shingles(d))
    return df


def part1(pydoc_df):
    texts, band = load(DIR)
    orders = {"hash": by_hash, "frequency": by_frequency(pydoc_df)}
    cache = {}

    def ordered(i, order):
        if (i, order) not in cache:
            cache[i, order] = [h(x) for x in sorted(shingles(texts[i]), key=orders[order])]
        return cache[i, order]

    rows = []
    for line in open(f"{DIR}/pairs.jsonl", encoding="utf-8"):
        p = json.loads(line)
        a, b = set(ordered(p["a"], "hash")), set(ordered(p["b"], "hash"))
        if not a or not b:
            continue
        inter = len(a & b)
        j, c = inter / (len(a) + len(b) - inter), inter / min(len(a), len(b))
        s3 = 0.0
        if tiny(min(len(a), len(b))):
            sa, sb = short_set(texts[p["a"]]), short_set(texts[p["b"]])
            if sa is not None and sb is not None:
                s3 = len(sa & sb) / len(sa | sb)
        near = j >= 0.5 or s3 >= 0.5 or c >= C
        shared = decided(band[p["id"]], lambda *_: near, j, c, s3)
        rows.append((p["lang"], p["kind"], p["label"], near, shared, p["a"], p["b"]))

    print("## Part 1: the rule with containment 0.8, candidates from bands, or bands and the key\n")
    print("Recall per edit kind (the lowest, and the three kinds that add or replace text), precision")
    print("over the labelled pairs without merge50, shares of hard negatives and half-merged texts flagged.")
    print("Frequency order: document frequency in the Python documentation (no Chinese shingle is in it,")
    print("so Chinese keeps the hash order).\n")
    print("| candidates | lang | lowest kind | boiler | insert | merge80 | precision | hard flagged | merge50 flagged |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    variants = [("bands (the trigger today)", None)] + [
        (f"bands or key s = {s}, m = {m}, {order} order", (s, m, order)) for s, m, order in KEYS
    ]
    for label, key in variants:
        for lang in ["zh", "en"]:
            pos, neg, precision = tally(
                (
                    kind,
                    lab,
                    shared
                    or (near and key is not None and is_key(ordered(a, key[2]), ordered(b, key[2]), key[0], key[1])),
                )
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


def part2(docs):
    """Tiny sentences of one half of the documentation against the other half's sections and
    sentences; the frequency order from the first half."""
    shuffled = docs[:]
    random.Random(2).shuffle(shuffled)
    train, test = shuffled[: len(docs) // 2], shuffled[len(docs) // 2:]
    rng = random.Random(1)
    tinies = list(dict.fromkeys(s for d in test for s in sentences(d) if 15 <= len(s) < 50))
    rng.shuffle(tinies)
    tinies = tinies[:1500]
    mid = list(dict.fromkeys(s for d in test for s in sentences(d) if 50 <= len(s) <= 300))
    rng.shuffle(mid)
    mid = mid[:4000]
    df = document_frequency(train)
    common = {x for x, _ in df.most_common(3000)}
    orders = [
        ("hash", by_hash, [1, 2, 3, 4]),
        ("hash, the 3,000 most frequent last", lambda x: (x in common, h(x)), [1]),
        ("frequency (rarest first)", by_frequency(df), [1, 2, 3, 4]),
    ]
    print("## Part 2: rows a tiny text would verify (Python documentation)\n")
    print(f"{len(tinies)} tiny texts (sentences of 15-49 characters of {len(test):,} sections) against those")
    print(f"sections and {len(mid):,} of their sentences of 50-300 characters; s = 32; document frequencies from")
    print(f"the other {len(train):,} sections. Share of the pool in brackets.\n")
    print("| order | pool | m = 1 | m = 2 | m = 3 | m = 4 | of them (m = 1) containing the tiny text verbatim |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for name, order, ms in orders:
        for pool_name, pool in [(f"{len(test):,} sections", test), (f"{len(mid):,} sentences", mid)]:
            cells, contain = [], 0.0
            for m in [1, 2, 3, 4]:
                if m not in ms:
                    cells.append("")
                    continue
                n, c = candidates_per_tiny(tinies, pool, order, 32, m)
                cells.append(f"{n:.1f} ({n / len(pool):.2%})")
                contain = c if m == 1 else contain
            print(f"| {name} | {pool_name} | " + " | ".join(cells) + f" | {contain:.2f} |")
    print()


if __name__ == "__main__":
    pydoc = [json.loads(line)["body"] for line in open(PYDOC, encoding="utf-8")]
    part1(document_frequency(pydoc))
    part2(pydoc)
