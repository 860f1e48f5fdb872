#!/usr/bin/env bash
# Installs simdup into a PostgreSQL installation, safely while it runs:
#   scripts/install.sh [--pg-config PATH] [--debug | --profile NAME] [--source DIR] [--manifest FILE]
# Builds the extension (`cargo pgrx package`: release by default, --debug for a debug build,
# --profile for a Cargo profile such as test-fast: optimized, without the release's fat LTO) from
# the source tree DIR (default: this checkout) into a staging directory, then puts every file
# in place by writing a new file beside the old one and renaming it over the old one. A rename
# replaces the directory entry, not the file: servers that have the old simdup.so mapped keep
# running on it, and backends started afterwards load the new one. (Copying over the old file
# in place, as `cargo pgrx install` does, rewrites the mapped library under running servers and
# crashes them with signal 11.) Then, in each database: ALTER EXTENSION simdup UPDATE.
# --manifest FILE: also writes the path of every file installed into FILE, one a line (the
# package test compares a Debian package's contents with it).
#
# Needs write access to pg_config's pkglibdir and sharedir/extension (root, or sudo).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pg_config="${SIMDUP_PG_CONFIG:-}"
profile=()
src="$(cd "$here/.." && pwd)"
manifest=""
while (($#)); do
  case "$1" in
    --pg-config) pg_config="$2"; shift 2 ;;
    --debug) profile=(--debug); shift ;;
    --profile) profile=(--profile "$2"); shift 2 ;;
    --source) src="$(cd "$2" && pwd)"; shift 2 ;;
    --manifest) manifest="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument $1 (--pg-config PATH, --debug, --profile NAME, --source DIR, --manifest FILE)" >&2; exit 2 ;;
  esac
done
[ -n "$pg_config" ] || pg_config="$(command -v pg_config || true)"
[ -x "$pg_config" ] || { echo "install.sh: no pg_config (pass --pg-config PATH)" >&2; exit 2; }

libdir="$("$pg_config" --pkglibdir)"
extdir="$("$pg_config" --sharedir)/extension"
# cargo-pgrx builds only for a PostgreSQL registered with `cargo pgrx init`: register this one
# (scripts/setup.sh, idempotent; it also checks the headers and the supported majors), so that
# this script works on its own for any supported major.
SIMDUP_PG_CONFIG="$pg_config" bash -c '. "$1"' _ "$here/setup.sh" >&2
stage="$(mktemp -d)"; trap 'rm -rf "$stage"' EXIT
( cd "$src" && cargo pgrx package --pg-config "$pg_config" "${profile[@]}" --out-dir "$stage" >"$stage.log" 2>&1 ) \
  || { cat "$stage.log" >&2; rm -f "$stage.log"; exit 1; }
rm -f "$stage.log"

SUDO=""; [ -w "$libdir" ] && [ -w "$extdir" ] || SUDO="sudo"
# put SRC DEST: a new file in DEST's directory, renamed over DEST (atomic within a filesystem).
put() {
  local tmp
  tmp="$(dirname "$2")/.$(basename "$2").new.$$"
  $SUDO cp "$1" "$tmp" && $SUDO chmod 644 "$tmp" && $SUDO mv -f "$tmp" "$2"
  [ -z "$manifest" ] || echo "$2" >>"$manifest"
}
[ -z "$manifest" ] || : >"$manifest"
n=0
while IFS= read -r -d '' f; do
  rel="${f#"$stage"}"
  case "$rel" in
    *.so) dest="$libdir/$(basename "$rel")" ;;
    *.control|*.sql) dest="$extdir/$(basename "$rel")" ;;
    *) continue ;;
  esac
  put "$f" "$dest"; n=$((n + 1))
done < <(find "$stage" -type f -print0)
# The upgrade scripts of this tree too (cargo pgrx package may or may not stage them).
for f in "$src"/sql/simdup--*--*.sql; do
  [ -e "$f" ] && { put "$f" "$extdir/$(basename "$f")"; n=$((n + 1)); }
done
echo "install.sh: $n files installed into $libdir and $extdir (renamed into place)" >&2
