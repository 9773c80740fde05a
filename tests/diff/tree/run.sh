#!/usr/bin/env bash
# tree.txt against pi 1.6.0's /tree, no mount needed: make check-diff-tree.
#
#   tests/diff/tree/run.sh build/pisession
#
# tree.mjs renders every session of tests/golden/treetxt, tests/data (and
# /work/shared/fixtures when it is there) with pi's TreeSelectorComponent
# and compares it line by line with `pisession cat FILE tree.txt` (see
# tree.mjs's opening comment).
#
# Environment:
#   PI_REF_DIR=DIR   where pi is installed (tests/setup-pi.sh)
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
[ -x "$tool" ] || { echo "check-diff-tree: FAIL: no $tool (make build/pisession)" >&2; exit 1; }

setup_out="$("$root/tests/setup-pi.sh")" || { echo "check-diff-tree: FAIL: could not set up pi" >&2; exit 1; }
eval "$setup_out"
: "${PI_NODE:?}" "${PI_SESSION_MANAGER:?}"

inputs=("$root/tests/golden/treetxt" "$root/tests/data")
[ -d /work/shared/fixtures ] && inputs+=(/work/shared/fixtures)

work="$(mktemp -d "${TMPDIR:-/tmp}/pisession-tree-diff.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# pi's default agent directory is kept out of the way.
export PI_CODING_AGENT_DIR="$work/agent"
if timeout -s KILL 600 "$PI_NODE" "$here/tree.mjs" --sm "$PI_SESSION_MANAGER" --pisession "$tool" \
	--work "$work" "${inputs[@]}"; then
	echo "check-diff-tree: OK"
else
	echo "check-diff-tree: FAIL: tree.txt differs from pi 1.6.0's /tree" >&2
	exit 1
fi
