#!/usr/bin/env bash
# Differential test of `pisession search` against pi 1.6.0's /resume search
# (make check-diff-search; make check-diff runs it first).  No mount needed.
#
#   tests/diff/search/run.sh build/pisession [build/pisessionfs]
#
# Given the daemon too, the stores are also mounted (their folder is the
# store, each store a project folder) and every query that can be a path
# component is asked of MOUNT/store<k>/search/QUERY/ as well.
#
# search.mjs writes randomized stores, loads them with pi's own
# SessionManager.listAll, and compares, for random queries drawn from the
# stores' text, pi's filterAndSortSessions(infos, query, "recent") with
# `pisession search`; the infos themselves are compared too.
#
# Environment:
#   SEARCH_DIFF_SEED=S     seed (default 20261201; printed)
#   SEARCH_DIFF_STORES=N   stores (default 8)
#   SEARCH_DIFF_QUERIES=M  queries per store (default 80)
#   SEARCH_DIFF_KEEP=1     keep the work directory
#   PI_REF_DIR=DIR         where pi is installed (tests/setup-pi.sh)
set -euo pipefail

if [ "$#" -lt 1 ] || [ "$#" -gt 2 ]; then
	echo "usage: $0 path/to/pisession [path/to/pisessionfs]" >&2
	exit 2
fi
daemon=
if [ "$#" -eq 2 ]; then
	case "$2" in
	/*) daemon="$2" ;;
	*) daemon="$PWD/$2" ;;
	esac
	[ -x "$daemon" ] || { echo "check-diff-search: FAIL: no $daemon" >&2; exit 1; }
fi
tool_arg="$1"
case "$1" in
/*) tool="$1" ;;
*) tool="$PWD/$1" ;;
esac
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
seed="${SEARCH_DIFF_SEED:-20261201}"
[ -x "$tool" ] || { echo "check-diff-search: FAIL: no $tool (make build/pisession)" >&2; exit 1; }

setup_out="$("$root/tests/setup-pi.sh")" || { echo "check-diff-search: FAIL: could not set up pi" >&2; exit 1; }
eval "$setup_out"
: "${PI_NODE:?}" "${PI_SESSION_MANAGER:?}"

work="$(mktemp -d "${TMPDIR:-/tmp}/pisession-search-diff.XXXXXX")"
status=1
mnt=
daemon_pid=
cleanup() {
	if [ -n "$daemon_pid" ]; then
		fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || true
		wait "$daemon_pid" 2>/dev/null || true
		if grep -Eiq 'error|warning|sanitizer|runtime error' "$work/daemon.log"; then
			echo "check-diff-search: FAIL: the daemon said:" >&2
			head -20 "$work/daemon.log" >&2
			status=1
		fi
	fi
	if [ "$status" -eq 0 ] && [ "${SEARCH_DIFF_KEEP:-0}" != 1 ]; then
		rm -rf "$work"
	else
		echo "check-diff-search: work directory kept: $work"
		echo "check-diff-search: reproduce with: SEARCH_DIFF_SEED=$seed $0 $tool_arg"
	fi
}
trap cleanup EXIT

echo "check-diff-search: seed $seed"
mount_args=()
# The stores lie where pi's default store is for PI_CODING_AGENT_DIR, so
# that SessionManager.listAll() lists them all, as MOUNT/search/ does.
stores=$work/agent/sessions
export PI_CODING_AGENT_DIR=$work/agent
mkdir -p "$stores"
if [ -n "$daemon" ]; then
	mnt=$work/mnt
	mkdir -p "$mnt"
	"$daemon" --store "$stores" -f -o auto_unmount "$mnt" 2>"$work/daemon.log" &
	daemon_pid=$!
	for _ in $(seq 200); do
		awk -v m="$mnt" '$5 == m { found = 1 } END { exit !found }' /proc/self/mountinfo && break
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.05
	done
	awk -v m="$mnt" '$5 == m { found = 1 } END { exit !found }' /proc/self/mountinfo || {
		echo "check-diff-search: FAIL: $mnt did not mount: $(head -c 500 "$work/daemon.log")" >&2
		exit 1
	}
	mount_args=(--mount "$mnt")
fi
if timeout -s KILL 600 "$PI_NODE" "$here/search.mjs" --sm "$PI_SESSION_MANAGER" --pisession "$tool" \
	--work "$stores" --seed "$seed" --stores "${SEARCH_DIFF_STORES:-8}" --queries "${SEARCH_DIFF_QUERIES:-80}" \
	"${mount_args[@]}"; then
	status=0
	echo "check-diff-search: OK"
else
	echo "check-diff-search: FAIL: pisession search differs from pi 1.6.0" >&2
fi
exit "$status"
