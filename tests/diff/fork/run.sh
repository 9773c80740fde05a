#!/usr/bin/env bash
# Differential test of `pisession fork` against pi 1.6.0's /fork
# (SessionManager.createBranchedSession), no mount needed: make
# check-diff-fork (make check runs it).
#
#   tests/diff/fork/run.sh build/pisession
#
# fork.mjs forks every session file of tests/data (and of
# /work/shared/fixtures when it is there) and sessions of its own at many
# entries, with pisession and with pi, and compares the two files line by
# line (see fork.mjs's opening comment).
#
# Environment:
#   FORK_DIFF_SEED=S      seed of the random entries picked (default 20261201)
#   FORK_DIFF_PER_FILE=N  files with more entries are forked at N of them (default 40)
#   FORK_DIFF_KEEP=1      keep the work directory
#   FORK_DIFF_FIXTURES=   more files or directories of sessions (blank-separated)
#   PI_REF_DIR=DIR        where pi is installed (tests/setup-pi.sh)
set -euo pipefail

if [ "$#" -ne 1 ]; then
	echo "usage: $0 path/to/pisession" >&2
	exit 2
fi
case "$1" in
/*) tool="$1" ;;
*) tool="$PWD/$1" ;;
esac
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
[ -x "$tool" ] || { echo "check-diff-fork: FAIL: no $tool (make build/pisession)" >&2; exit 1; }

setup_out="$("$root/tests/setup-pi.sh")" || { echo "check-diff-fork: FAIL: could not set up pi" >&2; exit 1; }
eval "$setup_out"
: "${PI_NODE:?}" "${PI_SESSION_MANAGER:?}"

inputs=("$root/tests/data")
[ -d /work/shared/fixtures ] && inputs+=(/work/shared/fixtures)
# shellcheck disable=SC2206
[ -n "${FORK_DIFF_FIXTURES:-}" ] && inputs+=(${FORK_DIFF_FIXTURES})

work="$(mktemp -d "${TMPDIR:-/tmp}/pisession-fork-diff.XXXXXX")"
status=1
cleanup() {
	if [ "$status" -eq 0 ] && [ "${FORK_DIFF_KEEP:-0}" != 1 ]; then
		rm -rf "$work"
	else
		echo "check-diff-fork: work directory kept: $work"
	fi
}
trap cleanup EXIT

# pi's default agent directory is kept out of the way: nothing here may
# touch the user's own store.
export PI_CODING_AGENT_DIR="$work/agent"
if timeout -s KILL 600 "$PI_NODE" "$here/fork.mjs" --sm "$PI_SESSION_MANAGER" --pisession "$tool" \
	--work "$work" --seed "${FORK_DIFF_SEED:-20261201}" --per-file "${FORK_DIFF_PER_FILE:-40}" "${inputs[@]}"; then
	status=0
	echo "check-diff-fork: OK"
else
	echo "check-diff-fork: FAIL: pisession fork differs from pi 1.6.0" >&2
fi
exit "$status"
