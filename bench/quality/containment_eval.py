#!/usr/bin/env python3
"""What the short-text and containment rules of dedup by similarity add, on the quality
benchmark's pairs.

The similarity dedup trigger counts a candidate pair as near-duplicates when its exact Jaccard
of character 5-shingles reaches the threshold (0.5 by default), or, when the shorter text has
fewer than 50 characters and both are short (at most 100 distinct 3-shingles and 1000
characters), when the Jaccard of their 3-shingles does; with `containment => c` also when its
containment (the share of the smaller text's 5-shingles found in the other) reaches c
(simdup_core::similarity; 0.8 by default). A candidate shares one of the similarity index's 35 LSH
bands of 3 rows, one of the short-text index's bands, or (with containment) meeting containment
keys. This script scores those rules on the labelled pairs that `bench/quality/quality.sh` exports
(bench/data/quality/pairs.jsonl, texts.jsonl), with the candidate tests taken from the same
run's dedup_candidates.tsv (band, short band, keys at 0.7 and 0.8), each pair judged as the
trigger judges it (simdup_core::similarity::Rule::judge): through a shared band by the rule, its
containment part only when both texts have at least 50 5-shingles; through meeting keys by
containment or the short-text rule; through a shared short band by the short-text rule alone.

Shingles are computed here as simdup computes them (NFKC, lower case, whitespace runs as one
space, character k-grams; a text shorter than k characters is one shingle), as strings rather
than xxh3 hashes; the script checks that its Jaccard equals the exported `j5` of every pair.

Usage: python3 bench/quality/containment_eval.py [QUALITY_DIR]   (default bench/data/quality)
Prints markdown tables: recall per edit kind, precision over the labelled pairs of the language
without merge50, and the share of hard negatives and half-merged texts flagged; for all texts and for
texts of 50 characters or more; then what the footer test gives up, on the `boiler` pairs' originals
with a header alone.
"""
import collections
import json
import re
import sys
import unicodedata

DIR = sys.argv[1] if len(sys.argv) > 1 else "bench/data/quality"
K = 5
# (name, rule(j5, c5, short_j3)); short_j3 is the 3-shingle Jaccard where the short-text rule
# applies, else 0.
RULES = [
    ("Jaccard >= 0.5 (no short-text rule)", lambda j, c, s: j >= 0.5),
    ("... or short texts' 3-shingle Jaccard >= 0.5 (0.3.0's rule)", lambda j, c, s: j >= 0.5 or s >= 0.5),
    ("... or containment >= 0.7", lambda j, c, s: j >= 0.5 or s >= 0.5 or c >= 0.7),
    ("... or containment >= 0.8", lambda j, c, s: j >= 0.5 or s >= 0.5 or c >= 0.8),
]
# The rules above with the short-text rule, which then also judges the pairs sharing only a
# short band (the first rule had neither the rule nor its index).
SHORT_TEXT_RULE = [False, True, True, True]
# The containment threshold of each rule (None: no containment rule, no containment keys).
CONTAINMENT = [None, None, 0.7, 0.8]
TINY_SHINGLES = 50
SHORT_TEXT_CHARS, SHORT_MAX_SHINGLES, SHORT_MAX_CHARS = 50, 100, 1000


# simdup_core::similarity::MIN_CONTAINED_SHINGLES: the containment rule needs the smaller text to
# hold at least this many distinct 5-shingles.
MIN_CONTAINED_SHINGLES = 2


def sequence(text, k=K):
    """A text's character k-shingles in text order, repeats included."""
    t = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).lower()).strip()
    if not t:
        return []
    if len(t) < k:
        return [t]
    return [t[i:i + k] for i in range(len(t) - k + 1)]


def shingles(text, k=K):
    return set(sequence(text, k))


def is_footer(a_text, b_text):
    """simdup_core::similarity::is_footer: the smaller text (by distinct 5-shingles, n of them)
    ends the larger one (the larger's last w = min(n, 2k) shingles are the smaller's last w, in
    order) and starts after more than n of the larger's shingle positions (the first place the
    smaller's first w shingles appear in order): an article with that footer, not a copy of it."""
    a, b = sequence(a_text), sequence(b_text)
    small, large = (a, b) if len(set(a)) <= len(set(b)) else (b, a)
    n = len(set(small))
    w = min(n, 2 * K)
    head, tail = small[:w], small[-w:]
    if large[-w:] != tail:
        return False
    start = next((p for p in range(len(large) - w + 1) if large[p:p + w] == head), None)
    return start is not None and start > n


