#!/usr/bin/env bash
# One command, fresh machine, no API keys: install, ingest the bundled samples, answer a question with citations.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
question="${1:-How many days of annual leave do Northwind employees get?}"
.venv/bin/ragpilot ingest samples
.venv/bin/ragpilot ask "$question"
