#!/usr/bin/env bash
# Differential test against pi 1.6.0 itself (make check-diff).
#
#   tests/diff/run.sh build/pisessionfs
#
# 1. tests/setup-pi.sh installs pi 1.6.0 and a Node.js 22 (cached).
# 2. gen.mjs writes a randomized store with pi's own SessionManager (seed:
#    $DIFF_SEED, or a fixed default; printed), plus a few hand-written edge
#    sessions and the fixtures of tests/data/fixtures, and records what pi
#    reads back from every file (contexts, labels, name, tree).
# 3. The daemon mounts the store; check.py walks the mount and compares it
#    with pi (see check.py's docstring for the list of checks).
# 4. Phase 2, still mounted: gen.mjs --append lets pi change the store (appends
#    to reopened sessions, an in-place migration of a version-1 file, new
#    sessions and project, removals); after 1.5 s the changed and new
#    sessions and the listings are checked again.
# 5. The daemon's stderr must hold no error/warning/sanitizer lines, and it
#    must still run at the end and exit cleanly when unmounted.
#
# Fixtures: pi-1.6.0-v3-branched.jsonl is compared exactly like generated
# sessions (pi's context for the tip of every tree directory and for the
# leaf). The two version-1 fixtures have no ids: pi's migration makes random
# ones, the mount derives its own, so they are compared by structure: each
# mounted entries/<id>.json holds its stored line, which maps pi's id of that
# line to the mount's id; pi's expectations are translated with that map
# (tree, leaf, labels, and ids inside context messages) and then compared in
# full, context.json included, like any other session.
#
# Environment:
#   DIFF_SEED=S       generator seed (default 20261129)
#   DIFF_QUICK=1      fewer, smaller sessions (no 10000-deep session)
#   DIFF_SESSIONS=N   number of generated sessions (default 40, quick 12)
#   DIFF_KEEP=1       keep the work directory even when the test passes
#   DIFF_TIMEOUT=S    hard limit for each checker run (default 300 s)
#   DIFF_CHECK_ARGS=  extra arguments for check.py (e.g. "-v", "--jobs 1")
#   DIFF_WITHOUT=     gen.mjs --without (lone-surrogates,nul), to tell failures apart
#   DIFF_DAEMON_OPTS= extra daemon options (e.g. "-o cache_sessions=2")
#   PI_REF_DIR=DIR    where pi is installed (default tests/diff/.work/pi)
set -euo pipefail

if [ "$#" -ne 1 ]; then
	echo "usage: $0 path/to/pisessionfs" >&2
	exit 2