def short_set(text):
    """simdup_core::similarity::short_set: the 3-shingles of a short text, None for another."""
    if len(text) > SHORT_MAX_CHARS:
        return None
    s = shingles(text, 3)
    return s if s and len(s) <= SHORT_MAX_SHINGLES else None


def load(directory):
    """The exported texts (id -> body), their titles (id -> title, empty when none) and the
    candidate test of each pair (id -> (shares a band, shares a short band)) of a quality run's
    directory."""
    texts, titles = {}, {}
    for line in open(f"{directory}/texts.jsonl", encoding="utf-8"):
        d = json.loads(line)
        texts[d["id"]] = d["body"]
        titles[d["id"]] = d.get("title") or ""
    with open(f"{directory}/dedup_candidates.tsv", encoding="utf-8") as f:
        f.readline()
        band = {p[0]: tuple(x == "1" for x in p[1:5]) for p in (line.rstrip("\n").split("\t") for line in f)}
    return texts, titles, band


def decided(shared, rule, j, c, short_j, short_text_rule=True, containment=None, tiny=False):
    """The trigger's decision on a pair (simdup_core::similarity::Rule::judge): for a pair sharing
    a band, the rule (its containment part only when neither text is tiny, `tiny`: fewer than
    50 5-shingles); for one whose containment keys meet, containment or the short-text rule; for
    one sharing only a short band, the short-text rule alone (short_j, the 3-shingle Jaccard
    where it applies)."""
    band, short_band, key70, key80 = shared
    key = {0.7: key70, 0.8: key80}.get(containment, False)
    by_band = band and (rule(j, 0.0 if tiny else c, short_j))
    by_key = key and (c >= containment or short_j >= 0.5)
    return by_band or by_key or (short_text_rule and short_band and short_j >= 0.5)


def tally(scored):
    """From (kind, label, flagged) triples: per kind [flagged, pairs] of the positives and of
    the negatives, and the precision over the labelled pairs without merge50."""
    pos = collections.defaultdict(lambda: [0, 0])
    neg = collections.defaultdict(lambda: [0, 0])
    tp = fp = 0
    for kind, label, y in scored:
        if label == 1:
            tp += y
            pos[kind][0] += y
            pos[kind][1] += 1
        else:
            fp += y and kind != "merge50"
            neg[kind][0] += y
            neg[kind][1] += 1
    return pos, neg, tp / (tp + fp)


