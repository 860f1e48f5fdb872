#!/usr/bin/env bash
# Gives a PostgreSQL of the requested major version and prints its pg_config as the last line:
#   scripts/postgres.sh 15   -> Debian 12's system PostgreSQL (installed with apt if missing)
#   scripts/postgres.sh 17   -> 17.x built from Debian's source package (trixie)
#   scripts/postgres.sh 18   -> 18.x built from Debian's source package (sid)
# Builds go into $SIMDUP_PG_CACHE, one prefix per exact version
# (pg-17.12, pg-18.6, ...), contrib included; a prefix that is already complete is reused, so a
# second run costs seconds. The system's apt sources are never changed: the source package is
# fetched through a private sources list under the cache directory. The default cache is
# ~/.cache/simdup, or /var/cache/simdup for root (servers run as the postgres user, who cannot
# read /root).
set -euo pipefail
major="${1:-}"
case "$major" in
  15|17|18) ;;
  *) echo "usage: $0 15|17|18" >&2; exit 2 ;;
esac
log() { printf '\033[1mpostgres.sh:\033[0m %s\n' "$*" >&2; }
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
apt_install() { # apt_install PKG... (only the missing ones)
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  log "installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
}

if [ "$major" = 15 ]; then
  apt_install postgresql-15 postgresql-server-dev-15 postgresql-contrib
  echo /usr/bin/pg_config
  exit 0
fi

default_cache="$HOME/.cache/simdup"; [ "$(id -u)" -eq 0 ] && default_cache=/var/cache/simdup
cache="${SIMDUP_PG_CACHE:-$default_cache}"
suite=trixie; [ "$major" = 18 ] && suite=sid
apt_dir="$cache/apt-$suite"
mkdir -p "$apt_dir/lists/partial"
printf 'deb-src http://deb.debian.org/debian %s main\n' "$suite" >"$apt_dir/sources.list"
A=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
   -o "Dir::State::Lists=$apt_dir/lists")

# The newest source version of postgresql-MAJOR in that suite (a fresh list at most a day old).
if [ -z "$(find "$apt_dir/lists" -name '*Sources*' -mtime -1 2>/dev/null | head -1)" ]; then
  apt-get "${A[@]}" update -qq >/dev/null 2>&1 || apt-get "${A[@]}" update >&2
fi
version="$(apt-cache "${A[@]}" showsrc "postgresql-$major" 2>/dev/null \
  | awk '/^Version:/ {print $2}' | sort -V | tail -1)"
[ -n "$version" ] || { log "no source of postgresql-$major in Debian $suite"; exit 1; }
upstream="${version%%-*}"
prefix="$cache/pg-$upstream"
if [ -x "$prefix/bin/pg_config" ] && [ -f "$prefix/.complete" ]; then
  log "PostgreSQL $upstream already built in $prefix"
  echo "$prefix/bin/pg_config"
  exit 0
fi

apt_install build-essential bison flex libssl-dev zlib1g-dev libxml2-dev liblz4-dev libzstd-dev \
  pkg-config dpkg-dev
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
log "fetching the source of postgresql-$major $version (Debian $suite)"
if ! ( cd "$work" && apt-get "${A[@]}" source --download-only "postgresql-$major=$version" >"$work/fetch.log" 2>&1 ); then
  tail -5 "$work/fetch.log" >&2
  log "Debian $suite lists postgresql-$major $version, but its source files cannot be downloaded from this machine's Debian archive (see above)."
  exit 1
fi
tarball="$(ls "$work"/postgresql-"$major"_*.orig.tar.* | head -1)"
tar xf "$tarball" -C "$work"
src="$(find "$work" -maxdepth 1 -type d -name "postgresql-$major*" -o -maxdepth 1 -type d -name "postgresql-$upstream" | head -1)"
[ -d "$src" ] || { log "unpacked no source tree from $tarball"; exit 1; }
log "building PostgreSQL $upstream into $prefix (about 2 minutes on 2 cores)"
rm -rf "$prefix"
(
  cd "$src"
  ./configure --prefix="$prefix" --without-icu --without-readline --with-openssl --with-lz4 \
    --with-zstd --with-libxml >"$work/configure.log" 2>&1 \
    || { tail -30 "$work/configure.log" >&2; exit 1; }
  make -s -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -40 "$work/make.log" >&2; exit 1; }
  make -s install >/dev/null
  make -s -C contrib -j"$(nproc)" install >/dev/null 2>&1
  # pg_isolation_regress and isolationtester, for the concurrency specs
  make -s -C src/test/isolation -j"$(nproc)" install >/dev/null 2>&1 \
    || make -s -C src/test/isolation -j"$(nproc)" >/dev/null
  mkdir -p "$prefix/lib/pgxs/src/test/isolation"
  cp src/test/isolation/pg_isolation_regress src/test/isolation/isolationtester \
    "$prefix/lib/pgxs/src/test/isolation/" 2>/dev/null || true
)
# Servers run as the postgres user: it must be able to read the prefix.
chmod -R a+rX "$prefix"
touch "$prefix/.complete"
log "PostgreSQL $upstream ready"
echo "$prefix/bin/pg_config"
