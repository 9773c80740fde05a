#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2016,SC2317 # sh -c scripts get their arguments as $1; functions called by name (trap, poll_fn)
# End-to-end test with the real pi 1.6.0 against a mounted store.
#
#   tests/interop/run.sh build/pisessionfs
#
# pi runs in print mode against a scripted fake OpenAI-compatible server
# (fake_openai.py, 127.0.0.1, a free port) that records every request, so
# the test sees exactly what pi sent to the model.  pi writes the real store;
# the daemon mounts it, and the test writes through the mount and lets pi
# resume from what the mount appended:
#
#   0. pi (not mounted yet) runs a prompt that makes the model call bash
#      `echo hi`: a real session with a tool call and its result.
#   a. `echo ... > SESSION/note.md` through the mount appends a user message;
#      `pi -c` must send it to the model, after the earlier history, in order.
#   b. vim edits the first user message through the mount; `pi -c` must
#      continue on the new branch: the edited text, nothing that followed
#      the original.
#   c. pi runs (tool call) while mounted: within 2 s the mount shows its new
#      entries (files, leaf, context.json, entries/<id>.json byte for byte);
#      a new session in a new project (PI_CODING_AGENT_SESSION_DIR) too.
#   d. labels (`ln -s`) and a name (`echo > name`) through the mount; pi -c
#      continues after them; then every session file is opened (a copy) with
#      pi's own SessionManager and compared with the mount: leaf, labels,
#      name, context.json, entry ids, and pi must find nothing to repair.
#
# One line per check ("ok - ..." or "FAIL - ..."), then "N passed, M failed";
# exit status 1 when anything failed (77: skipped, no /dev/fuse).
#
# pi is installed (or found) by tests/setup-pi.sh ($PI_REF_DIR, default
# tests/diff/.work/pi).  Needs python3, vim, fusermount3.  KEEP=1 keeps the
# scratch directory.
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: $0 path/to/pisessionfs" >&2
	exit 2
fi
IOP_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IOP_ROOT=$(cd "$IOP_HERE/../.." && pwd)
IOP_START=$(date +%s%N)

# pi 1.6.0 and a Node.js 22 (installed on the first run).
if ! pi_env=$("$IOP_ROOT/tests/setup-pi.sh"); then
	echo "FAIL - tests/setup-pi.sh could not install pi"
	echo "0 passed, 1 failed"
	exit 1
fi
eval "$pi_env"
PI_CLI=$(dirname "$(dirname "$PI_SESSION_MANAGER")")/bundle/cli.js

# The mount helpers: mount_fs, umount_fs, fsx, check_logs, T_DIR, STORE, MNT.
# shellcheck source=../mount/lib.sh
. "$IOP_ROOT/tests/mount/lib.sh" "$1"

# --- reporting: one line per check, a count at the end -----------------------
# (replaces lib.sh's quiet pass/fail and its cleanup; lib.sh's umount_fs and
# check_logs report through these)

pass() {
	CHECKS=$((CHECKS + 1))
	printf 'ok - %s\n' "${*:-(check)}"
}

