#!/usr/bin/env bash
# Installs what pisessionfs needs, from Debian's packages only.  Safe to run
# again: apt-get skips what is installed.
#   tests/deps.sh          what building and mounting need (quickstart.sh)
#   tests/deps.sh --test   that, and what the tests need (run-tests.sh)
set -euo pipefail

packages=(
	build-essential pkg-config
	libfuse3-dev fuse3 libjansson-dev uuid-dev
	# /resume's re: search (src/search.c)
	libpcre2-dev
	# the cache kept across mounts (src/diskmemo.c)
	libsqlite3-dev
	# the README's examples read context.json and usage.json with jq
	jq
)
test_packages=(
	clang
	# libFuzzer and clang's sanitizer runtime, for make fuzz
	libfuzzer-14-dev libclang-rt-14-dev
	# /usr/bin/time for make bench
	time
	# the unit tests' framework; python3 drives the mount tests
	check python3 valgrind
	# findmnt, for the mount tests' view of the mount table
	util-linux
	# what the editor and tool tests drive
	vim nano emacs-nox tmux attr
	# saves by rename in the editor and tool tests (t_write_editors,
	# t_write_tools): rsync, nvim, and gio (libglib2.0-bin)
	rsync neovim libglib2.0-bin
	# trash-list and trash-restore: rm -r of a session comes back whole
	# (t_session_trash)
	trash-cli
	# a real network store for tests/stress/t_sshfs.sh: two sshfs mounts
	# of one directory through a private sshd on 127.0.0.1
	sshfs openssh-server
	# real tools' write patterns (t_write_matrix): sponge, awk -i
	# inplace, patch, zip archives of entries
	moreutils gawk patch zip unzip
	# a test that times out prints the daemon's thread stacks
	# (tests/run-suite.sh)
	gdb
	# a real browser draws usage.svg (t_usage_days: headless, screenshot)
	chromium
)

case ${1:-} in
--test) packages+=("${test_packages[@]}") ;;
"") ;;
*)
	echo "usage: $0 [--test]" >&2
	exit 2
	;;
esac

run() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm installs pi, the reference the tests compare with; a machine whose
# Node.js ships its own npm (NodeSource's nodejs) must not get Debian's,
# which conflicts with it.
if [ "${1:-}" = --test ]; then
	command -v npm >/dev/null 2>&1 || missing+=(npm)
fi
if [ "${#missing[@]}" -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	run apt-get update -qq
	DEBIAN_FRONTEND=noninteractive run apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
