#!/usr/bin/env bash
# Create .venv and install ragpilot with its offline models. Idempotent: a second run installs nothing new.
# The first run on a machine compiles llama-cpp-python for its CPU (about 5 minutes on 2 cores, see
# scripts/install_llama_cpp.py); later runs, and other checkouts on the same machine, reuse that wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
python_bin="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$python_bin" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python scripts/install_llama_cpp.py
.venv/bin/python -m pip install --quiet -e ".${extras:+[$extras]}"
