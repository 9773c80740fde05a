# shellcheck shell=bash
# Shared by the reliability tests tests/stress/t_*.sh.  Each test does
#
#     . "$(dirname "$0")/common.sh" "$@"     # $1 = daemon, $2 = --quick (optional)
#     ...checks...
#     finish
#
# It sources tests/mount/lib.sh (mounting, fsx/timeout wrappers, the EXIT
# trap that unmounts, checks the daemon logs and ends with "checks: N",
# soft assertions) and changes only how checks are reported: every check
# prints one line on stdout ("ok N - what" or "not ok N - why"), which the
# runner (tests/run-suite.sh) shows for a failed test.  A test's
# `teardown` (stop its writers) and `after_unmount` (unmount a tmpfs store)
# functions are lib.sh's hooks.
#
# QUICK=1 with --quick (or STRESS_QUICK=1): the CI sizes.

STRESS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT_DIR=$(cd "$STRESS_DIR/../.." && pwd)
# shellcheck disable=SC2034 # QUICK is read by the tests
QUICK=${STRESS_QUICK:-0}
for _a in "${@:2}"; do
	# shellcheck disable=SC2034
	[[ $_a == --quick ]] && QUICK=1
done
unset _a

# shellcheck source=../mount/lib.sh
. "$ROOT_DIR/tests/mount/lib.sh" "$1"

# --- reporting: one line per check -------------------------------------------

pass() {
	CHECKS=$((CHECKS + 1))
	local what=${1:-${CHECK_WHAT:-}}
	if [[ -z $what ]]; then
		what="${FUNCNAME[1]:-check} (${BASH_SOURCE[2]##*/}:${BASH_LINENO[1]})"
	fi
	CHECK_WHAT=
	printf 'ok %d - %s\n' $((CHECKS + FAILS)) "${what//"$T_DIR"/\$T}"
}

# lib.sh's assert_* helpers call pass without a name: wrap them so that the
# line says what was checked (their first argument, or the whole call).
CHECK_WHAT=
for _f in assert_eq assert_ne assert_contains assert_true assert_poll; do
	eval "$(declare -f "$_f" | sed "1s/^$_f /_lib_$_f /")"
	eval "$_f() { CHECK_WHAT=\$1; _lib_$_f \"\$@\"; }"
done
for _f in assert_file_content assert_same_bytes assert_size assert_exists assert_missing assert_errno assert_fails assert_json; do
	eval "$(declare -f "$_f" | sed "1s/^$_f /_lib_$_f /")"
	eval "$_f() { CHECK_WHAT=\"${_f#assert_} \$*\"; _lib_$_f \"\$@\"; }"
done
unset _f

fail() {
	local msg="$*"
	FAILS=$((FAILS + 1))
	printf 'not ok %d - %s\n' $((CHECKS + FAILS)) "${msg//"$T_DIR"/\$T}"
}

# ok WHAT / check WHAT CMD...: a passed check with a name; CMD must succeed
# (run as is: wrap file-system accesses in fsx or timeout yourself).
ok() { pass "$*"; }
check() {
	local what=$1
	shift
	if "$@"; then
		pass "$what"
	else
		fail "$what"
	fi
}

# note TEXT: an informational line (not a check).
note() {
	printf '# %s\n' "${*//"$T_DIR"/\$T}"
}

# py_checks CMD...: runs a checker that prints "ok - what" / "not ok - why"
# lines (and "# notes"); each becomes a check of this test.  A checker that
# exits non-zero without reporting a failure counts as one failed check.
py_checks() {
	local line rc=0 before=$FAILS out=$T_DIR/.py_checks
	"$@" >"$out" 2>"$out.err" || rc=$?
	while IFS= read -r line; do
		case $line in
		"ok - "*) pass "${line#ok - }" ;;
		"not ok - "*) fail "${line#not ok - }" ;;
		"#"*) printf '%s\n' "$line" ;;
		*) [[ -n $line ]] && printf '# %s\n' "$line" ;;
		esac
	done <"$out"
	if ((rc != 0 && FAILS == before)); then
		fail "checker $(basename "${2:-$1}") exited with status $rc: $(head -c 1500 "$out.err")"
	fi
	return 0
}

# --- pi 1.6.0 (tests/setup-pi.sh) ---------------------------------------------

# pi_tool SUBCOMMAND ARGS...: tests/stress/pi_tool.mjs under a time limit.
pi_tool() {
	timeout -s KILL "${PI_TIMEOUT:-120}" "$PI_NODE" "$STRESS_DIR/pi_tool.mjs" "$PI_SESSION_MANAGER" "$@"
}

# assert_pi_loads WHAT FILE...: pi's SessionManager loads copies of the
# files (in $T_DIR/pi) and reads every line after the header as an entry.
assert_pi_loads() {
	local what=$1 bad
	shift
	mkdir -p "$T_DIR/pi"
	if ! pi_tool load "$T_DIR/pi" "$@" >"$T_DIR/pi.out" 2>"$T_DIR/pi.err"; then
		fail "pi_tool load failed: $(head -c 1000 "$T_DIR/pi.err")"
		return
	fi
	bad=$(python3 -c '
import json, sys
bad = []
for l in open(sys.argv[1]):
    r = json.loads(l)
    if not r["ok"] or r["entries"] != r["lines"] - 1:
        bad.append("%s: %s" % (r["file"], r.get("error") or "pi read %s entries of %s lines" % (r.get("entries"), r.get("lines"))))
print("\n".join(bad))' "$T_DIR/pi.out")
	if [[ -z $bad ]]; then
		pass "pi's SessionManager loads $what and reads every line"
	else
		fail "pi's SessionManager: $bad"
	fi
}

# --- helpers ------------------------------------------------------------------

# wait_unmounted MOUNTPOINT SECONDS: waits until MOUNTPOINT is no longer a
# mount (after a killed daemon's auto_unmount); status 1 if it still is.
wait_unmounted() {
	local mp=$1 limit=$2 i
	for ((i = 0; i < limit * 20; i++)); do
		is_mounted "$mp" || return 0
		sleep 0.05
	done
	return 1
}

# kill9 MOUNTPOINT: SIGKILL for the daemon of MOUNTPOINT (started by
# mount_fs); reaped, and marked as killed on purpose for lib.sh.
kill9() {
	local mp=$1 pid=${PID_OF[$1]:-}
	[[ -n $pid ]] || return 0
	EXPECT_DEAD[$mp]=1
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	PID_OF[$mp]=
}

# mount_again [--no-auto-unmount] STORE MOUNTPOINT ARGS...: mount_fs for a
# mountpoint that was used before (forgets that its last daemon was killed).
mount_again() {
	local a=() mp
	if [[ $1 == --no-auto-unmount ]]; then
		a=(--no-auto-unmount)
		shift
	fi
	mp=$2
	unset "EXPECT_DEAD[$mp]"
	mount_fs "${a[@]}" "$@"
}

# now_ms: milliseconds since the epoch.
now_ms() { echo $(($(date +%s%N) / 1000000)); }
