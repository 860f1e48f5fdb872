#!/usr/bin/env python3
"""Writes the near-duplicate quality report (markdown) from the benchmark's scores.

Usage: python bench/quality/quality_report.py DIR [--out REPORT.md] [--k 10]

DIR holds pairs.jsonl (from `quality_pairs export`), scores_simdup.tsv (`quality_pairs score`)
and scores_python.tsv (bench/quality/quality_py.py); bench/quality/quality.sh runs all of them.

Definitions (also in docs/quality.md)
  positive     an edited copy (label 1): every edit kind except merge50
  negatives    "hard": the subject and one of the documents of its language and length bucket
               sharing the most content words with it; "random": every pair of subjects of a
               bucket (or a sample, --random R). Genuine reposts (char-5-shingle Jaccard > 0.5) are never
               negatives. merge50 (half of A + half of B, label 0) is reported on its own.
  predicted    SimHash methods: Hamming distance <= k. Set methods (Jaccard, MinHash): estimated
               Jaccard >= t.
  recall R     share of the positives of a slice predicted near-duplicate
  FPR          share of the negatives of the same language and bucket(s) predicted
               near-duplicate; FPR = (FPR hard + FPR random) / 2
  precision P  on a balanced set, each positive facing one negative, half of the negatives
               same-topic: P = R / (R + FPR). (A real corpus has far more random pairs than
               same-topic ones; with FPR random ~ 0 this is a pessimistic precision.)
  F1           2PR / (P + R)
  light edits  changes of a few percent of the text: del5, swap, typo1, format, del5+typo1, title
  story        a negative: two documents of the pool from different sources on the same story
               (the most content words in common, content-word Jaccard >= 0.2) whose texts
               differ (char-5-shingle Jaccard <= 0.3)
  P hard       precision against the hard negatives (hard, story, merge50): each positive facing
               one hard negative, P = R / (R + FPR), FPR = the mean of the three kinds' flagged
               shares; F1 hard = 2 P R / (P + R)
"""

import argparse
import collections
import csv
import datetime
import json
import os
import platform
import sys

import numpy as np

LIGHT = ["del5", "swap", "typo1", "format", "del5+typo1", "title"]
MODERATE = ["del10", "typo2", "typo3", "trunc10", "insert", "boiler", "merge80"]
# Negatives that share a lot with the positive's original: same-topic documents of the pool
# ("hard"), the same story told by another source ("story"), half of the text replaced by
# another document's ("merge50").
HARDNEG = ["hard", "story", "merge50"]
EDITS = LIGHT + MODERATE
BUCKETS = ["0-50", "50-200", "200-500", "500-1000", "1000-3000"]
LANGS = ["zh", "en"]
KS = list(range(0, 33))
TS = [round(x, 2) for x in np.arange(0.05, 1.0, 0.05)]

NAMES = {
    "default": "simdup default (format 1)",
    "default_title_body": "simdup default on title + body",
    "title": "simdup `title` (title words ×5)",
    "title3": "simdup title words ×3",
    "title10": "simdup title words ×10",
    "improved": "simdup `improved` (Zhang & He 2020)",
    "improved_notitle": "improved without title boost",
    "pos": "default + part of speech",
    "length": "default + word length",
    "cue5": "default + cue words ×5",
    "stopwords": "default + stopword list",
    "tf_raw": "default with raw tf",
    "unk0.25": "default, unknown-word IDF ×0.25 median",
    "unk1": "default, unknown-word IDF ×1 median (jieba)",
    "nfkc_off": "default, NFKC off",
    "lower_off": "default, lower case off",
    "hmm_on": "default, jieba HMM on",
    "char2": "SimHash of character bigrams",
    "char3": "SimHash of character trigrams",
    "simdup_jaccard5": "simdup jaccard() char 5-shingles (exact)",
    "simdup_dedup_similar": "simdup similarity dedup trigger, containment => NULL (35 LSH bands x 3, then exact jaccard)",
    "simdup_dedup_default": "simdup similarity dedup trigger at its defaults (t = 0.5, containment 0.8; 1 or 0)",
    "simdup_jaccard3": "simdup jaccard(a, b, 3) char 3-shingles (exact)",
    "simdup_minhash128": "simdup minhash() 128, char 5-shingles",
    "py_simhash": "Python jieba + simhash (word counts)",
    "py_minhash": "datasketch MinHash 128, char 5-shingles",
    "pg_trgm": "pg_trgm similarity() (trigrams of words)",
}
SIM = {"simdup_jaccard5", "simdup_jaccard3", "simdup_minhash128", "simdup_dedup_similar", "simdup_dedup_default", "py_minhash",
       "pg_trgm"}
