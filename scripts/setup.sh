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
PG_MAJOR="$(setting postgres default)"
# SIMDUP_PG_CONFIG overrides pgrx.toml (e.g. a relocated copy of PostgreSQL for parallel work).
PG_CONFIG="${SIMDUP_PG_CONFIG:-$(setting postgres pg_config)}"
APT_PACKAGES="$(setting postgres apt)"
export CARGO_PGRX_VERSION PG_MAJOR PG_CONFIG

log() { printf '\033[1msetup:\033[0m %s\n' "$*" >&2; }

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
PG_BIN="$("$PG_CONFIG" --bindir)"
export PG_BIN

# 2. cargo-pgrx.
if cargo pgrx --version 2>/dev/null | grep -qx "cargo-pgrx $CARGO_PGRX_VERSION"; then
  log "cargo-pgrx $CARGO_PGRX_VERSION present"
else
  log "installing cargo-pgrx $CARGO_PGRX_VERSION (about 6 minutes)"
  cargo install cargo-pgrx --version "$CARGO_PGRX_VERSION" --locked
fi

# 3. pgrx init against the system PostgreSQL (no download, no build of PostgreSQL).
PGRX_CONFIG="${PGRX_HOME:-$HOME/.pgrx}/config.toml"
if grep -qs "^pg$PG_MAJOR = \"$PG_CONFIG\"" "$PGRX_CONFIG"; then
  log "pgrx initialized for pg$PG_MAJOR"
else
  log "cargo pgrx init --pg$PG_MAJOR $PG_CONFIG"
  cargo pgrx init "--pg$PG_MAJOR" "$PG_CONFIG"
fi
