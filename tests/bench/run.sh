#!/usr/bin/env bash
# make bench [PRESET=tiny|default|large]: runs tests/bench/bench.py (see
# tests/bench/README.md).  Arguments are passed on, e.g.
#   tests/bench/run.sh --preset tiny --runs 3 --cases mount,ls_project
# The harness unmounts everything it mounted itself; this trap is the last
# line of defence for a harness that was killed: whatever is still mounted
# under the work directory is unmounted on exit.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="${BENCH_WORK:-$here/.work}"
export BENCH_WORK="$work"
mkdir -p "$work"

cleanup() {
	local mp
	# Mount points under $work, from mountinfo (field 5, octal escapes for
	# space, tab, newline and backslash).
	while read -r mp; do
		mp="$(printf '%b' "$mp")"
		case "$mp" in
		"$work"/*)
			fusermount3 -u "$mp" 2>/dev/null || fusermount3 -uz "$mp" 2>/dev/null || true
			;;
		esac
	done < <(awk '{ print $5 }' /proc/self/mountinfo)
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

command -v python3 >/dev/null || { echo "bench: python3 is needed" >&2; exit 1; }
command -v fusermount3 >/dev/null || { echo "bench: fusermount3 is needed (apt-get install fuse3)" >&2; exit 1; }
python3 "$here/bench.py" "$@"