fi
daemon_arg="$1"
case "$1" in
/*) daemon="$1" ;;
*) daemon="$PWD/$1" ;;
esac
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seed="${DIFF_SEED:-20261129}"
timeout_s="${DIFF_TIMEOUT:-300}"

say() { printf 'check-diff: %s\n' "$*"; }
die() {
	say "FAIL: $*" >&2
	exit 1
}

[ -x "$daemon" ] || die "no daemon at $daemon (make build/pisessionfs)"
command -v python3 >/dev/null 2>&1 || die "python3 is needed"
command -v fusermount3 >/dev/null 2>&1 || die "fusermount3 is needed (apt-get install fuse3)"
[ -e /dev/fuse ] || die "/dev/fuse is missing: FUSE mounts are not possible here"

t_start=$(date +%s)
setup_out="$("$root/tests/setup-pi.sh")" || die "could not set up pi (tests/setup-pi.sh)"
eval "$setup_out"
: "${PI_NODE:?}" "${PI_SESSION_MANAGER:?}"

work="$(mktemp -d "${TMPDIR:-/tmp}/pisessionfs-diff.XXXXXX")"
store="$work/store"
mnt="$work/mnt"
log="$work/daemon.stderr"
expect="$work/expectations.json"
mkdir -p "$store" "$mnt"
daemon_pid=""
checker_pid=""
status=1

# Mount points in /proc/self/mountinfo escape space, tab, newline and backslash as octal.
mountinfo_path() {
	printf '%s' "$1" | sed -e 's/\\/\\134/g' -e 's/ /\\040/g' -e 's/\t/\\011/g'
}
is_mounted() {
	local want
	want="$(mountinfo_path "$mnt")"
	awk -v p="$want" '$5 == p { found = 1 } END { exit !found }' /proc/self/mountinfo
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "$checker_pid" ] && kill -0 "$checker_pid" 2>/dev/null; then
		kill -KILL "$checker_pid" 2>/dev/null || true
	fi
	if is_mounted; then
		fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || true
	fi
	if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
		kill -TERM "$daemon_pid" 2>/dev/null || true
		for _ in $(seq 1 50); do
			kill -0 "$daemon_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$daemon_pid" 2>/dev/null || true
	fi
	if [ "$status" -eq 0 ] && [ "${DIFF_KEEP:-0}" != "1" ]; then
		rm -rf "$work"
	else
		say "work directory kept: $work (store, expectations.json, daemon.stderr)"
		say "reproduce with: DIFF_SEED=$seed${DIFF_QUICK:+ DIFF_QUICK=$DIFF_QUICK} $0 $daemon_arg"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- generate the store with pi
say "seed $seed"
gen_args=(--sm "$PI_SESSION_MANAGER" --store "$store" --out "$expect" --seed "$seed" --fixtures "$root/tests/data/fixtures")
if [ "${DIFF_QUICK:-0}" = "1" ]; then gen_args+=(--quick); fi
if [ -n "${DIFF_SESSIONS:-}" ]; then gen_args+=(--sessions "$DIFF_SESSIONS"); fi
if [ -n "${DIFF_WITHOUT:-}" ]; then gen_args+=(--without "$DIFF_WITHOUT"); fi
timeout -s KILL 300 "$PI_NODE" "$here/gen.mjs" "${gen_args[@]}" || die "gen.mjs failed"
t_gen=$(date +%s)

# ---- mount
daemon_opts=()
if [ -n "${DIFF_DAEMON_OPTS:-}" ]; then read -r -a daemon_opts <<<"$DIFF_DAEMON_OPTS"; fi
"$daemon" --store "$store" -f ${daemon_opts[@]+"${daemon_opts[@]}"} "$mnt" 2>"$log" &
daemon_pid=$!
ready=0
for _ in $(seq 1 100); do
	if is_mounted; then
		ready=1
		break
	fi
	kill -0 "$daemon_pid" 2>/dev/null || break
	sleep 0.1
done
if [ "$ready" -ne 1 ]; then
	say "daemon stderr:" >&2
	sed -e 's/^/  | /' "$log" | head -n 40 >&2
	die "the mount at $mnt did not become ready within 10 s"
fi
say "mounted $store on $mnt (daemon pid $daemon_pid)"

# ---- compare with pi
extra_args=()
if [ -n "${DIFF_CHECK_ARGS:-}" ]; then read -r -a extra_args <<<"$DIFF_CHECK_ARGS"; fi
check_rc=0
run_check() {
	local rc=0
	timeout -s KILL "$timeout_s" python3 "$here/check.py" --mount "$mnt" --store "$store" "$@" ${extra_args[@]+"${extra_args[@]}"} &
	checker_pid=$!
	wait "$checker_pid" || rc=$?
	checker_pid=""
	if [ "$rc" -eq 137 ]; then
		say "the checker was killed after ${timeout_s}s (a hung mount?)" >&2
	fi
	if [ "$rc" -ne 0 ]; then check_rc=$rc; fi
}
say "phase 1: the store as generated"
run_check --expect "$expect"
t_check=$(date +%s)

# ---- live updates: pi appends to the mounted store, rewrites a version-1 file
# (migration), adds sessions and a project, a session and a project go away.
say "phase 2: pi changes the store under the mount"
timeout -s KILL 300 "$PI_NODE" "$here/gen.mjs" --sm "$PI_SESSION_MANAGER" --store "$store" \
	--out "$work/expectations-2.json" --seed "$seed" --append "$expect" ${DIFF_WITHOUT:+--without "$DIFF_WITHOUT"} || die "gen.mjs --append failed"
sleep 1.5 # docs/layout.md: changes show within a second
run_check --expect "$work/expectations-2.json" --changed-only
t_check2=$(date +%s)

# ---- unmount and look at what the daemon said
daemon_alive=1
kill -0 "$daemon_pid" 2>/dev/null || daemon_alive=0
fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || true
daemon_rc=0
if [ "$daemon_alive" -eq 1 ]; then
	for _ in $(seq 1 100); do
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$daemon_pid" 2>/dev/null; then
		say "the daemon did not exit within 10 s of the unmount" >&2
		daemon_rc=1
	fi
fi
if ! kill -0 "$daemon_pid" 2>/dev/null; then
	wait "$daemon_pid" 2>/dev/null || daemon_rc=$?
	daemon_pid=""
fi

failed=0
if [ "$daemon_alive" -eq 0 ]; then
	say "the daemon exited during the check (status $daemon_rc)" >&2
	failed=1
elif [ "$daemon_rc" -ne 0 ]; then
	say "the daemon exited with status $daemon_rc after the unmount" >&2
	failed=1
fi
if grep -Eiq 'error|warning|AddressSanitizer|LeakSanitizer|runtime error' "$log"; then
	say "the daemon's stderr has error/warning lines:" >&2
	grep -Ei 'error|warning|AddressSanitizer|LeakSanitizer|runtime error' "$log" | head -n 20 | sed -e 's/^/  | /' >&2
	failed=1
fi
[ "$check_rc" -eq 0 ] || failed=1

say "times: setup+gen $((t_gen - t_start))s, check $((t_check - t_gen))s, append+check $((t_check2 - t_check))s"
if [ "$failed" -ne 0 ]; then
	die "differential test against pi 1.6.0 failed"
fi
status=0
say "OK"