PG_TRGM_DEFAULT = 0.3  # pg_trgm.similarity_threshold
MAIN = ["default", "title", "improved", "py_simhash", "char2", "simdup_jaccard5", "simdup_dedup_similar", "simdup_dedup_default",
        "simdup_minhash128",
        "py_minhash",
        "pg_trgm"]
ABLATIONS = ["default_title_body", "title3", "title", "title10", "improved", "improved_notitle", "pos", "length",
             "cue5", "stopwords", "tf_raw", "unk0.25", "unk1", "nfkc_off", "lower_off", "hmm_on", "char2", "char3"]


def load_pool(d):
    """pool_fpr.tsv: {(lang, bucket, method): {threshold: (pairs, flagged)}}"""
    path = os.path.join(d, "pool_fpr.tsv")
    out = collections.defaultdict(dict)
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            th = float(r["threshold"]) if r["method"] in SIM else int(r["threshold"])
            out[(r["lang"], r["bucket"], r["method"])][th] = (int(r["pairs"]), int(r["flagged"]))
    return out


def pool_rate(pool, lang, bucket, method, th):
    x = pool.get((lang, bucket, method), {}).get(th)
    return None if x is None else x[1] / x[0]


def load(d):
    pairs = [json.loads(line) for line in open(os.path.join(d, "pairs.jsonl"), encoding="utf-8")]
    order = {p["id"]: i for i, p in enumerate(pairs)}
    scores = {}
    for name in ("scores_simdup.tsv", "scores_python.tsv"):
        path = os.path.join(d, name)
        if not os.path.exists(path):
            print(f"warning: {path} missing", file=sys.stderr)
            continue
        with open(path, encoding="utf-8") as f:
            r = csv.reader(f, delimiter="\t")
            head = next(r)
            cols = {h: np.full(len(pairs), np.nan) for h in head[1:]}
            for row in r:
                i = order[row[0]]
                for h, v in zip(head[1:], row[1:]):
                    cols[h][i] = float(v)
        scores.update(cols)
    return pairs, scores


class Bench:
    def __init__(self, pairs, scores):
        self.pairs = pairs
        self.scores = scores
        self.lang = np.array([p["lang"] for p in pairs])
        self.bucket = np.array([p["bucket"] for p in pairs])
        self.kind = np.array([p["kind"] for p in pairs])
        self.j5 = np.array([p["j5"] for p in pairs])

    def mask(self, lang=None, buckets=None, kinds=None):
        m = np.ones(len(self.pairs), dtype=bool)
        if lang:
            m &= self.lang == lang
        if buckets:
            m &= np.isin(self.bucket, buckets)
        if kinds:
            m &= np.isin(self.kind, kinds)
        return m

    def pred(self, method, th):
        s = self.scores[method]
        return s >= th - 1e-9 if method in SIM else s <= th

    def rate(self, method, th, m):
        n = int(m.sum())
        if n == 0:
            return float("nan"), 0
        return float(self.pred(method, th)[m].mean()), n

    def prf(self, method, th, lang, buckets=None, kinds=EDITS):
        r, n = self.rate(method, th, self.mask(lang, buckets, kinds))
        fh, nh = self.rate(method, th, self.mask(lang, buckets, ["hard"]))
        fr, nr = self.rate(method, th, self.mask(lang, buckets, ["random"]))
        fpr = (fh + fr) / 2
        p = r / (r + fpr) if r + fpr > 0 else float("nan")
        f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
        return dict(R=r, P=p, F1=f1, FPRh=fh, FPRr=fr, n=n, nh=nh, nr=nr)

    def prf_hard(self, method, th, lang, buckets=None, kinds=EDITS):
        """Recall on kinds; precision against the hard negatives (mean of HARDNEG's rates)."""
        r, n = self.rate(method, th, self.mask(lang, buckets, kinds))
        rates = [self.rate(method, th, self.mask(lang, buckets, [k]))[0] for k in HARDNEG]
        rates = [x for x in rates if not np.isnan(x)]
        fpr = float(np.mean(rates)) if rates else float("nan")
        p = r / (r + fpr) if r + fpr > 0 else float("nan")
        f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
        return dict(R=r, P=p, F1=f1, FPR=fpr, n=n)

    def best_hard(self, method, lang, buckets=None, kinds=EDITS):
        ths = TS if method in SIM else KS
        res = [(self.prf_hard(method, t, lang, buckets, kinds), t) for t in ths]
        res = [(x, t) for x, t in res if not np.isnan(x["F1"])]
        return max(res, key=lambda xt: (round(xt[0]["F1"], 6), -xt[1]))

    def best(self, method, lang, buckets=None, kinds=EDITS):
        ths = TS if method in SIM else KS
        res = [(self.prf(method, t, lang, buckets, kinds), t) for t in ths]
        res = [(x, t) for x, t in res if not np.isnan(x["F1"])]
        return max(res, key=lambda xt: (round(xt[0]["F1"], 6), -xt[1] if method in SIM else -xt[1]))


