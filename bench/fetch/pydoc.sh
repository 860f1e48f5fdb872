#!/usr/bin/env bash
# A third corpus for the quality benchmark, not used by any other measurement here: the prose of
# the Python 3.11 documentation, from the Debian package python3.11-doc (its reStructuredText
# sources, usr/share/doc/python3.11/html/_sources/**/*.rst.txt), fetched with `apt-get download`
# (no installation). Technical English full of identifiers that are in no IDF table: the weak
# spot of format 1's unknown-word weighting.
#
#   bench/data/en_pydoc.jsonl   one section per line: {"id": "path#n", "title": heading, "body": prose}
#
# A section is the text under one heading of one file. Kept: paragraphs that start unindented
# (prose, list items); dropped: directives (`.. x::` and their indented blocks), literal and code
# blocks (indented), tables, headings' underlines. Inline markup is reduced to its text
# (:func:`len` -> len, ``x`` -> x, `text <url>`_ -> text, **b** -> b). Sections under 20
# characters are dropped. Idempotent (the .deb is kept in bench/data/dl/pydoc/). The package
# version is pinned (PYDOC_VERSION); if Debian no longer serves it, the current one is used and
# the version printed, so the figures may differ slightly.
BENCH_PG=0 . "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
DATA_DIR="$DATA"
DL="$DATA_DIR/dl/pydoc"
OUT="$DATA_DIR/en_pydoc.jsonl"
VERSION="${PYDOC_VERSION:-3.11.2-6+deb12u9}"
mkdir -p "$DL"
if [[ -s "$OUT" && "${FORCE:-0}" != 1 ]]; then
  echo "en_pydoc.jsonl exists, skipping (FORCE=1 to rebuild)" >&2
  exit 0
fi
deb=$(compgen -G "$DL/python3.11-doc_*_all.deb" | head -1 || true)
if [[ -z "$deb" ]]; then
  (cd "$DL" && { apt-get download "python3.11-doc=$VERSION" 2>/dev/null || {
    echo "python3.11-doc $VERSION not available; downloading the current version" >&2
    apt-get download python3.11-doc; }; }) >&2
  deb=$(compgen -G "$DL/python3.11-doc_*_all.deb" | head -1)
fi
echo "using $(basename "$deb")" >&2
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp"
python3 - "$tmp/usr/share/doc/python3.11/html/_sources" "$OUT" <<'PY'
import json, os, re, sys

src, out = sys.argv[1], sys.argv[2]
UNDER = re.compile(r"^([=\-~^*#+\"'`.:])\1{2,}\s*$")
ROLE = re.compile(r":[a-zA-Z:+-]+:`~?!?([^`<]*?)(?:\s*<[^>]*>)?`")
LINK = re.compile(r"`([^`<]+?)\s*<[^>]*>`__?")
LIT = re.compile(r"``([^`]+)``")
EMPH = re.compile(r"\*\*?([^*]+)\*\*?")
REF = re.compile(r"`([^`]+)`_?_?")


def clean(t):
    t = ROLE.sub(lambda m: m.group(1).split(".")[-1] if m.group(1).startswith("~") else m.group(1), t)
    t = LINK.sub(r"\1", t)
    t = LIT.sub(r"\1", t)
    t = EMPH.sub(r"\1", t)
    t = REF.sub(r"\1", t)
    return re.sub(r"\s+", " ", t).strip()


n = 0
with open(out, "w", encoding="utf-8", newline="\n") as fo:
    for root, dirs, files in os.walk(src):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(".rst.txt") or f == "changelog.rst.txt":
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)[: -len(".rst.txt")]
            lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
            sections, title, paras, cur = [], "", [], []
            skip_indented = False
            i = 0
            while i < len(lines):
                line = lines[i]
                nxt = lines[i + 1] if i + 1 < len(lines) else ""
                if line.strip() and not line.startswith(" ") and UNDER.match(nxt) and len(nxt.strip()) >= len(line.strip()) - 1:
                    if cur:
                        paras.append(" ".join(cur)); cur = []
                    sections.append((title, paras)); title, paras = clean(line), []
                    i += 2
                    continue
                if UNDER.match(line):
                    i += 1
                    continue
                if not line.strip():
                    if cur:
                        paras.append(" ".join(cur)); cur = []
                    i += 1
                    continue
                if line.startswith((" ", "\t")):
                    # indented: directive bodies, literal blocks, quotes: dropped
                    if cur:
                        paras.append(" ".join(cur)); cur = []
                    i += 1
                    continue
                if line.startswith(("..", "|", "+", "===")):
                    if cur:
                        paras.append(" ".join(cur)); cur = []
                    i += 1
                    continue
                cur.append(line.strip())
                i += 1
            if cur:
                paras.append(" ".join(cur))
            sections.append((title, paras))
            for k, (t, ps) in enumerate(sections):
                body = "\n".join(c for c in (clean(p).rstrip(":") + ("." if p.endswith("::") else "") for p in ps) if c)
                if len(body) < 20:
                    continue
                fo.write(json.dumps({"id": f"{rel}#{k}", "title": t, "body": body}, ensure_ascii=False) + "\n")
                n += 1
print(f"en_pydoc: wrote {n} sections", file=sys.stderr)
PY
sha256sum "$OUT" >&2
