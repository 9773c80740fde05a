#!/usr/bin/env bash
# Differential test of `pisession fork-from` against pi 1.6.0's
# SessionManager.forkFrom, no mount needed: make check-diff-forkfrom
# (make check runs it).
#
#   tests/diff/forkfrom/run.sh build/pisession
#
# forkfrom.mjs forks every session file of tests/data (and of
# /work/shared/fixtures when it is there) and sessions of its own into
# several target cwds, with pisession and with pi, and compares the two
# files line by line (see forkfrom.mjs's opening comment).
#
# Environment:
#   FORKFROM_DIFF_KEEP=1      keep the work directory
#   FORKFROM_DIFF_FIXTURES=   more files or directories of sessions (blank-separated)
#   PI_REF_DIR=DIR            where pi is installed (tests/setup-pi.sh)
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
[ -x "$tool" ] || { echo "check-diff-forkfrom: FAIL: no $tool (make build/pisession)" >&2; exit 1; }

setup_out="$("$root/tests/setup-pi.sh")" || { echo "check-diff-forkfrom: FAIL: could not set up pi" >&2; exit 1; }
eval "$setup_out"
: "${PI_NODE:?}" "${PI_SESSION_MANAGER:?}"

inputs=("$root/tests/data")
[ -d /work/shared/fixtures ] && inputs+=(/work/shared/fixtures)
# shellcheck disable=SC2206
[ -n "${FORKFROM_DIFF_FIXTURES:-}" ] && inputs+=(${FORKFROM_DIFF_FIXTURES})

work="$(mktemp -d "${TMPDIR:-/tmp}/pisession-forkfrom-diff.XXXXXX")"
status=1
cleanup() {
	if [ "$status" -eq 0 ] && [ "${FORKFROM_DIFF_KEEP:-0}" != 1 ]; then
		rm -rf "$work"
	else
		echo "check-diff-forkfrom: work directory kept: $work"
	fi
}
trap cleanup EXIT

# pi's default agent directory is kept out of the way: nothing here may
# touch the user's own store.
export PI_CODING_AGENT_DIR="$work/agent"
if timeout -s KILL 600 "$PI_NODE" "$here/forkfrom.mjs" --sm "$PI_SESSION_MANAGER" --pisession "$tool" \
	--work "$work" "${inputs[@]}"; then
	status=0
	echo "check-diff-forkfrom: OK"
else
	echo "check-diff-forkfrom: FAIL: pisession fork-from differs from pi 1.6.0" >&2
fi
exit "$status"