def f3(x):
    return "–" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.3f}"


def fr(x):
    if x is None or np.isnan(x):
        return "–"
    if x == 0:
        return "0"
    return f"{x:.4f}" if x >= 0.001 else f"{x:.1e}"


def thname(method, t):
    return f"t={t:.2f}" if method in SIM else f"k={t}"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] + ["---:"] * (len(head) - 1)) + " |"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--out")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--t", type=float, default=0.5, help="Jaccard threshold for the set methods' fixed-threshold tables")
    args = ap.parse_args()
    pairs, scores = load(args.dir)
    pool = load_pool(args.dir)
    B = Bench(pairs, scores)
    K, T = args.k, args.t
    methods = [m for m in NAMES if m in scores]
    th = lambda m: T if m in SIM else K  # noqa: E731
    L = []
    w = L.append

    w("# simdup near-duplicate quality benchmark")
    w("")
    w(f"Generated {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')} on {platform.node()} "
      f"({os.cpu_count()} CPUs, {platform.machine()}) from `{os.path.abspath(args.dir)}` by bench/quality/quality_report.py.")
    w("")
    w("## Definitions")
    w("")
    w("```" + __doc__.split("Definitions (also in docs/quality.md)")[1].rstrip() + "\n```")
    w("")

    # -------------------------------------------------------------- data
    w("## Pairs")
    w("")
    kinds = EDITS + ["merge50", "story", "hard", "random"]
    rows = []
    for kd in kinds:
        row = [kd]
        for lg in LANGS:
            m = B.mask(lg, None, [kd])
            row += [int(m.sum()), f3(float(B.j5[m].mean())) if m.any() else "–"]
        rows.append(row)
    w("Pairs per kind and the mean character-5-shingle Jaccard of the two bodies (how much the edit changes):")
    w("")
    w(table(["kind", "zh pairs", "zh mean J5", "en pairs", "en mean J5"], rows))
    w("")
    rows = []
    for bk in BUCKETS:
        row = [bk]
        for lg in LANGS:
            row += [int(B.mask(lg, [bk], EDITS).sum()), int(B.mask(lg, [bk], ["hard"]).sum()),
                    int(B.mask(lg, [bk], ["random"]).sum())]
        rows.append(row)
    w(table(["bucket (chars)", "zh positives", "zh hard", "zh random", "en positives", "en hard", "en random"], rows))
    w("")

    # -------------------------------------------------------------- per kind, hard negatives
    long = BUCKETS[2:]
    trgm_best = {lg: B.best_hard("pg_trgm", lg, long, EDITS)[1] for lg in LANGS
                 if "pg_trgm" in scores and B.mask(lg, long, EDITS).any()}
    w(f"## Per edit kind at k = {K}: recall, precision against the hard negatives, F1 (texts of 200+ characters)")
    w("")
    w("Cells: R / P / F1, P against the hard negatives (hard, story, merge50; see Definitions). "
      f"Set methods at t = {T}; pg_trgm at its default threshold {PG_TRGM_DEFAULT} and at its best "
      "threshold (max F1 over all edits, per language).")
    w("")
    for lg in [lg for lg in LANGS if B.mask(lg, long, EDITS).any()]:
        cols = [("default", K)]
        cols += [(m, th(m)) for m in ("py_simhash", "py_minhash", "simdup_jaccard5") if m in scores]
        if "pg_trgm" in scores:
            cols += [("pg_trgm", PG_TRGM_DEFAULT), ("pg_trgm", trgm_best[lg])]
        rows = []
        for kd in EDITS + ["**all edits**"]:
            kinds = EDITS if kd.startswith("**") else [kd]
            if not B.mask(lg, long, kinds).any():
                continue
            row = [kd]
            for m, t in cols:
                x = B.prf_hard(m, t, lg, long, kinds)
                row.append(f"{f3(x['R'])} / {f3(x['P'])} / {f3(x['F1'])}")
            rows.append(row)
        for nk in HARDNEG + ["random"]:
            row = [f"{nk} (flagged)"]
            for m, t in cols:
                r, n = B.rate(m, t, B.mask(lg, long, [nk]))
                row.append(f"{fr(r)} of {n}" if n else "–")
            rows.append(row)
        w(f"### {lg}")
        w("")
        w(table(["edit"] + [f"{NAMES[m]} {thname(m, t)}" for m, t in cols], rows))
        w("")

    # -------------------------------------------------------------- target check
    w(f"## Target check: simdup default at k = {K}, per edit kind (target P >= 0.99, R >= 0.95)")
    w("")
    w("Recall and balanced precision per edit kind, texts of at least 200 characters and shorter ones. "
      "Precision uses the negatives of the same lengths.")
    w("")
    groups = [("≥ 200 chars", BUCKETS[2:]), ("< 200 chars", BUCKETS[:2])]
    rows = []
    for kd in EDITS + ["merge50"]:
        row = [kd]
        for lg in LANGS:
            for _, bks in groups:
                if not B.mask(lg, bks, [kd]).any():
                    row.append("–")
                elif kd == "merge50":
                    r, _ = B.rate("default", K, B.mask(lg, bks, [kd]))
                    row.append(f"{f3(r)} flagged")
                else:
                    x = B.prf("default", K, lg, bks, [kd])
                    row.append(f"{f3(x['R'])} ({f3(x['P'])})")
        rows.append(row)
    for name, kinds in (("**light edits**", LIGHT), ("**all edits**", EDITS)):
        row = [name]
        for lg in LANGS:
            for _, bks in groups:
                x = B.prf("default", K, lg, bks, kinds)
                row.append(f"{f3(x['R'])} ({f3(x['P'])})")
        rows.append(row)
    w(table(["edit"] + [f"{lg} {g}" for lg in LANGS for g, _ in groups], rows))
    w("")

    # -------------------------------------------------------------- headline
    w(f"## Headline: every method at k = {K} (SimHash) or t = {T} (Jaccard), and at its best threshold")
    w("")
    w("\"best F1\" maximizes F1 on the balanced set, which cannot see false-positive rates below ~1e-4: "
      "it picks thresholds far looser than a corpus can afford. For thresholds compare recall at equal "
      "all-pairs FPR (section \"Recall at equal corpus-scale false-positive rate\").")
    w("")
    for lg in LANGS:
        rows = []
        for m in methods:
            a = B.prf(m, th(m), lg, None, LIGHT)
            b = B.prf(m, th(m), lg, None, EDITS)
            mr, _ = B.rate(m, th(m), B.mask(lg, None, ["merge50"]))
            bx, bt = B.best(m, lg, None, EDITS)
            rows.append([NAMES[m], f3(a["P"]), f3(a["R"]), f3(a["F1"]), f3(b["R"]), f3(b["F1"]), fr(a["FPRh"]),
                         fr(a["FPRr"]), f3(mr), f"{thname(m, bt)}: {f3(bx['F1'])} (P {f3(bx['P'])}, R {f3(bx['R'])})"])
        w(f"### {lg}: all lengths")
        w("")
        w(table(["method", "P light", "R light", "F1 light", "R all edits", "F1 all edits", "FPR hard", "FPR random",
                 "merge50 flagged", "best F1 (all edits)"], rows))
        w("")

    # -------------------------------------------------------------- per edit
    w(f"## Recall per edit kind at k = {K} / t = {T} (precision on the balanced set in brackets)")
    w("")
    for lg in LANGS:
        rows = []
        for kd in EDITS + ["merge50"]:
            if not B.mask(lg, None, [kd]).any():
                continue
            row = [kd]
            for m in MAIN:
                if m not in scores:
                    continue
                if kd == "merge50":
                    r, _ = B.rate(m, th(m), B.mask(lg, None, [kd]))
                    row.append(f"{f3(r)} (flagged)")
                else:
                    x = B.prf(m, th(m), lg, None, [kd])
                    row.append(f"{f3(x['R'])} ({f3(x['P'])})")
            rows.append(row)
        w(f"### {lg}")
        w("")
        w(table(["edit"] + [NAMES[m] for m in MAIN if m in scores], rows))
        w("")

    # -------------------------------------------------------------- per edit and bucket, default
    for m in ["default", "improved", "py_simhash", "simdup_jaccard5"]:
        if m not in scores:
            continue
        w(f"## {NAMES[m]}: recall per edit kind and length bucket at {thname(m, th(m))}")
        w("")
        for lg in LANGS:
            rows = []
            for kd in EDITS + ["merge50", "hard", "random"]:
                row = [kd]
                for bk in BUCKETS:
                    r, n = B.rate(m, th(m), B.mask(lg, [bk], [kd]))
                    row.append(f3(r) if n else "–")
                rows.append(row)
            x = [B.prf(m, th(m), lg, [bk], LIGHT) for bk in BUCKETS]
            rows.append(["**P light**"] + [f3(v["P"]) for v in x])
            rows.append(["**F1 light**"] + [f3(v["F1"]) for v in x])
            x = [B.prf(m, th(m), lg, [bk], EDITS) for bk in BUCKETS]
            rows.append(["**P all**"] + [f3(v["P"]) for v in x])
            rows.append(["**F1 all**"] + [f3(v["F1"]) for v in x])
            w(f"### {lg} (rows hard, random, merge50: share flagged)")
            w("")
            w(table(["edit \\ chars"] + BUCKETS, rows))
            w("")

    # -------------------------------------------------------------- by length: best thresholds
    w("## Per length bucket: each method at its best threshold (max F1 over all edits)")
    w("")
    for lg in LANGS:
        rows = []
        for m in methods:
            row = [NAMES[m]]
            for bk in BUCKETS:
                if not B.mask(lg, [bk], EDITS).any():
                    row.append("–")
                    continue
                x, t = B.best(m, lg, [bk], EDITS)
                row.append(f"{thname(m, t)}: F1 {f3(x['F1'])} P {f3(x['P'])} R {f3(x['R'])}")
            rows.append(row)
        w(f"### {lg}")
        w("")
        w(table(["method"] + BUCKETS, rows))
        w("")

    # -------------------------------------------------------------- per k
    w("## Precision, recall, F1 per k (all lengths; light edits / all edits)")
    w("")
    for m in ["default", "title", "improved", "char2", "py_simhash"]:
        if m not in scores:
            continue
        rows = []
        for k in range(2, 17):
            row = [k]
            for lg in LANGS:
                a = B.prf(m, k, lg, None, LIGHT)
                b = B.prf(m, k, lg, None, EDITS)
                row += [f3(a["P"]), f3(a["R"]), f3(b["R"]), f3(b["F1"]), fr(a["FPRh"])]
            rows.append(row)
        w(f"### {NAMES[m]}")
        w("")
        w(table(["k", "zh P light", "zh R light", "zh R all", "zh F1 all", "zh FPR hard",
                 "en P light", "en R light", "en R all", "en F1 all", "en FPR hard"], rows))
        w("")
    for m in ["simdup_jaccard5", "py_minhash"]:
        if m not in scores:
            continue
        rows = []
        for t in [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]:
            row = [t]
            for lg in LANGS:
                a = B.prf(m, t, lg, None, LIGHT)
                b = B.prf(m, t, lg, None, EDITS)
                row += [f3(a["P"]), f3(a["R"]), f3(b["R"]), f3(b["F1"]), fr(a["FPRh"])]
            rows.append(row)
        w(f"### {NAMES[m]}")
        w("")
        w(table(["t", "zh P light", "zh R light", "zh R all", "zh F1 all", "zh FPR hard",
                 "en P light", "en R light", "en R all", "en F1 all", "en FPR hard"], rows))
        w("")

    # -------------------------------------------------------------- k by length, default
    w("## simdup default: recall (all edits) and FPR hard per k and length bucket")
    w("")
    for lg in LANGS:
        rows = []
        for k in range(2, 17):
            row = [k]
            for bk in BUCKETS:
                x = B.prf("default", k, lg, [bk], EDITS)
                row.append(f"{f3(x['R'])} / {fr(x['FPRh'])} / {f3(x['F1'])}")
            rows.append(row)
        w(f"### {lg} (recall / FPR hard / F1)")
        w("")
        w(table(["k"] + BUCKETS, rows))
        w("")

    # -------------------------------------------------------------- pool FPR
    if pool:
        w("## Corpus-scale false positives: all pairs of each bucket's pool (simdup methods)")
        w("")
        w("Every pair of different texts of a language and length bucket in the whole corpus pool "
          "(reposts with char-5-shingle Jaccard > 0.5 excluded): the share within k (or MinHash estimate >= t). "
          "This resolves the rates that matter at corpus scale (1e-6 .. 1e-4), which the sampled negatives cannot.")
        w("")
        for lg in LANGS:
            npairs = [pool.get((lg, bk, "default"), {}).get(0, (0, 0))[0] for bk in BUCKETS]
            w(f"### {lg}: pairs per bucket " + ", ".join(f"{bk}: {n:,}" for bk, n in zip(BUCKETS, npairs)))
            w("")
            rows = []
            for m in ["default", "default_title_body", "title", "improved", "unk0.25", "char2", "char3"]:
                if (lg, BUCKETS[-1], m) not in pool:
                    continue
                for k in [8, 10, 12, 14, 16]:
                    rows.append([NAMES[m], k] + [fr(pool_rate(pool, lg, bk, m, k)) if pool_rate(pool, lg, bk, m, k) is not None else "–" for bk in BUCKETS])
            for t in [0.3, 0.4, 0.5, 0.6]:
                rows.append([NAMES["simdup_minhash128"], t] + [fr(pool_rate(pool, lg, bk, "simdup_minhash128", t)) if pool_rate(pool, lg, bk, "simdup_minhash128", t) is not None else "–" for bk in BUCKETS])
            w(table(["method", "k / t"] + BUCKETS, rows))
            w("")

        w("## Recall at equal corpus-scale false-positive rate")
        w("")
        w("For each method and bucket: the loosest threshold whose all-pairs FPR (above) is at most 1e-5 "
          "(10 false pairs per million pairs), and the recall of light / all edits there.")
        w("")
        for lg in LANGS:
            rows = []
            for m in ["default", "default_title_body", "title", "improved", "unk0.25", "char2", "char3", "simdup_minhash128"]:
                if (lg, BUCKETS[-1], m) not in pool:
                    continue
                row = [NAMES[m]]
                for bk in BUCKETS:
                    ths = sorted(pool.get((lg, bk, m), {}))
                    ok = [t for t in ths if pool_rate(pool, lg, bk, m, t) <= 1e-5]
                    if not ok or not B.mask(lg, [bk], EDITS).any():
                        row.append("–")
                        continue
                    t = min(ok) if m in SIM else max(ok)
                    a, _ = B.rate(m, t, B.mask(lg, [bk], LIGHT))
                    b, _ = B.rate(m, t, B.mask(lg, [bk], EDITS))
                    row.append(f"{thname(m, t)}: {f3(a)} / {f3(b)}")
                rows.append(row)
            w(f"### {lg}")
            w("")
            w(table(["method"] + BUCKETS, rows))
            w("")

    # -------------------------------------------------------------- short text
    w("## Short texts: set similarity against SimHash (buckets 0-50 and 50-200)")
    w("")
    for lg in LANGS:
        rows = []
        for bk in BUCKETS[:2]:
            for m, ths in [("default", [10, 12, 14]), ("char2", [10, 12, 14]), ("char3", [10, 12, 14]),
                           ("py_simhash", [10]),
                           ("simdup_jaccard5", [0.3, 0.4, 0.5, 0.6]), ("simdup_jaccard3", [0.4, 0.5, 0.6]),
                           ("simdup_minhash128", [0.4, 0.5, 0.6]), ("py_minhash", [0.4, 0.5])]:
                if m not in scores:
                    continue
                for t in ths:
                    a = B.prf(m, t, lg, [bk], LIGHT)
                    b = B.prf(m, t, lg, [bk], EDITS)
                    pr = pool_rate(pool, lg, bk, m, t)
                    rows.append([bk, NAMES[m], thname(m, t), f3(a["R"]), f3(b["R"]), fr(a["FPRh"]), fr(a["FPRr"]),
                                 "–" if pr is None else fr(pr), f3(b["P"]), f3(b["F1"])])
        w(f"### {lg}")
        w("")
        w(table(["chars", "method", "threshold", "R light", "R all", "FPR hard", "FPR random", "FPR all pairs",
                 "P all", "F1 all"], rows))
        w("")

    # -------------------------------------------------------------- ablations
    w(f"## Variants and normalization steps against the default at k = {K}")
    w("")
    w("Differences to the default (positive ΔR = more copies found; positive ΔFPR = more false alarms).")
    w("")
    for lg in LANGS:
        d0 = B.prf("default", K, lg, None, EDITS)
        l0 = B.prf("default", K, lg, None, LIGHT)
        rows = [["default (absolute)", f3(l0["R"]), f3(d0["R"]), fr(d0["FPRh"]), fr(d0["FPRr"]), f3(d0["P"]), f3(d0["F1"]), ""]]
        for m in ABLATIONS:
            if m not in scores:
                continue
            x = B.prf(m, K, lg, None, EDITS)
            xl = B.prf(m, K, lg, None, LIGHT)
            # edit kind whose recall changes most
            ch = []
            for kd in EDITS:
                if B.mask(lg, None, [kd]).any():
                    r1, _ = B.rate(m, K, B.mask(lg, None, [kd]))
                    r0, _ = B.rate("default", K, B.mask(lg, None, [kd]))
                    ch.append((abs(r1 - r0), kd, r1 - r0))
            ch.sort(reverse=True)
            big = ", ".join(f"{kd} {d:+.3f}" for _, kd, d in ch[:2] if abs(d) >= 0.005) or "–"
            rows.append([NAMES[m], f"{xl['R'] - l0['R']:+.3f}", f"{x['R'] - d0['R']:+.3f}",
                         f"{x['FPRh'] - d0['FPRh']:+.4f}", f"{x['FPRr'] - d0['FPRr']:+.4f}",
                         f"{x['P'] - d0['P']:+.4f}", f"{x['F1'] - d0['F1']:+.4f}", big])
        w(f"### {lg}")
        w("")
        w(table(["variant", "ΔR light", "ΔR all", "ΔFPR hard", "ΔFPR random", "ΔP all", "ΔF1 all",
                 "largest recall changes"], rows))
        w("")

    # -------------------------------------------------------------- title
    w(f"## Titles (zh only: the English corpus has none) at k = {K}")
    w("")
    rows = []
    for m in ["default", "default_title_body", "title3", "title", "title10", "improved", "improved_notitle"]:
        if m not in scores:
            continue
        t = B.prf(m, K, "zh", None, ["title"])
        a = B.prf(m, K, "zh", None, EDITS)
        mr, _ = B.rate(m, K, B.mask("zh", None, ["merge50"]))
        rows.append([NAMES[m], f3(t["R"]), f3(a["R"]), fr(a["FPRh"]), f3(a["P"]), f3(a["F1"]), f3(mr)])
    w(table(["method", "R title changed", "R all edits", "FPR hard", "P all", "F1 all", "merge50 flagged"], rows))
    w("")

    text = "\n".join(L) + "\n"
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
