#!/usr/bin/env bash
# The reference text of COMMON_5 (core/src/similarity/common.rs): the PostgreSQL 15 manual of the Debian
# package postgresql-doc-15 15.20-0+deb12u1, as paragraphs of plain text (one paragraph a line,
# paragraphs of 40 characters or more, a blank line between them), written to
# bench/data/reference/pgdoc-15.txt:
#   bench/fetch/reference_text.sh
# Then the table: cargo run --release -p simdup-bench --example common_shingles -- --k 5 --top 20000
# bench/data/reference/pgdoc-15.txt (bench/rust/examples/common_shingles.rs). The package is
# fetched with apt-get download (the system's sources, which are not changed); another version
# of it gives another table, so the version is checked.
BENCH_PG=0 . "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
out="$DATA/reference"
want=15.20-0+deb12u1
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download "postgresql-doc-15=$want" >/dev/null 2>&1) \
  || { echo "apt-get download postgresql-doc-15=$want failed (the table was made from that version)" >&2; exit 1; }
dpkg-deb -x "$work"/postgresql-doc-15_*_all.deb "$work/x"
python3 - "$work/x/usr/share/doc/postgresql-doc-15/html" "$out/pgdoc-15.txt" <<'PY'
import glob, html, re, sys
n = 0
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for f in sorted(glob.glob(sys.argv[1] + "/*.html")):
        t = open(f, encoding="utf-8", errors="replace").read()
        t = re.sub(r"(?s)<pre.*?</pre>", "\n\n", t)
        t = re.sub(r"(?s)<(script|style).*?</\1>", "", t)
        t = re.sub(r"</?(p|div|h\d|li|dt|dd|tr|table|br)[^>]*>", "\n\n", t)
        t = html.unescape(re.sub(r"<[^>]+>", "", t))
        for para in re.split(r"\n\s*\n", t):
            para = " ".join(para.split())
            if len(para) >= 40:
                out.write(para + "\n\n")
                n += 1
print(f"{n} paragraphs -> {sys.argv[2]}", file=sys.stderr)
PY
