#!/usr/bin/env bash
# Sets up and runs every test: installs the Debian packages and pi 1.6.0
# (the reference, from npm), builds with -Werror under gcc and clang, and
# runs the unit, golden, mount and differential tests.  Needs root (or
# sudo) for the packages and for mounting.
set -euo pipefail
cd "$(dirname "$0")"

# Warnings are errors here, whatever the tree (Makefile: WERROR).
export WERROR=1
# The tests run Debian's tools, the ones tests/deps.sh installs, ahead of
# whatever a user's PATH puts first: pyenv's python3 shim, say, costs
# 0.4 s of CPU a call against 0.03 s for /usr/bin/python3, and the mount
# tests call python3 hundreds of times (the plain mount stage went from
# 272 s to 199 s with this and fsx without timeout(1)).
export PATH=/usr/bin:/bin:$PATH

tests/deps.sh --test
# pi 1.6.0, the reference, once before any test: several stages compare
# with it, and an npm install must not eat into a timed test's budget.
tests/setup-pi.sh >/dev/null
# clang must build it warning-free too; the tests then run on gcc's build.
# Every build takes all the cores, as the test runners do (TEST_JOBS).
jobs=-j${TEST_JOBS:-$(nproc)}
make -s clean
make -s "$jobs" CC=clang all build/unit-tests build/fs-unit-tests
make -s clean
make -s "$jobs" all build/unit-tests build/fs-unit-tests
# Every test twice: as built, then with the daemon and the tests' binaries
# under AddressSanitizer, UBSan and LeakSanitizer (build/asan).
status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
make check 2>&1 | tee "$log" || status=1
plain=$(grep -E '^check: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
# Sanitized daemons run several times slower: every time limit in the
# mount tests (per access, per poll, per test) is stretched by TIME_SCALE
# (tests/mount/lib.sh), as the slowest machine the tests run on needs.
make -s "$jobs" SANITIZE=1 all build/unit-tests build/fs-unit-tests
TIME_SCALE=${TIME_SCALE:-2} make check SANITIZE=1 2>&1 | tee "$log" || status=1
sanitized=$(grep -E '^check: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
# The mount tests once more with the daemon under ThreadSanitizer: a data
# race report in its stderr fails them.
make -s "$jobs" SANITIZE=thread all
TIME_SCALE=${TIME_SCALE:-4} make check-mount SANITIZE=thread 2>&1 | tee "$log" || status=1
threaded=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
# The fuzzers' regressions and a short run of each, the reliability tests
# at CI size, and the smallest benchmark preset (so the harness keeps
# working; CI does not judge timings).
# The six harnesses at once, each for 30 s: on 2 cores, about the 10 s
# of a core each that one after another gave them, in half the time.
make -s "$jobs" fuzz-build
FUZZ_PARALLEL=1 make fuzz-smoke FUZZ_SMOKE_SECONDS=30 2>&1 | tee "$log" || status=1
fuzzed=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
if [ -x tests/stress/run.sh ]; then
	make stress-quick 2>&1 | tee "$log" || status=1
	stressed=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
fi
make bench PRESET=tiny || status=1
count() { sed -E "s/^check: ([0-9]+) passed, ([0-9]+) failed.*/\\$1/" <<<"${2:-check: 0 passed, 1 failed}"; }
passed=$(($(count 1 "$plain") + $(count 1 "$sanitized") + $(count 1 "check: ${threaded:-0 passed, 1 failed}") + $(count 1 "check: ${fuzzed:-0 passed, 1 failed}")))
failed=$(($(count 2 "$plain") + $(count 2 "$sanitized") + $(count 2 "check: ${threaded:-0 passed, 1 failed}") + $(count 2 "check: ${fuzzed:-0 passed, 1 failed}")))
if [ -x tests/stress/run.sh ]; then
	passed=$((passed + $(count 1 "check: ${stressed:-0 passed, 1 failed}")))
	failed=$((failed + $(count 2 "check: ${stressed:-0 passed, 1 failed}")))
fi
echo "plain build: ${plain#check: }; sanitized build: ${sanitized#check: }; mount tests under TSan: ${threaded:-none}; fuzz smoke: ${fuzzed:-none}; stress: ${stressed:-none}"
echo "all: $passed passed, $failed failed"
exit "$status"
