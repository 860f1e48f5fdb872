#!/usr/bin/env python3
"""What the containment rule of dedup by similarity adds, on the quality benchmark's pairs.

The similarity dedup trigger counts a pair as near-duplicates when it shares one of the
index's LSH bands and its exact Jaccard of character 5-shingles reaches the threshold (0.5 by
default); with `containment => c` also when its containment (the share of the smaller text's
shingles found in the other) reaches c. This script scores those rules on the labelled pairs
that `bench/quality.sh` exports (bench/data/quality/pairs.jsonl, texts.jsonl), with the band
test taken from the same run's `simdup_dedup_similar` column (scores_simdup.tsv: the pair's
Jaccard if it shares one of the 35 bands of 3 rows, else 0).

Shingles are computed here as simdup computes them (NFKC, lower case, whitespace runs as one
space, character 5-grams; a text shorter than 5 characters is one shingle), as strings rather
than xxh3 hashes; the script checks that its Jaccard equals the exported `j5` of every pair.

Usage: python3 bench/containment_eval.py [QUALITY_DIR]   (default bench/data/quality)
Prints markdown tables: recall per edit kind, precision over the labelled pairs of the language
without merge50, and the share of hard negatives and half-merged texts flagged; for all texts and for
texts of 50 characters or more.
"""
import collections
import json
import re
import sys
import unicodedata

DIR = sys.argv[1] if len(sys.argv) > 1 else "bench/data/quality"
K = 5
RULES = [
    ("Jaccard >= 0.5 (0.3.0's rule)", lambda j, c: j >= 0.5),
    ("... or containment >= 0.7", lambda j, c: j >= 0.5 or c >= 0.7),
    ("... or containment >= 0.8", lambda j, c: j >= 0.5 or c >= 0.8),
]


def shingles(text):
    t = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).lower()).strip()
    if not t:
        return set()
    if len(t) < K:
        return {t}
    return {t[i:i + K] for i in range(len(t) - K + 1)}


def main():
    texts = {}
    for line in open(f"{DIR}/texts.jsonl", encoding="utf-8"):
        d = json.loads(line)
        texts[d["id"]] = d["body"]
    with open(f"{DIR}/scores_simdup.tsv", encoding="utf-8") as f:
        col = f.readline().rstrip("\n").split("\t").index("simdup_dedup_similar")
        band = {p[0]: float(p[col]) > 0 for p in (line.rstrip("\n").split("\t") for line in f)}
    cache = {}

    def sets(i):
        if i not in cache:
            cache[i] = shingles(texts[i])
        return cache[i]

    rows, mismatched = [], 0
    for line in open(f"{DIR}/pairs.jsonl", encoding="utf-8"):
        p = json.loads(line)
        a, b = sets(p["a"]), sets(p["b"])
        if not a or not b:
            continue
        inter = len(a & b)
        j, c = inter / len(a | b), inter / min(len(a), len(b))
        if p.get("j5") is not None and abs(p["j5"] - j) > 0.00051:
            mismatched += 1
        rows.append((p["lang"], p["kind"], p["label"], p["bucket"], j, c, band[p["id"]]))
    print(f"{len(rows)} pairs; Jaccard differing from the exported j5: {mismatched}\n")

    for title, keep in [("all texts", lambda b: True), ("texts of 50 characters or more", lambda b: b != "0-50")]:
        print(f"### {title} (a pair counts only if it shares one of the 35 bands of 3 rows)\n")
        kinds = sorted({(r[0], r[1]) for r in rows if r[2] == 1 and keep(r[3])})
        langs = ["zh", "en"]
        header = ["rule", "lang"] + sorted({k for _, k in kinds}) + ["precision", "hard flagged", "merge50 flagged"]
        print("| " + " | ".join(header) + " |")
        print("|" + " --- |" * len(header))
        for name, rule in RULES:
            for lang in langs:
                pos = collections.defaultdict(lambda: [0, 0])
                neg = collections.defaultdict(lambda: [0, 0])
                tp = fp = 0
                for lg, kind, label, bucket, j, c, shared in rows:
                    if lg != lang or not keep(bucket):
                        continue
                    y = shared and rule(j, c)
                    if label == 1:
                        tp += y
                        pos[kind][0] += y
                        pos[kind][1] += 1
                    else:
                        fp += y and kind != "merge50"
                        neg[kind][0] += y
                        neg[kind][1] += 1
                cells = [f"{pos[k][0] / pos[k][1]:.3f}" if pos[k][1] else "–" for k in header[2:-3]]
                rate = lambda k: f"{neg[k][0] / neg[k][1]:.4f}" if neg[k][1] else "–"
                print(f"| {name} | {lang} | " + " | ".join(cells) + f" | {tp / (tp + fp):.4f} | {rate('hard')} | {rate('merge50')} |")
        print()


if __name__ == "__main__":
    main()
