#!/usr/bin/env bash
# Create bench/.venv with the Python baseline packages (bench/python/requirements.txt).
# Idempotent: reuses an existing venv and skips pip when requirements.txt has not
# changed since the last successful install. Safe to run from any cwd.
# PYTHON=... picks the interpreter (default python3); FORCE=1 reinstalls.
BENCH_PG=0 . "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
VENV="$BENCH/.venv"
REQ="$BENCH/python/requirements.txt"
STAMP="$VENV/.requirements.sha256"
PY="${PYTHON:-python3}"

if [[ ! -x "$VENV/bin/python" ]]; then
  echo "creating $VENV" >&2
  "$PY" -m venv "$VENV"
fi

want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [[ "${FORCE:-0}" != 1 && -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
  echo "bench/.venv up to date" >&2
else
  "$VENV/bin/python" -m pip install --disable-pip-version-check --quiet -r "$REQ" >&2
  "$VENV/bin/python" -c 'import jieba, simhash, datasketch, rensa' 
  printf '%s\n' "$want" > "$STAMP"
  echo "bench/.venv ready" >&2
fi
"$VENV/bin/python" -m pip freeze --disable-pip-version-check
