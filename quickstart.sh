#!/usr/bin/env bash
# Sets everything up and mounts: installs the Debian packages, builds, and
# mounts your pi session store ($PI_CODING_AGENT_SESSION_DIR, else
# ~/.pi/agent/sessions), or the bundled demo store if you have none.
#   ./quickstart.sh [MOUNTPOINT]      (default: ~/pi-sessions)
set -euo pipefail
cd "$(dirname "$0")"

mountpoint=${1:-$HOME/pi-sessions}
scripts/deps.sh
make -s all

store=${PI_CODING_AGENT_SESSION_DIR:-$HOME/.pi/agent/sessions}
if [ ! -d "$store" ]; then
	store=$PWD/demo/store
	echo "quickstart: no pi session store at ~/.pi/agent/sessions; mounting the demo store"
fi
mkdir -p "$mountpoint"
if grep -q " $(realpath "$mountpoint") fuse.pisessionfs " /proc/self/mountinfo 2>/dev/null; then
	echo "quickstart: already mounted at $mountpoint (unmount with: fusermount3 -u $mountpoint)"
	exit 0
fi
build/pisessionfs --store "$store" "$mountpoint"
echo "quickstart: $store is mounted at $mountpoint"
echo "  try:     ls $mountpoint;  cat $mountpoint/*/*/name"
echo "  unmount: fusermount3 -u $mountpoint"
