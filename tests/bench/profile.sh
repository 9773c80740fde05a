#!/usr/bin/env bash
# Where the daemon's CPU time goes in one benchmark workload: mounts the
# bench store (generate it first with `make bench`), runs the workload with
# `perf record` attached to the daemon, and prints the hottest symbols
# (self time, then inclusive time).
#
#   tests/bench/profile.sh [--preset P] [--seed S] [--daemon PATH] WORKLOAD
#
# WORKLOAD: ls-project | ls-big | lsl-first | lsl-warm | grep-first |
#           grep-second | context | grep-parallel | search-first |
#           search-warm | du-first
#
# Needs perf (apt-get install linux-perf) and root (or perf_event_paranoid
# <= 1).  The perf data stays in tests/bench/.work/perf-WORKLOAD.data for
# `perf report -i`.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
preset=default
seed=1
daemon="$root/build/pisessionfs"
while [ $# -gt 1 ]; do
	case "$1" in
	--preset) preset="$2"; shift 2 ;;
	--seed) seed="$2"; shift 2 ;;
	--daemon) daemon="$2"; shift 2 ;;
	*) break ;;
	esac
done
workload="${1:?usage: $0 [--preset P] [--seed S] [--daemon PATH] WORKLOAD}"
work="${BENCH_WORK:-$here/.work}"
store="$work/store-$preset-s$seed"
manifest="$store.manifest.json"
[ -f "$manifest" ] || { echo "profile: no store at $store; run make bench PRESET=$preset first" >&2; exit 1; }
command -v perf >/dev/null || { echo "profile: perf is missing (apt-get install linux-perf)" >&2; exit 1; }
mnt="$work/mnt-profile"
data="$work/perf-$workload.data"
mkdir -p "$mnt"
export LC_ALL=C

py() { python3 -c "import json,sys; m=json.load(open('$manifest')); $1"; }
big="$(py 'print(m["big"]["project"] + "/" + m["big"]["session"])')"
pair="$(py 'ps=sorted([p for p in m["projects"] if not p.get("big")], key=lambda p: -p["sessions"]); print(ps[1]["dir"], ps[2]["dir"])')"
many="$(py 'ps=sorted([p for p in m["projects"] if not p.get("big")], key=lambda p: -p["sessions"]); print(ps[0]["dir"])')"
needle="$(py 'print(m["needle"])')"
read -r pa pb <<<"$pair"

dpid=""
ppid_perf=""
cleanup() {
	if [ -n "$ppid_perf" ]; then
		kill -INT "$ppid_perf" 2>/dev/null || true
		wait "$ppid_perf" 2>/dev/null || true
	fi
	if awk -v mp="$mnt" '$5 == mp { f = 1 } END { exit !f }' /proc/self/mountinfo; then
		fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || true
	fi
	if [ -n "$dpid" ]; then
		wait "$dpid" 2>/dev/null || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mount_fs() {
	"$daemon" --store "$store" -f -o auto_unmount "$mnt" 2>"$work/profile-daemon.log" &
	dpid=$!
	for _ in $(seq 1 400); do
		awk -v mp="$mnt" '$5 == mp { f = 1 } END { exit !f }' /proc/self/mountinfo && return 0
		sleep 0.05
	done
	echo "profile: the mount did not come up" >&2
	exit 1
}

# Warm the page cache for what the workload reads.
cat "$store/$big.jsonl" >/dev/null
cat "$store/$pa"/* "$store/$pb"/* >/dev/null

mount_fs
S="$mnt/$big"
lsl() { find "$S" -path "$S/entries" -prune -o -name '[0-9]*.md' -printf '%s %p\n' >/dev/null; }
# bench.py's first query (SEARCH_WORD), over the two projects of the grep scope
search() { ls "$mnt/$pa/search/kubernetes.ts" "$mnt/$pb/search/kubernetes.ts" >/dev/null; }
# Untimed preparation, then the profiled workload.
case "$workload" in
ls-project | ls-big | context | grep-first | grep-parallel | search-first | du-first) ;;
search-warm) search; sleep 1.1 ;;
lsl-first) ls "$S" >/dev/null ;;
lsl-warm) ls "$S" >/dev/null; lsl ;;
grep-second) grep -r "$needle" "$mnt/$pa" "$mnt/$pb" | cat >/dev/null ;;
*) echo "profile: unknown workload $workload" >&2; exit 2 ;;
esac
perf record -F 2000 -g --call-graph dwarf,16384 -p "$dpid" -o "$data" 2>"$work/profile-perf.log" &
ppid_perf=$!
sleep 0.5
t0=$(date +%s%N)
case "$workload" in
ls-project) for _ in 1 2 3 4 5 6 7 8 9 10; do ls "$mnt/$many" >/dev/null; done ;;
ls-big) ls "$S" >/dev/null ;;
lsl-first) lsl ;;
lsl-warm) for _ in 1 2 3 4 5; do lsl; done ;;
context) cat "$S/context.json" >/dev/null ;;
grep-first | grep-second) grep -r "$needle" "$mnt/$pa" "$mnt/$pb" | cat >/dev/null ;;
search-first | search-warm) search ;;
du-first) du -s "$mnt/$pa" "$mnt/$pb" >/dev/null ;;
grep-parallel)
	(grep -r "$needle" "$mnt/$pa" | cat >/dev/null) &
	g1=$!
	(grep -r "$needle" "$mnt/$pb" | cat >/dev/null) &
	g2=$!
	wait "$g1" "$g2" || true
	;;
esac
t1=$(date +%s%N)
kill -INT "$ppid_perf"
wait "$ppid_perf" 2>/dev/null || true
ppid_perf=""
echo "profile: $workload took $(((t1 - t0) / 1000000)) ms; perf data in $data"
echo "--- self time ---"
perf report -i "$data" --no-children --sort symbol --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -30
echo "--- inclusive time ---"
perf report -i "$data" --children --sort symbol --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -45
