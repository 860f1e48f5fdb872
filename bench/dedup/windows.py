"""Windows of the real news corpus (bench/data/zh_news.jsonl) that are no near-duplicates of
each other, for the family benchmarks (family_bench.sh, citus_limit_bench.sh).

The bodies are joined into one text (tabs, newlines and backslashes made spaces: COPY's text
format). Windows are taken one after the other; a window is taken only when its 5-grams are
nearly all distinct and at most 30 of them occur in windows taken before (the corpus has
reposts, repeated footers and repetitive passages), so that two family rows (the corpus's first
`core` characters, then a window of their own) stay under the similarity thresholds.
"""
import json
import sys


def grams(w):
    return {hash(w[i:i + 5]) for i in range(len(w) - 4)}


class Windows:
    def __init__(self, path, core):
        clean = lambda b: b.replace("\t", " ").replace("\n", " ").replace("\r", " ").replace("\\", " ")
        self.text = " ".join(clean(json.loads(line)["body"]) for line in open(path))
        self.common = self.text[:core]
        self.seen, self.at = grams(self.common), core

    def take(self, size, count):
        out = []
        while len(out) < count:
            if self.at + size > len(self.text):
                sys.exit(f"the corpus has too few distinct windows ({len(out)} of {count})")
            w = self.text[self.at:self.at + size]
            g = grams(w)
            if len(g) >= 0.97 * (size - 4) and len(g & self.seen) <= 30:
                self.seen.update(g)
                out.append(w)
                self.at += size
            else:
                self.at += size // 3
        return out