fail() {
	local msg="$*"
	FAILS=$((FAILS + 1))
	msg=${msg//"$T_DIR"/\$T}
	printf 'FAIL - %s\n' "${msg//$'\n'/$'\n'  | }"
}

note() {
	printf '# %s\n' "$*"
}

# check WHAT COND: pass or fail on a shell condition already evaluated
# (0 = true), with DETAIL for the failure line.
check() {
	local what=$1 st=$2 detail=${3:-}
	if ((st == 0)); then
		pass "$what"
	else
		fail "$what${detail:+: $detail}"
	fi
}

# check_eq WHAT EXPECTED ACTUAL
check_eq() {
	if [[ $2 == "$3" ]]; then
		pass "$1"
	else
		fail "$1: expected
$2
  --- got
$3"
	fi
}

# fsx CMD...: as lib.sh's (a hard time limit on every mount access), and
# once an access has timed out (the daemon hangs), every later one fails at
# once with status 137 instead of waiting again; the test stops at its next
# section (hang_check).
fsx() {
	local rc=0
	[[ ! -e $T_DIR/hung ]] || return 137
	timeout -s KILL "$TIMEOUT" "$@" || rc=$?
	if ((rc == 137)); then
		printf '%s\n' "$*" >>"$T_DIR/hung"
	fi
	return "$rc"
}

hang_check() {
	if [[ -e $T_DIR/hung ]]; then
		die "a mount access was killed after ${TIMEOUT}s, the daemon hangs: $(head -n 1 "$T_DIR/hung")"
	fi
}

SRV_PID=
cleanup() {
	local rc=$? mp before
	trap - EXIT ERR
	set +e
	if [[ -n $SRV_PID ]]; then
		kill -TERM "$SRV_PID" 2>/dev/null
		for ((i = 0; i < 40; i++)); do
			kill -0 "$SRV_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill -KILL "$SRV_PID" 2>/dev/null
		wait "$SRV_PID" 2>/dev/null
		SRV_PID=
	fi
	for mp in "${MOUNTS[@]}"; do
		if [[ -n ${PID_OF[$mp]:-} ]] || is_mounted "$mp"; then
			before=$FAILS
			umount_fs "$mp"
			((FAILS > before)) || pass "unmount: the daemon ran to the end, unmounted, exited with status 0"
		fi
	done
	if ((${#LOGS[@]} > 0)); then
		before=$FAILS
		check_logs
		((FAILS > before)) || pass "the daemon's stderr has no error or warning line"
	fi
	if ((rc == 77)); then
		rm -rf "$T_DIR"
		exit 77
	fi
	if ((FINISHED == 0)); then
		if ((FAILS == 0)); then
			fail "the test stopped early (status $rc)"
		else
			note "the test stopped early (status $rc)"
		fi
	fi
	if [[ -n ${KEEP:-} ]]; then
		note "KEEP is set: kept $T_DIR"
	else
		rm -rf "$T_DIR"
	fi
	note "runtime $((($(date +%s%N) - IOP_START) / 1000000)) ms"
	printf '%d passed, %d failed\n' "$CHECKS" "$FAILS"
	((FAILS == 0)) || exit 1
	exit 0
}
trap cleanup EXIT

for tool in vim "$PI_NODE"; do
	command -v "$tool" >/dev/null || die "$tool is needed"
done
[[ -f $PI_CLI ]] || die "pi's CLI is not at $PI_CLI"

# --- the fake model server ---------------------------------------------------

SRV_DIR=$T_DIR/server
REQS=$SRV_DIR/requests.jsonl
mkdir -p "$SRV_DIR"
: >"$REQS"
# Bounded twice: the server stops itself after 240 s, timeout kills it at 250.
timeout -s KILL 250 python3 "$IOP_HERE/fake_openai.py" --dir "$SRV_DIR" --timeout 240 \
	2>"$SRV_DIR/stderr" &
SRV_PID=$!
for ((i = 0; i < 200; i++)); do
	[[ -s $SRV_DIR/port ]] && break
	kill -0 "$SRV_PID" 2>/dev/null || die "the fake server exited: $(cat "$SRV_DIR/stderr")"
	sleep 0.05
done
[[ -s $SRV_DIR/port ]] || die "the fake server did not start within 10 s"
PORT=$(cat "$SRV_DIR/port")
note "fake OpenAI-compatible server on 127.0.0.1:$PORT"

# --- pi's private HOME, project, store ------------------------------------------

PI_HOME=$T_DIR/home
PROJ=$T_DIR/project
mkdir -p "$PI_HOME/.pi/agent" "$PROJ"
printf '{"providers":{"fake":{"baseUrl":"http://127.0.0.1:%s/v1","api":"openai-completions","apiKey":"x","models":[{"id":"fake-1"}]}}}\n' \
	"$PORT" >"$PI_HOME/.pi/agent/models.json"
P_MAIN="proj-main"        # --session-dir $STORE/proj-main
P_ENV="proj-env"          # PI_CODING_AGENT_SESSION_DIR=$STORE/proj-env

PI_OUT=
PI_RC=0
# run_pi [VAR=VALUE...] -- PI-ARGS...: pi in print mode in $PROJ, with the
# private HOME, offline, bounded; stdout in $PI_OUT, status in $PI_RC.
run_pi() {
	local envs=()
	while [[ $1 != -- ]]; do
		envs+=("$1")
		shift
	done
	shift
	PI_RC=0
	(
		cd "$PROJ"
		exec env -u PI_CODING_AGENT_DIR -u PI_CODING_AGENT_SESSION_DIR \
			-u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy \
			HOME="$PI_HOME" NO_PROXY=127.0.0.1 PI_OFFLINE=1 PI_SKIP_VERSION_CHECK=1 \
			"${envs[@]}" \
			timeout -s KILL 30 "$PI_NODE" "$PI_CLI" --offline --model fake/fake-1 "$@"
	) </dev/null >"$T_DIR/pi.out" 2>"$T_DIR/pi.err" || PI_RC=$?
	PI_OUT=$(cat "$T_DIR/pi.out")
}

# check_pi WHAT EXPECTED-STDOUT: the last pi run exited 0 and printed it.
check_pi() {
	if ((PI_RC == 0)) && [[ $PI_OUT == "$2" ]]; then
		pass "$1: pi exits 0 and prints $2"
	else
		fail "$1: pi exited $PI_RC, printed $(show "$PI_OUT"), expected $2; stderr: $(head -c 1500 "$T_DIR/pi.err")"
	fi
}

req_count() {
	python3 "$IOP_HERE/requests.py" "$REQS" count
}

# check_request WHAT N EXPECTED: request N as requests.py shows it.
check_request() {
	local got
	got=$(python3 "$IOP_HERE/requests.py" "$REQS" show "$2" 2>&1) || true
	check_eq "$1" "$3" "$got"
}

# entry FILE N: type, id, parentId, role, text of line N (entry.py).
entry() {
	python3 "$IOP_HERE/entry.py" "$1" "$2"
}

lines_of() {
	wc -l <"$1" | tr -d ' '
}

# id_of FILE N, parent_of FILE N
id_of() { entry "$1" "$2" | cut -f2; }
parent_of() { entry "$1" "$2" | cut -f3; }

# new_id FILE N_BEFORE: the id of the line after the first N_BEFORE, the one
# a write through the mount should have appended ("(nothing appended)" if
# there is none, so that every later comparison with it fails).
new_id() {
	if (($(lines_of "$1") > $2)); then
		id_of "$1" "$(($2 + 1))"
	else
		echo "(nothing appended)"
	fi
}

# entry_files DIR: the entry file names in DIR, ids replaced by X.
entry_kinds() {
	fsx ls -1 -- "$1" | sed -n 's/^\([0-9]*-[^.]*\)\.[^.]*\.md$/\1/p' | tr '\n' ' ' | sed 's/ $//'
}

# poll_fn SECONDS FUNC ARGS...: retries a shell function (whose mount
# accesses are under fsx) every 50 ms until it succeeds or SECONDS passed.
# Sets POLL_MS to the time it took.
POLL_MS=0
poll_fn() {
	local limit_ms=$(($1 * 1000)) start now
	shift
	start=$(($(date +%s%N) / 1000000))
	while :; do
		if "$@" >/dev/null 2>&1; then
			POLL_MS=$(($(date +%s%N) / 1000000 - start))
			return 0
		fi
		now=$(($(date +%s%N) / 1000000))
		if ((now - start >= limit_ms)); then
			POLL_MS=$((now - start))
			return 1
		fi
		sleep 0.05
	done
}

# in_sync DIR FILE: the mounted session DIR shows every entry of FILE as an
# entry file somewhere in its tree, its leaf names FILE's last entry, and
# entries/ holds every id.
in_sync() {
	local dir=$1 file=$2 ids found last leaf
	ids=$(python3 "$IOP_HERE/entry.py" "$file" ids | sort)
	found=$(fsx find "$dir" -name '*.md' -printf '%f\n' | sed -n 's/^[0-9]*-[^.]*\.\([^.]*\)\.md$/\1/p' | sort -u)
	[[ -z $(comm -23 <(printf '%s\n' "$ids") <(printf '%s\n' "$found")) ]] || return 1
	found=$(fsx ls -1 -- "$dir/entries" | sed -n 's/^\([^~]*\)\.json$/\1/p' | sort)
	[[ $ids == "$found" ]] || return 1
	last=$(id_of "$file" -1)
	leaf=$(fsx readlink -- "$dir/leaf")
	[[ $leaf == *".$last.md" ]]
}

# ctx_has DIR TEXT...: context.json of DIR contains every TEXT.
ctx_has() {
	local dir=$1 ctx t
	shift
	ctx=$(fsx cat -- "$dir/context.json") || return 1
	for t in "$@"; do
		[[ $ctx == *"$t"* ]] || return 1
	done
}

# user_texts DIR: the user messages' texts in DIR/context.json, one a line.
user_texts() {
	fsx cat -- "$1/context.json" | python3 2>&1 -c '
import json, sys
for m in json.load(sys.stdin)["messages"]:
    if m.get("role") == "user":
        c = m["content"]
        print(c if isinstance(c, str) else "".join(b.get("text", "") for b in c if b.get("type") == "text"))'
}

# write_through TEXT PATH: printf TEXT\n > PATH (through the mount, bounded).
write_through() {
	fsx sh -c 'printf "%s\n" "$1" > "$2"' sh "$1" "$2" 2>&1
}

# =============================================================================
# 0. A real session from pi, before anything is mounted
# =============================================================================

run_pi -- --session-dir "$STORE/$P_MAIN" -p "FIRST-Q please run [[bash:echo hi]]"
check_pi "0: pi -p with a tool call" "ANSWER-2"
shopt -s nullglob
files=("$STORE/$P_MAIN"/*.jsonl)
check "0: pi honours --session-dir: one session file in \$STORE/$P_MAIN" "$((${#files[@]} == 1 ? 0 : 1))" \
	"found ${#files[@]}: $(find "$STORE" "$PI_HOME/.pi/agent" 2>&1 | head -20)"
((${#files[@]} == 1)) || die "no session to work with"
SF=${files[0]}
SNAME=$(basename "$SF" .jsonl)
check_eq "0: the fake server got 2 requests" "2" "$(req_count)"
check_request "0: request 2 carries pi's bash tool call and its result" 2 \
	'system: ...
user: FIRST-Q please run [[bash:echo hi]]
assistant: call bash {"command":"echo hi"}
tool: hi\n'
U1=$(id_of "$SF" 5)
check_eq "0: pi stored the prompt as the 4th entry" \
	"message	$U1	$(id_of "$SF" 4)	user	FIRST-Q please run [[bash:echo hi]]" "$(entry "$SF" 5)"

# =============================================================================
# Mount
# =============================================================================

mount_fs "$STORE" "$MNT"
pass "mount: $MNT shows in /proc/self/mountinfo"
D=$MNT/$P_MAIN/$SNAME
check_eq "mount: pi's session is shown, one file per entry" \
	"0001-model_change 0002-thinking_level_change 0003-system 0004-user 0005-assistant 0006-toolResult-bash 0007-assistant" \
	"$(entry_kinds "$D")"
LAST=$(id_of "$SF" -1)
check_eq "mount: leaf names pi's last entry" "0007-assistant.$LAST.md" "$(fsx readlink -- "$D/leaf")"

hang_check
# =============================================================================
# a. A user message appended through the mount, then pi --continue
# =============================================================================

n_before=$(lines_of "$SF")
out=$(write_through "NOTE-A remember the number 42" "$D/note.md") && st=0 || st=$?
check "a: echo ... > note.md through the mount succeeds" "$st" "status $st: $out"
NOTE=$(new_id "$SF" "$n_before")
check_eq "a: the store got a user message under pi's last entry, final newline dropped" \
	"message	$NOTE	$LAST	user	NOTE-A remember the number 42" "$(entry "$SF" -1)"
poll_fn 2 in_sync "$D" "$SF" && st=0 || st=$?
check "a: the mount shows it as 0008-user.$NOTE.md, the new leaf" "$st" \
	"leaf -> $(fsx readlink -- "$D/leaf" 2>&1); $(entry_kinds "$D")"

run_pi -- --session-dir "$STORE/$P_MAIN" -c -p "SECOND-Q next"
check_pi "a: pi -c" "ANSWER-3"
check_request "a: request 3 holds the mount's message, after the whole history, in order" 3 \
	'system: ...
user: FIRST-Q please run [[bash:echo hi]]
assistant: call bash {"command":"echo hi"}
tool: hi\n
assistant: ANSWER-2
user: NOTE-A remember the number 42
user: SECOND-Q next'
check_eq "a: pi continued the same session file, its prompt a child of the mount's entry" \
	"1 $NOTE" "$(find "$STORE/$P_MAIN" -mindepth 1 | wc -l | tr -d ' ') $(parent_of "$SF" -2)"

hang_check
# =============================================================================
# b. vim edits the first user message through the mount
# =============================================================================

F1=$D/0004-user.$U1.md
orig_ok=1
orig=$(fsx cat -- "$F1") || { orig_ok=0; fail "b: cannot read $F1 through the mount"; }
n_before=$(lines_of "$SF")
out=$(cd "$T_DIR" && HOME=$PI_HOME fsx vim -Nu NONE -i NONE -es -c 'set backupskip=' \
	-c '%s/FIRST-Q/FIRST-EDITED/' -c wq "$F1" 2>&1) && st=0 || st=$?
check "b: vim :%s + :wq of 0004-user.$U1.md through the mount succeeds" "$st" "status $st: $out"
check_eq "b: exactly one line appended to the session file" "$((n_before + 1))" "$(lines_of "$SF")"
E1=$(new_id "$SF" "$n_before")
check_eq "b: it is a sibling of the original (same parent) with the edited text" \
	"message	$E1	$(parent_of "$SF" 5)	user	FIRST-EDITED please run [[bash:echo hi]]" "$(entry "$SF" -1)"
if ((orig_ok)); then
	check_eq "b: the original entry file is unchanged" "$orig" "$(fsx cat -- "$F1")"
fi
poll_fn 2 in_sync "$D" "$SF" && st=0 || st=$?
check "b: the mount shows 0004~$E1/0004-user.$E1.md, the new leaf" "$st" \
	"leaf -> $(fsx readlink -- "$D/leaf" 2>&1)"
check_eq "b: leaf symlink" "0004~$E1/0004-user.$E1.md" "$(fsx readlink -- "$D/leaf")"
check_eq "b: context.json now holds the edited message and nothing after the original" \
	"FIRST-EDITED please run [[bash:echo hi]]" "$(user_texts "$D")"

run_pi -- --session-dir "$STORE/$P_MAIN" -c -p "THIRD-Q after the edit"
check_pi "b: pi -c" "ANSWER-4"
check_request "b: request 4 is the edited branch only: no tool call, no NOTE-A, no SECOND-Q" 4 \
	'system: ...
user: FIRST-EDITED please run [[bash:echo hi]]
user: THIRD-Q after the edit'
check_eq "b: pi's new prompt hangs under the edited entry" "$E1" "$(parent_of "$SF" -2)"
poll_fn 2 in_sync "$D" "$SF" && st=0 || st=$?
check "b: pi's entries show in the branch directory 0004~$E1" "$st" "$(fsx ls -A -- "$D/0004~$E1" 2>&1 | tr '\n' ' ')"
check_eq "b: the branch directory" "0004-user 0005-user 0006-assistant" "$(entry_kinds "$D/0004~$E1")"

hang_check
# =============================================================================
# c. pi runs (with a tool call) while mounted: the mount follows within 2 s
# =============================================================================

# Fill the kernel's caches first: the mount must not show stale views.
fsx cat -- "$D/context.json" >/dev/null 2>&1 || true
fsx ls -lR -- "$D" >/dev/null 2>&1 || true
fsx readlink -- "$D/leaf" >/dev/null 2>&1 || true
n_before=$(lines_of "$SF")
run_pi -- --session-dir "$STORE/$P_MAIN" -c -p "FOURTH-Q [[bash:echo live]]"
check_pi "c: pi -c with a tool call" "ANSWER-6"
check_request "c: request 6 continues the edited branch with the new tool exchange" 6 \
	'system: ...
user: FIRST-EDITED please run [[bash:echo hi]]
user: THIRD-Q after the edit
assistant: ANSWER-4
user: FOURTH-Q [[bash:echo live]]
assistant: call bash {"command":"echo live"}
tool: live\n'
live_ok() {
	in_sync "$D" "$SF" && ctx_has "$D" '"ANSWER-6"' '"live\n"' 'FOURTH-Q'
}
poll_fn 2 live_ok && st=0 || st=$?
check "c: within 2 s the mount shows pi's new entries, leaf and context.json (${POLL_MS} ms)" "$st" \
	"leaf -> $(fsx readlink -- "$D/leaf" 2>&1); branch: $(entry_kinds "$D/0004~$E1")"
check_eq "c: the branch directory grew by pi's four entries" \
	"0004-user 0005-user 0006-assistant 0007-user 0008-assistant 0009-toolResult-bash 0010-assistant" \
	"$(entry_kinds "$D/0004~$E1")"
bad=
for ((n = n_before + 1; n <= $(lines_of "$SF"); n++)); do
	id=$(id_of "$SF" "$n")
	if ! cmp -s <(sed -n "${n}p" "$SF") <(fsx cat -- "$D/entries/$id.json"); then
		bad+=" $id"
	fi
done
check "c: entries/<id>.json of each new entry is its stored line, byte for byte" "$([[ -z $bad ]] && echo 0 || echo 1)" \
	"differ:$bad"

# A new session in a new project directory, through the environment variable.
run_pi PI_CODING_AGENT_SESSION_DIR="$STORE/$P_ENV" -- -p "ENV-Q hello"
check_pi "c: pi -p with PI_CODING_AGENT_SESSION_DIR" "ANSWER-7"
files=("$STORE/$P_ENV"/*.jsonl)
check "c: pi honours PI_CODING_AGENT_SESSION_DIR: one session file in \$STORE/$P_ENV" \
	"$((${#files[@]} == 1 ? 0 : 1))" "found ${#files[@]}"
((${#files[@]} == 1)) || die "no second session"
SF2=${files[0]}
D2=$MNT/$P_ENV/$(basename "$SF2" .jsonl)
env_ok() {
	in_sync "$D2" "$SF2" && ctx_has "$D2" 'ENV-Q hello' '"ANSWER-7"'
}
poll_fn 2 env_ok && st=0 || st=$?
check "c: the new project and session show within 2 s (${POLL_MS} ms)" "$st" \
	"$(fsx ls -A -- "$MNT" "$MNT/$P_ENV" 2>&1 | tr '\n' ' ')"
check_eq "c: the new session's entry files" \
	"0001-model_change 0002-thinking_level_change 0003-system 0004-user 0005-assistant" "$(entry_kinds "$D2")"

hang_check
# =============================================================================
# d. Labels and a name through the mount; pi reads them back
# =============================================================================

n_before=$(lines_of "$SF")
out=$(fsx ln -s -- "../0004-user.$U1.md" "$D/labels/original-q" 2>&1) && st=0 || st=$?
check "d: ln -s ../0004-user.$U1.md labels/original-q succeeds" "$st" "status $st: $out"
L1=$(new_id "$SF" "$n_before")
check_eq "d: a label entry on the original prompt, under the leaf" \
	"label	$L1	$(id_of "$SF" -2)	-	$U1=original-q" "$(entry "$SF" -1)"
out=$(fsx ln -s -- "../0004~$E1/0004-user.$E1.md" "$D/labels/edited-q" 2>&1) && st=0 || st=$?
check "d: ln -s ../0004~$E1/0004-user.$E1.md labels/edited-q succeeds" "$st" "status $st: $out"
check_eq "d: a label entry on the edited prompt" \
	"label	$(id_of "$SF" -1)	$L1	-	$E1=edited-q" "$(entry "$SF" -1)"
n_before=$(lines_of "$SF")
out=$(write_through "Interop session" "$D/name") && st=0 || st=$?
check "d: echo 'Interop session' > name succeeds" "$st" "status $st: $out"
NAME_ID=$(new_id "$SF" "$n_before")
check_eq "d: a session_info entry" "session_info	$NAME_ID	$(id_of "$SF" -2)	-	Interop session" "$(entry "$SF" -1)"
out=$(write_through "Env session" "$D2/name") && st=0 || st=$?
check "d: echo 'Env session' > name in the second session succeeds" "$st" "status $st: $out"

check_eq "d: name reads back" "Interop session" "$(fsx cat -- "$D/name")"
check_eq "d: labels/ lists both" "edited-q original-q" "$(fsx ls -1 -- "$D/labels" | tr '\n' ' ' | sed 's/ $//')"
check_eq "d: labels/original-q points at the original prompt" "../0004-user.$U1.md" \
	"$(fsx readlink -- "$D/labels/original-q")"
check_eq "d: labels/edited-q points at the edited prompt, through its branch's new name" \
	"../0004~edited-q/0004-user.$E1.md" "$(fsx readlink -- "$D/labels/edited-q")"
listing=$(fsx ls -1 -- "$D" 2>&1) || true
check "d: the labelled branch is listed as 0004~edited-q, not by id" \
	"$([[ $listing == *$'\n0004~edited-q\n'* && $listing != *"0004~$E1"* ]] && echo 0 || echo 1)" \
	"$(tr '\n' ' ' <<<"$listing")"
check_eq "d: 0004~$E1 still resolves" "0004-user.$E1.md" "$(fsx ls -1 -- "$D/0004~$E1" | head -1)"

run_pi -- --session-dir "$STORE/$P_MAIN" -c -p "FIFTH-Q after labels"
check_pi "d: pi -c after the label and name entries" "ANSWER-8"
check_request "d: request 8: the branch's history, labels and name are not messages" 8 \
	'system: ...
user: FIRST-EDITED please run [[bash:echo hi]]
user: THIRD-Q after the edit
assistant: ANSWER-4
user: FOURTH-Q [[bash:echo live]]
assistant: call bash {"command":"echo live"}
tool: live\n
assistant: ANSWER-6
user: FIFTH-Q after labels'
check_eq "d: pi's prompt hangs under the mount's session_info entry" "$NAME_ID" "$(parent_of "$SF" -2)"
poll_fn 2 in_sync "$D" "$SF" && st=0 || st=$?
check "d: the mount follows pi again" "$st"

hang_check
# Every session file, opened (a copy) with pi's SessionManager, against the mount.
mkdir -p "$T_DIR/copies"
for sf in "$SF" "$SF2"; do
	proj=$(basename "$(dirname "$sf")")
	sname=$(basename "$sf" .jsonl)
	copy=$T_DIR/copies/$sname.jsonl
	cp -- "$sf" "$copy"
	"$PI_NODE" "$IOP_HERE/pi_open.mjs" "$PI_SESSION_MANAGER" "$copy" >"$copy.pi.json" 2>"$copy.pi.err" ||
		fail "d: $proj: pi_open.mjs failed: $(head -c 1500 "$copy.pi.err")"
	expect=(--leaf "$(id_of "$sf" -1)")
	if [[ $sf == "$SF" ]]; then
		expect+=(--name "Interop session" --label "$U1=original-q" --label "$E1=edited-q")
	else
		expect+=(--name "Env session")
	fi
	st=0
	fsx python3 "$IOP_HERE/compare.py" "$MNT/$proj/$sname" "$copy.pi.json" "${expect[@]}" \
		>"$copy.cmp" 2>&1 || st=$?
	failed=0
	while IFS= read -r line; do
		case $line in
		"PASS "*) pass "d: $proj: ${line#PASS }" ;;
		"FAIL "*) fail "d: $proj: ${line#FAIL }"; failed=1 ;;
		*) [[ -z $line ]] || note "$line" ;;
		esac
	done <"$copy.cmp"
	if ((st != 0 && !failed)); then
		fail "d: $proj: compare.py stopped with status $st: $(tail -c 1500 "$copy.cmp")"
	fi
done

hang_check
rejected=$(fsx ls -A -- "$MNT/.pisessionfs/rejected" 2>&1) || true
check_eq "no write was refused (.pisessionfs/rejected is empty)" "" "$rejected"
check_eq "the fake server got exactly the 8 expected requests (no other calls)" \
	"8" "$(req_count)"

finish