def main():
    texts, titles, band = load(DIR)
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
        if min(len(a), len(b)) < MIN_CONTAINED_SHINGLES:
            c = 0.0  # one distinct shingle: contained in every text holding it, no copy
        elif c >= min(x for x in CONTAINMENT if x) and j < 0.5 and is_footer(texts[p["a"]], texts[p["b"]]):
            c = 0.0  # the smaller text is the larger one's footer: no copy
        if p.get("j5") is not None and abs(p["j5"] - j) > 0.00051:
            mismatched += 1
        s = 0.0
        if min(len(a), len(b)) + K - 1 < SHORT_TEXT_CHARS:
            sa, sb = short_set(texts[p["a"]]), short_set(texts[p["b"]])
            if sa is not None and sb is not None:
                s = len(sa & sb) / len(sa | sb)
        tiny = min(len(a), len(b)) < TINY_SHINGLES
        rows.append((p["lang"], p["kind"], p["label"], p["bucket"], j, c, s, band[p["id"]], tiny))
    print(f"{len(rows)} pairs; Jaccard differing from the exported j5: {mismatched}\n")

    for title, keep in [("all texts", lambda b: True), ("texts of 50 characters or more", lambda b: b != "0-50")]:
        print(f"### {title} (each pair judged as the trigger judges it: by the rule through a shared band, containment only between texts of 50 shingles or more; through meeting containment keys by containment or the short-text rule; through a shared short band by the short-text rule alone)\n")
        kinds = sorted({(r[0], r[1]) for r in rows if r[2] == 1 and keep(r[3])})
        langs = [lg for lg in ["zh", "en"] if any(r[0] == lg for r in rows)]
        header = ["rule", "lang"] + sorted({k for _, k in kinds}) + ["precision", "hard flagged", "merge50 flagged"]
        print("| " + " | ".join(header) + " |")
        print("|" + " --- |" * len(header))
        for (name, rule), short_text_rule, containment in zip(RULES, SHORT_TEXT_RULE, CONTAINMENT):
            for lang in langs:
                pos, neg, precision = tally(
                    (kind, label, decided(shared, rule, j, c, short_j, short_text_rule, containment, tiny))
                    for lg, kind, label, bucket, j, c, short_j, shared, tiny in rows
                    if lg == lang and keep(bucket)
                )
                cells = [f"{pos[k][0] / pos[k][1]:.3f}" if pos[k][1] else "–" for k in header[2:-3]]
                rate = lambda k: f"{neg[k][0] / neg[k][1]:.4f}" if neg[k][1] else "–"
                print(f"| {name} | {lang} | " + " | ".join(cells) + f" | {precision:.4f} | {rate('hard')} | {rate('merge50')} |")
        print()
    header_only(texts, titles)


# bench/rust/src/edits.rs's boilerplate headers (`boilerplate`), without its footers.
ZH_SITES = ["新华网", "人民网", "中国新闻网", "新浪新闻", "网易新闻", "澎湃新闻", "凤凰网"]
ZH_NAMES = ["张三", "李明", "王芳", "刘洋", "陈静"]
EN_SITES = ["Reuters", "AP", "ABC News", "The Guardian", "BBC"]
EN_NAMES = ["John Smith", "Jane Doe", "Mark Lee", "Sarah Brown"]


def header(text, title, lang, rng):
    """One of edits.rs's two headers for `text` with title `title` (when the corpus gives none:
    the first clause, or the first eight words and an ellipsis)."""
    if lang == "zh":
        if not title:
            title = re.match(r"[^。！？；，]*[。！？；，]?", text).group(0).strip()
        site, name = rng.choice(ZH_SITES), rng.choice(ZH_NAMES)
        return rng.choice([f"来源：{site} 责任编辑：{name} 原标题：{title}\n", f"【{site}讯】原标题：{title} 记者 {name}\n"])
    if not title:
        title = " ".join(text.split()[:8]) + "..."
    site, name = rng.choice(EN_SITES), rng.choice(EN_NAMES)
    return rng.choice([f"Source: {site} | Editor: {name} | Original title: {title}\n\n",
                       f"By {name}, {site} staff writer. Originally published as \"{title}\".\n"])


def header_only(texts, titles):
    """What the footer test gives up: the `boiler` pairs' originals with a header alone (the
    benchmark's edits add a header and a footer), among those that only containment can find
    (Jaccard < 0.5, containment >= 0.8): how many is_footer refuses, per language and bucket."""
    import random
    rng = random.Random(1)
    tally = collections.defaultdict(lambda: [0, 0])
    for line in open(f"{DIR}/pairs.jsonl", encoding="utf-8"):
        p = json.loads(line)
        if p["kind"] != "boiler":
            continue
        text = texts[p["a"]]
        copy = header(text, titles.get(p["a"], ""), p["lang"], rng) + text
        a, b = shingles(text), shingles(copy)
        if not a or len(a & b) / len(a | b) >= 0.5 or len(a & b) / min(len(a), len(b)) < 0.8:
            continue
        t = tally[(p["lang"], p["bucket"])]
        t[0] += 1
        t[1] += is_footer(text, copy)
    print("### a header alone: pairs only containment can find, and those the footer test refuses\n")
    print("| lang | bucket | pairs | refused |")
    print("| --- | --- | ---: | ---: |")
    for (lang, bucket), (n, refused) in sorted(tally.items()):
        print(f"| {lang} | {bucket} | {n} | {refused} |")
    print()


if __name__ == "__main__":
    main()
