#!/usr/bin/env bash
# Builds a Debian package of simdup for one PostgreSQL major, named as Debian names extension
# packages (postgresql-15-pgvector, ...):
#   scripts/package.sh [--pg-config PATH] [--out DIR] [--profile NAME]
#     -> DIR/postgresql-<major>-simdup_<version>_amd64.deb   (its path is the last line printed)
#   scripts/package.sh --all [--out DIR]
#     -> one package for each supported major (pgrx.toml: postgres.versions), built against the
#        default major's pg_config (SIMDUP_PG_CONFIG or pgrx.toml) and scripts/postgres.sh MAJOR
#        for the others; the path of each is printed, one a line
# The package holds simdup.so, simdup.control and every install and upgrade script, installed
# where Debian's and PGDG's postgresql-<major> look for them (/usr/lib/postgresql/<major>/lib
# and /usr/share/postgresql/<major>/extension, whatever prefix the PostgreSQL built against has),
# and depends on postgresql-<major>. --profile builds with another Cargo profile than release
# (the tests of other majors use test-fast: the same files, built in a fraction of the time). Install it with `apt-get install ./postgresql-<major>-simdup_…deb`: dpkg
# writes each file beside the old one and renames it into place, so running servers that have
# simdup.so loaded keep running; `apt-get remove postgresql-<major>-simdup` removes it.
# Needs Rust and cargo-pgrx to build (scripts/setup.sh); the package itself needs neither.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
pg_config="${SIMDUP_PG_CONFIG:-}"
out="$root/target/debian"
profile=()
all=0
while (($#)); do
  case "$1" in
    --pg-config) pg_config="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --profile) profile=(--profile "$2"); shift 2 ;;
    --all) all=1; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "package.sh: unknown argument $1 (--pg-config PATH, --out DIR, --profile NAME, --all)" >&2; exit 2 ;;
  esac
done
setting() { python3 -c 'import sys,tomllib; v=tomllib.load(open(sys.argv[1],"rb"))["postgres"][sys.argv[2]]; print(" ".join(map(str,v)) if isinstance(v,list) else v)' "$root/pgrx.toml" "$1"; }
if [ "$all" = 1 ]; then
  default_major="$(setting default)"
  for m in $(setting versions); do
    if [ "$m" = "$default_major" ]; then
      pgc="${SIMDUP_PG_CONFIG:-$(setting pg_config)}"
    else
      pgc="$("$here/postgres.sh" "$m" | tail -1)"
    fi
    SIMDUP_PG_CONFIG="" "$0" --pg-config "$pgc" --out "$out" "${profile[@]}" | tail -1
  done
  exit 0
fi
[ -n "$pg_config" ] || pg_config="$(command -v pg_config || true)"
[ -x "$pg_config" ] || { echo "package.sh: no pg_config (pass --pg-config PATH)" >&2; exit 2; }
major="$("$pg_config" --version | awk '{print $2}')"; major="${major%%.*}"
version="$(python3 -c 'import tomllib,sys; print(tomllib.load(open(sys.argv[1],"rb"))["package"]["version"])' "$root/Cargo.toml")"
arch="$(dpkg --print-architecture)"
# Who the package names as its maintainer: set SIMDUP_MAINTAINER to your own when you publish it.
maintainer="${SIMDUP_MAINTAINER:-simdup developers <simdup@example.org>}"
name="postgresql-$major-simdup"
# Debian's layout (postgresql-common; PGDG's packages use the same), not pg_config's: a build
# against a PostgreSQL elsewhere (a relocated copy, scripts/postgres.sh's) still installs there.
libdir="/usr/lib/postgresql/$major/lib"
extdir="/usr/share/postgresql/$major/extension"

# cargo-pgrx builds only for a PostgreSQL registered with `cargo pgrx init`: register this one
# (scripts/setup.sh, idempotent; it also checks the headers and the supported majors), so that
# this script works on its own for any supported major.
SIMDUP_PG_CONFIG="$pg_config" bash -c '. "$1"' _ "$here/setup.sh" >&2
stage="$(mktemp -d)"; trap 'rm -rf "$stage"' EXIT
( cd "$root" && cargo pgrx package --pg-config "$pg_config" "${profile[@]}" --out-dir "$stage/build" >"$stage/build.log" 2>&1 ) \
  || { cat "$stage/build.log" >&2; exit 1; }
pkg="$stage/pkg"
install -d -m 755 "$pkg/DEBIAN" "$pkg$libdir" "$pkg$extdir" "$pkg/usr/share/doc/$name"
install -m 644 "$(find "$stage/build" -name simdup.so | head -1)" "$pkg$libdir/simdup.so"
strip --strip-unneeded "$pkg$libdir/simdup.so"
for f in $(find "$stage/build" -name 'simdup*.control' -o -name 'simdup--*.sql') "$root"/sql/simdup--*--*.sql; do
  install -m 644 "$f" "$pkg$extdir/$(basename "$f")"
done

cat >"$pkg/usr/share/doc/$name/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: simdup

Files: *
Copyright: 2026 the simdup developers
License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy of this software
 and associated documentation files (the "Software"), to deal in the Software without
 restriction, including without limitation the rights to use, copy, modify, merge, publish,
 distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
 Software is furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in all copies or
 substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING
 BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
 NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
 DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
EOF
cat >"$stage/changelog" <<EOF
simdup ($version) unstable; urgency=medium

  * simdup $version for PostgreSQL $major; see CHANGELOG.md.

 -- $maintainer  $(date -R -d "@${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)}")
EOF
gzip -9n <"$stage/changelog" >"$pkg/usr/share/doc/$name/changelog.gz"
chmod 644 "$pkg/usr/share/doc/$name/"*

size="$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)"
cat >"$pkg/DEBIAN/control" <<EOF
Package: $name
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: postgresql-$major, libc6, libgcc-s1
Section: database
Priority: optional
Description: near-duplicate detection for PostgreSQL $major (SimHash, MinHash)
 simdup finds near-duplicate Chinese and English documents inside PostgreSQL:
 simhash(text) fingerprints, Hamming search served by B-tree indexes, dedup
 triggers that reject, skip or mark near-duplicates, batch pairs and groups,
 and MinHash/Jaccard similarity search. CREATE EXTENSION simdup in a database
 to use it.
EOF
( cd "$pkg" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum ) >"$pkg/DEBIAN/md5sums"
chmod 644 "$pkg/DEBIAN/control" "$pkg/DEBIAN/md5sums"
mkdir -p "$out"
deb="$out/${name}_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$deb" >/dev/null
echo "$deb"
