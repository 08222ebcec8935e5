#!/bin/bash
# clang-tidy (config in .clang-tidy, warnings are errors) over the shipped code.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/compile_commands.json ] || scripts/build.sh
clang-tidy -p build --quiet daemons/*/*.cpp libs/*/src/*.cpp tools/*/*.cpp
