#!/usr/bin/env bash
# Install ndpsim with its test tools, lint, and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
NDPSIM_EXTRAS="[test,ray]" . scripts/_install.sh
ruff check .
ruff format --check .
python -m pytest "$@"
