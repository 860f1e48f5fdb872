#!/usr/bin/env python3
"""Python baselines for simdup: the usual Python recipes for SimHash and MinHash.

Usage (inside bench/.venv, see bench/python/setup_venv.sh):
    python bench/python/py_baselines.py bench/data/zh_news.jsonl [-r 3]
        [--text body|title_body] [--limit N] [--only jieba,simhash,shingles,datasketch,rensa]
        [--dump-fingerprints OUT.tsv] [--dump-minhash OUT.tsv] [--dump-rminhash OUT.tsv]
        [--out RESULTS.json]

Everything runs in one process; the file is read and parsed once, before any
timing, so the numbers are pure compute. Each stage runs R times over the whole
file and the median (and min/max) is reported. Throughput is docs/s and MB/s,
MB = 10^6 UTF-8 bytes of the hashed text.

Stages
  jieba       jieba.lcut(text) alone (the tokenizer's own cost, a baseline)
  simhash     the "common Python recipe": jieba.lcut(text), drop tokens made only of
              whitespace/punctuation/symbols (re fullmatch r"[\\W_]+"), word counts as
              weights, simhash.Simhash(counts, f=64).value
  shingles    building the set of character 5-shingles of text.lower() alone
  datasketch  datasketch.MinHash(num_perm=128) + update_batch(utf-8 shingles), digest
  rensa       rensa.RMinHash(num_perm=128, seed=42) + update(shingles), digest()
              (skipped, and reported as such, if rensa is not installed)

Dumps (from the first repeat)
  --dump-fingerprints  id<TAB>simhash of the recipe as a signed int64 (two's complement)
  --dump-minhash       id<TAB>128 comma-separated datasketch hash values (uint32)
  --dump-rminhash      id<TAB>128 comma-separated rensa hash values (uint32)
A text shorter than 5 characters is one shingle (itself); an empty text has no shingles.
"""

import argparse
import collections
import json
import logging
import os
import platform
import re
import statistics
import sys
import time
from importlib import metadata

import jieba
from simhash import Simhash
from datasketch import MinHash

try:
    import rensa
except ImportError:  # optional
    rensa = None

NUM_PERM = 128
SHINGLE = 5
SIMHASH_BITS = 64
RENSA_SEED = 42
STAGES = ("jieba", "simhash", "shingles", "datasketch", "rensa")

# tokens made only of non-word characters (whitespace, punctuation, symbols) or "_"
_JUNK = re.compile(r"[\W_]+")


def load(path, field, limit):
    ids, texts = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if field == "title_body" and d.get("title"):
                text = d["title"] + "\n" + d["body"]
            else:
                text = d["body"]
            ids.append(d["id"])
            texts.append(text)
            if limit and len(texts) >= limit:
                break
    return ids, texts


def to_int64(v):
    return v - (1 << 64) if v >= (1 << 63) else v


# ---- stages: each takes the list of texts and returns a list of per-doc results


def stage_jieba(texts):
    lcut = jieba.lcut
    return [len(lcut(t)) for t in texts]


def simhash_recipe(text):
    toks = [w for w in jieba.lcut(text) if not _JUNK.fullmatch(w)]
    return Simhash(collections.Counter(toks), f=SIMHASH_BITS).value


