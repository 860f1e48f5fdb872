#!/usr/bin/env python3
"""Builds core/data/english_idf.txt, the English IDF table of the SimHash weights.

jieba's IDF table (core/data/jieba_idf.txt) has no word with a Latin letter or a digit, so
without this table every English word would get jieba's median IDF (11.95): "the" would weigh
as much as a rare content word. This script derives English IDFs on jieba's scale from the word
frequencies shipped in the PyPI package wordfreq (pinned below; its data is fixed per version, so
the output is reproducible byte for byte).

Run it (from the repository root):

    python3 -m venv /tmp/wf && /tmp/wf/bin/pip install wordfreq==3.1.1
    /tmp/wf/bin/python scripts/build_english_idf.py

Method
------
1. Words: wordfreq.top_n_list("en", 50000), the 50,000 most frequent English words ("best"
   word list), already lower case. Frequencies: wordfreq.get_frequency_dict("en"), the raw
   shipped values (no tokenizer involved).
2. Tokens: simdup segments with jieba-rs 0.11 (HMM off), which turns a run of ASCII text into
   maximal runs of [a-z0-9] (after NFKC and lower-casing), splitting at apostrophes, periods and
   hyphens: "don't" -> "don" "'" "t", "u.s." -> "u" "." "s" "." (checked on all 50,000 words).
   So a word of ASCII letters/digits is a token as it is; a word of ASCII letters joined by
   ' . - ("it's", "don't", "u.s", "e.g") is split like jieba does and its frequency added to
   each part, so "s" and "t" get the frequency they have as tokens in segmented text. Other
   words are skipped: those with a character outside ASCII ("café": jieba cuts off the "é"),
   and those with a digit and punctuation or a run of two or more digits, which in wordfreq are
   placeholders for numbers ("a00" stands for "a10", "a35", ...; "5'9"). Numbers of two or more
   digits are thus not in the table and keep the unknown-word IDF, as in Chinese text.
3. IDF: a token of frequency f (share of all word tokens) is expected in a share
   df = 1 - (1 - f)^L of documents of L tokens, and idf = ln(1 / df), clamped to
   [FLOOR, CEILING]. L = 18 puts the English table on jieba's scale: jieba's IDFs are those of
   sentence-sized documents (的, about 4 % of Chinese tokens, has idf 0.885, i.e. df = 0.41),
   and with L = 18 the rarest word kept (f = 3.5e-7) gets 11.96, jieba's median, which is the
   IDF simdup gives an unknown word, so the table joins the unknown-word weight without a step.
   Translation pairs then agree to about ±1 (the 0.88/的 0.88 at the floor, and 0.98/和 1.83,
   is 1.66/是 1.69, government 4.98/政府 4.57, hospital 6.15/医院 5.86, telescope 9.20/望远镜
   8.09). A 500-token document would compress the scale (the rarest word at 8.6, content words
   at 2–6) so that every unknown English word, a typo included, would outweigh all known ones.
   FLOOR is jieba's smallest IDF (的): the most frequent English words ("the", "to", "and",
   "of", "a") weigh what 的 weighs. CEILING is jieba's largest IDF (never reached).
4. Output: "word idf" lines, sorted by word (byte order), IDF with 4 decimals.
"""

import argparse
import importlib.metadata
import math
import re
import sys
from pathlib import Path

WORDFREQ_VERSION = "3.1.1"
N_WORDS = 50_000
DOC_LEN = 18
FLOOR = 0.8847  # jieba's minimum IDF (的 0.88474)
CEILING = 13.9007  # jieba's maximum IDF

TOKEN = re.compile(r"[a-z0-9]+")
PLAIN = re.compile(r"[a-z0-9]+")
JOINED = re.compile(r"[a-z]+(?:['.\-][a-z]+)*['.\-]?")

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "core" / "data" / "english_idf.txt"
JIEBA = ROOT / "core" / "data" / "jieba_idf.txt"


def tokens_of(word):
    """The tokens jieba makes of `word` if the table should count them, else None."""
    if PLAIN.fullmatch(word):
        # wordfreq writes every digit of a number of two or more digits as 0.
        return None if re.search(r"[0-9]{2}", word) else [word]
    if JOINED.fullmatch(word):
        return TOKEN.findall(word)
    return None


def idf_of(freq):
    df = 1.0 - (1.0 - freq) ** DOC_LEN
    return min(CEILING, max(FLOOR, math.log(1.0 / df)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--any-version", action="store_true", help=f"run with a wordfreq other than {WORDFREQ_VERSION}")
    args = ap.parse_args()

    import wordfreq

    version = importlib.metadata.version("wordfreq")
    print(f"wordfreq {version}")
    if version != WORDFREQ_VERSION and not args.any_version:
        sys.exit(f"wordfreq {WORDFREQ_VERSION} is required for a reproducible table (have {version})")

    words = wordfreq.top_n_list("en", N_WORDS)
    freqs = wordfreq.get_frequency_dict("en")
    token_freq = {}
    skipped = 0
    for w in words:
        toks = tokens_of(w)
        if toks is None:
            skipped += 1
            continue
        for t in toks:
            token_freq[t] = token_freq.get(t, 0.0) + freqs[w]

    table = {t: idf_of(f) for t, f in token_freq.items()}
    with open(args.out, "w", encoding="ascii", newline="\n") as out:
        for t in sorted(table):
            out.write(f"{t} {table[t]:.4f}\n")

    values = sorted(table.values())
    q = lambda p: values[round(p * (len(values) - 1))]
    print(f"{len(words)} words, {skipped} skipped, {len(table)} tokens -> {args.out}")
    print("idf quantiles: " + "  ".join(f"p{int(p * 100)} {q(p):.2f}" for p in (0, 0.01, 0.1, 0.5, 0.9, 1)))
    print(f"at the floor {FLOOR}: {sum(v <= FLOOR for v in values)} tokens")
    if JIEBA.exists():
        jieba = dict(line.split() for line in JIEBA.read_text(encoding="utf-8").splitlines())
        pairs = "the 的 and 和 is 是 said 说 we 我们 government 政府 hospital 医院 school 学校 water 水 earthquake 地震 telescope 望远镜 photosynthesis 光合作用"
        it = iter(pairs.split())
        print("vs jieba: " + "  ".join(f"{e} {table[e]:.2f}/{z} {float(jieba[z]):.2f}" for e, z in zip(it, it)))


if __name__ == "__main__":
    main()
