#!/usr/bin/env bash
# The mount tests: tests/mount/run.sh PATH-OF-pisessionfs [t_NAME...]
#
# Every tests/mount/t_*.sh (or those named), through the one runner,
# tests/run-suite.sh, which says how a test is judged (exit 0 and its
# "checks: N" line, within its time limit, nothing left mounted) and ends
# with exactly "N passed, M failed".  A mount test has 100 s, times
# TIME_SCALE (TEST_TIMEOUT overrides); lib.sh stretches every limit inside
# the tests by TIME_SCALE too (a slow daemon: valgrind, a loaded machine).
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../run-suite.sh" --budget 100 "$here" "$@"