def reference_simhash(counts):
    """Plain-Python weighted SimHash with simhash's defaults (last 8 bytes of md5,
    big-endian; bit set when its weighted votes exceed half the total weight)."""
    import hashlib
    total = sum(counts.values())
    votes = [0] * SIMHASH_BITS
    for tok, w in counts.items():
        h = int.from_bytes(hashlib.md5(tok.encode("utf-8")).digest()[-SIMHASH_BITS // 8:], "big")
        for b in range(SIMHASH_BITS):
            if h >> b & 1:
                votes[b] += w
    return sum(1 << b for b in range(SIMHASH_BITS) if votes[b] > total / 2)


def check_simhash(texts, fps, n):
    """Compare the library's value with reference_simhash on the first n docs and on
    every doc with a token weight > 50 (the library's separate large-weight path)."""
    checked = bad = 0
    for i, t in enumerate(texts):
        counts = collections.Counter(w for w in jieba.lcut(t) if not _JUNK.fullmatch(w))
        if i >= n and (not counts or max(counts.values()) <= Simhash.large_weight_cutoff):
            continue
        checked += 1
        if reference_simhash(counts) != fps[i]:
            bad += 1
    return {"checked_docs": checked, "mismatches": bad}


def stage_simhash(texts):
    return [simhash_recipe(t) for t in texts]


def shingles(text):
    s = text.lower()
    if len(s) < SHINGLE:
        return {s} if s else set()
    return {s[i:i + SHINGLE] for i in range(len(s) - SHINGLE + 1)}


def stage_shingles(texts):
    return [len(shingles(t)) for t in texts]


def stage_datasketch(texts):
    out = []
    for t in texts:
        m = MinHash(num_perm=NUM_PERM)
        m.update_batch([s.encode("utf-8") for s in shingles(t)])
        out.append(m.digest())
    return out


def stage_rensa(texts):
    out = []
    for t in texts:
        m = rensa.RMinHash(num_perm=NUM_PERM, seed=RENSA_SEED)
        m.update(list(shingles(t)))
        out.append(m.digest())
    return out


FUNCS = {
    "jieba": stage_jieba,
    "simhash": stage_simhash,
    "shingles": stage_shingles,
    "datasketch": stage_datasketch,
    "rensa": stage_rensa,
}


def run_stage(name, texts, nbytes, repeats):
    fn = FUNCS[name]
    secs, first = [], None
    for r in range(repeats):
        t0 = time.perf_counter()
        res = fn(texts)
        dt = time.perf_counter() - t0
        secs.append(dt)
        if first is None:
            first = res
        print(f"  {name} run {r + 1}/{repeats}: {dt:.3f} s", file=sys.stderr, flush=True)
    med = statistics.median(secs)
    n = len(texts)
    return {
        "seconds_median": round(med, 4),
        "seconds_min": round(min(secs), 4),
        "seconds_max": round(max(secs), 4),
        "seconds_all": [round(s, 4) for s in secs],
        "docs_per_s": round(n / med, 1),
        "mb_per_s": round(nbytes / 1e6 / med, 4),
    }, first


def version(pkg):
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None


def write_tsv(path, ids, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for i, r in zip(ids, rows):
            f.write(f"{i}\t{r}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jsonl")
    ap.add_argument("-r", "--repeats", type=int, default=3)
    ap.add_argument("--text", choices=("body", "title_body"), default="body",
                    help='text hashed: "body" (default) or title + "\\n" + body')
    ap.add_argument("--limit", type=int, default=0, help="only the first N docs (0 = all)")
    ap.add_argument("--only", default=",".join(STAGES), help="comma-separated stages to run")
    ap.add_argument("--dump-fingerprints", metavar="OUT.tsv")
    ap.add_argument("--dump-minhash", metavar="OUT.tsv")
    ap.add_argument("--dump-rminhash", metavar="OUT.tsv")
    ap.add_argument("--out", metavar="RESULTS.json", help="also write the results here")
    ap.add_argument("--check", type=int, default=100, metavar="N",
                    help="after timing, check the recipe's fingerprints against a plain-Python "
                         "SimHash on the first N docs and all docs with a weight > 50 (-1 = off)")
    args = ap.parse_args()

    stages = list(dict.fromkeys(s.strip() for s in args.only.split(",") if s.strip()))
    for s in stages:
        if s not in FUNCS:
            ap.error(f"unknown stage {s!r}; known: {', '.join(STAGES)}")
    # a dump needs its stage
    for opt, st in (("dump_fingerprints", "simhash"), ("dump_minhash", "datasketch"), ("dump_rminhash", "rensa")):
        if getattr(args, opt) and st not in stages:
            stages.append(st)
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")

    ids, texts = load(args.jsonl, args.text, args.limit)
    nbytes = sum(len(t.encode("utf-8")) for t in texts)
    nchars = sum(len(t) for t in texts)

    # load jieba's dictionary before any timing
    jieba.setLogLevel(logging.WARNING)
    t0 = time.perf_counter()
    jieba.initialize()
    jieba_init_s = time.perf_counter() - t0

    result = {
        "file": os.path.abspath(args.jsonl),
        "text": args.text,
        "docs": len(texts),
        "chars": nchars,
        "utf8_bytes": nbytes,
        "repeats": args.repeats,
        "params": {"simhash_bits": SIMHASH_BITS, "num_perm": NUM_PERM, "shingle_chars": SHINGLE,
                   "rensa_seed": RENSA_SEED, "datasketch_seed": 1},
        "env": {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "packages": {p: version(p) for p in ("jieba", "simhash", "datasketch", "numpy", "rensa")},
        },
        "jieba_initialize_s": round(jieba_init_s, 3),
        "stages": {},
    }

    firsts = {}
    for s in stages:
        if s == "rensa" and rensa is None:
            result["stages"][s] = {"skipped": "rensa is not installed"}
            continue
        print(f"stage {s} ({len(texts)} docs, {nbytes / 1e6:.2f} MB)", file=sys.stderr, flush=True)
        result["stages"][s], firsts[s] = run_stage(s, texts, nbytes, args.repeats)

    if "simhash" in firsts:
        fps = firsts["simhash"]
        result["stages"]["simhash"]["zero_fingerprints"] = sum(1 for v in fps if v == 0)
        if args.check >= 0:
            print("checking simhash fingerprints against the plain-Python reference", file=sys.stderr, flush=True)
            chk = check_simhash(texts, fps, args.check)
            result["stages"]["simhash"]["reference_check"] = chk
            if chk["mismatches"]:
                print(f"WARNING: {chk['mismatches']} simhash fingerprints differ from the reference",
                      file=sys.stderr)
        if args.dump_fingerprints:
            write_tsv(args.dump_fingerprints, ids, (to_int64(v) for v in fps))
    if args.dump_minhash and "datasketch" in firsts:
        write_tsv(args.dump_minhash, ids, (",".join(map(str, d.tolist())) for d in firsts["datasketch"]))
    if args.dump_rminhash and "rensa" in firsts:
        write_tsv(args.dump_rminhash, ids, (",".join(map(str, d)) for d in firsts["rensa"]))

    text = json.dumps(result, ensure_ascii=False, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
