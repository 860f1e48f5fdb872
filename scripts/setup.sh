#!/usr/bin/env bash
# Sets up everything simdup needs on a fresh Debian 12 machine, idempotently:
# Debian packages, cargo-pgrx (the version in pgrx.toml) and `cargo pgrx init`.
# Source it (`. scripts/setup.sh`) to also get PG_CONFIG, PG_BIN, PG_MAJOR, CARGO_PGRX_VERSION.
set -euo pipefail
SIMDUP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export SIMDUP_ROOT

setting() { # setting SECTION KEY -> value from pgrx.toml (lists joined by spaces)
  python3 - "$SIMDUP_ROOT/pgrx.toml" "$1" "$2" <<'PY'
import sys, tomllib
v = tomllib.load(open(sys.argv[1], "rb"))[sys.argv[2]][sys.argv[3]]
print(" ".join(map(str, v)) if isinstance(v, list) else v)
PY
}

CARGO_PGRX_VERSION="$(setting cargo-pgrx version)"
# SIMDUP_PG_CONFIG overrides pgrx.toml (another major from scripts/postgres.sh, or a relocated
# copy of PostgreSQL for parallel work); PG_MAJOR is then that PostgreSQL's.
PG_CONFIG="${SIMDUP_PG_CONFIG:-$(setting postgres pg_config)}"
if [ -n "${SIMDUP_PG_CONFIG:-}" ] && [ -x "$SIMDUP_PG_CONFIG" ]; then
  PG_MAJOR="$("$SIMDUP_PG_CONFIG" --version | awk '{print $2}')"; PG_MAJOR="${PG_MAJOR%%.*}"
else
  PG_MAJOR="$(setting postgres default)"
fi
APT_PACKAGES="$(setting postgres apt)"
export CARGO_PGRX_VERSION PG_MAJOR PG_CONFIG

log() { printf '\033[1msetup:\033[0m %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# 0. Rust, which this script does not install (the machine's toolchain is the project's).
RUST_MIN="$(setting rust minimum)"
command -v cargo >/dev/null && command -v rustc >/dev/null \
  || die "Rust is not installed: install Rust $RUST_MIN or newer (rustup, or your distribution's rustc and cargo), then run this again."
rust_version="$(rustc --version | awk '{print $2}')"
[ "$(printf '%s\n%s\n' "$RUST_MIN" "$rust_version" | sort -V | head -1)" = "$RUST_MIN" ] \
  || die "rustc $rust_version is too old: simdup (pgrx $CARGO_PGRX_VERSION) needs Rust $RUST_MIN or newer."

# 1. Debian packages.
missing=()
for p in $APT_PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
else
  log "Debian packages present"
fi
# 1b. Prerequisites checked, not discovered halfway through a build (skipped by scripts that
# only run servers, which also work from a relocated copy of PostgreSQL without headers:
# SIMDUP_NO_BUILD=1).
if [ "${SIMDUP_NO_BUILD:-0}" != 1 ]; then
  [ -x "$PG_CONFIG" ] || die "no pg_config at $PG_CONFIG: install postgresql-server-dev-$PG_MAJOR (or set SIMDUP_PG_CONFIG)."
  pg_version="$("$PG_CONFIG" --version | awk '{print $2}')"
  supported="$(setting postgres versions)"
  case " $supported " in
    *" ${pg_version%%.*} "*) ;;
    *) die "PostgreSQL $pg_version at $PG_CONFIG is not supported: simdup supports PostgreSQL $supported." ;;
  esac
  [ -f "$("$PG_CONFIG" --includedir-server)/postgres.h" ] \
    || die "the PostgreSQL server headers are missing: install postgresql-server-dev-${pg_version%%.*}."
  command -v clang >/dev/null && ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 \
    || die "clang and libclang are needed to build simdup (pgrx generates its bindings with them): install clang libclang-dev."
fi
PG_BIN="$("$PG_CONFIG" --bindir)"
export PG_BIN

# 2. cargo-pgrx.
if cargo pgrx --version 2>/dev/null | grep -qx "cargo-pgrx $CARGO_PGRX_VERSION"; then
  log "cargo-pgrx $CARGO_PGRX_VERSION present"
else
  log "installing cargo-pgrx $CARGO_PGRX_VERSION (about 6 minutes)"
  cargo install cargo-pgrx --version "$CARGO_PGRX_VERSION" --locked
fi

# 3. pgrx init for this PostgreSQL (no download, no build of PostgreSQL). `cargo pgrx init`
# rewrites its configuration, so every major already configured is passed again. An entry whose
# pg_config is gone (a removed build) is dropped first: cargo-pgrx refuses to run while any
# configured one is missing.
PGRX_CONFIG="${PGRX_HOME:-$HOME/.pgrx}/config.toml"
if [ -f "$PGRX_CONFIG" ]; then
  kept="$(while IFS= read -r line; do
    if [[ "$line" =~ ^pg([0-9]+)\ =\ \"(.*)\"$ ]] && [ ! -x "${BASH_REMATCH[2]}" ]; then
      echo "pgrx: dropping pg${BASH_REMATCH[1]} (${BASH_REMATCH[2]} is gone)" >&2; continue
    fi
    printf '%s\n' "$line"
  done <"$PGRX_CONFIG")"
  [ "$kept" = "$(cat "$PGRX_CONFIG")" ] || printf '%s\n' "$kept" >"$PGRX_CONFIG"
fi
if grep -qs "^pg$PG_MAJOR = \"$PG_CONFIG\"" "$PGRX_CONFIG"; then
  log "pgrx initialized for pg$PG_MAJOR"
else
  init=("--pg$PG_MAJOR" "$PG_CONFIG")
  while IFS= read -r line; do
    [[ "$line" =~ ^pg([0-9]+)\ =\ \"(.*)\"$ ]] || continue
    [ "${BASH_REMATCH[1]}" = "$PG_MAJOR" ] || init+=("--pg${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}")
  done < <(cat "$PGRX_CONFIG" 2>/dev/null)
  log "cargo pgrx init ${init[*]}"
  cargo pgrx init "${init[@]}"
fi
