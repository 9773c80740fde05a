#!/usr/bin/env bash
# Sets everything up and mounts: installs the Debian packages that building
# and mounting need, builds, and mounts the session store pi uses (found as
# pi finds it: see `build/pisessionfs --print-store` and the man page), or,
# if you have none, a scratch copy of the bundled demo store in
# ${XDG_CACHE_HOME:-~/.cache}/pisessionfs/demo-store (never the checkout).
#   ./quickstart.sh [MOUNTPOINT]      (default: ~/pi-sessions)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# Relative paths (the mountpoint, a relative $PI_CODING_AGENT_SESSION_DIR)
# count from where you run this, so this script never changes directory.
mountpoint=${1:-$HOME/pi-sessions}
"$here/tests/deps.sh"
make -s -C "$here" all
daemon=$here/build/pisessionfs

mkdir -p "$mountpoint" 2>/dev/null || true # a stale mount: the daemon says what to do
# What is mounted there: /proc/self/mountinfo has the mountpoint in field 5
# (space, tab, newline and backslash written \ooo), then the mount options
# and optional fields up to a "-", then the type and the source.
real=$(realpath -- "$mountpoint" 2>/dev/null || printf '%s' "$mountpoint")
escaped=${real//\\/\\134}
escaped=${escaped// /\\040}
escaped=${escaped//$'\t'/\\011}
escaped=${escaped//$'\n'/\\012}
mounted=$(MP=$escaped awk '$5 == ENVIRON["MP"] {
		for (i = 7; i < NF; i++) if ($i == "-") { type = $(i + 1); source = $(i + 2); break }
	} END { if (type) print type " " source }' /proc/self/mountinfo)
# A pisessionfs mount whose daemon is gone (every call: "Transport
# endpoint is not connected") is no mount to keep: the daemon clears it
# (a lazy unmount) and says so.  Right after the daemon died the kernel
# may still hold the root's attributes, so a stat succeeds; a listing
# asks the daemon (as the daemon's own check does: opendir).  A live
# daemon that does not answer within 10 s is taken as live.
stale=
if [ -n "$mounted" ] && [ "${mounted%% *}" = fuse.pisessionfs ]; then
	case $(LC_ALL=C timeout -s KILL 10 ls -A -- "$mountpoint" 2>&1 >/dev/null) in
	*"Transport endpoint is not connected"* | *"Software caused connection abort"*) stale=1 ;;
	esac
fi
if [ -n "$mounted" ] && [ -z "$stale" ]; then
	type=${mounted%% *}
	source=$(printf '%b' "${mounted#* }")
	if [ "$type" = fuse.pisessionfs ]; then
		echo "quickstart: $mountpoint is already mounted by pisessionfs, from $source"
		echo "  unmount: fusermount3 -u $mountpoint"
		exit 0
	fi
	echo "quickstart: $mountpoint is already a mount point ($type, from $source); give another: ./quickstart.sh DIR" >&2
	exit 1
fi
store=$("$daemon" --print-store)
if [ ! -d "$store" ]; then
	demo=${XDG_CACHE_HOME:-$HOME/.cache}/pisessionfs/demo-store
	if [ ! -d "$demo" ]; then
		mkdir -p "$(dirname "$demo")"
		rm -rf "$demo.new"
		cp -R "$here/docs/examples/store" "$demo.new"
		mv "$demo.new" "$demo"
	fi
	echo "quickstart: no pi session store at $store; mounting a copy of the demo store, $demo"
	echo "            (what you write goes there; remove it to start afresh)"
	store=$demo
fi

"$daemon" --store "$store" "$mountpoint"
echo "quickstart: $store is mounted at $mountpoint"
echo "  try:     ls $mountpoint;  ls $mountpoint/recent"
echo "  unmount: fusermount3 -u $mountpoint"
