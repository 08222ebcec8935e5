#!/bin/bash
# The long fuzz run: every target for 10 million executions (or --runs N), results in
# bench/results/fuzz.json. Niced so that it does not starve other work on the machine.
#   sudo bench/fuzz.sh [--runs N] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
exec nice -n 10 scripts/fuzz.sh --long "$@"
