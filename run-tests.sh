#!/usr/bin/env bash
# Sets up and runs every test: installs the Debian packages and pi 1.6.0
# (the reference, from npm), builds with -Werror under gcc and clang, and
# runs the unit, golden, mount and differential tests.  Needs root (or
# sudo) for the packages and for mounting.
set -euo pipefail
cd "$(dirname "$0")"

scripts/deps.sh
# clang must build it warning-free too; the tests then run on gcc's build.
make -s clean
make -s CC=clang all build/unit-tests
make -s clean
make -s all build/unit-tests
make check
