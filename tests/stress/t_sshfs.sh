#!/usr/bin/env bash
# A store shared by two machines over a real network file system: sshfs
# against a private sshd on 127.0.0.1 (docs/shared-stores.md).  The store
# directory ($STORE, the "server") is mounted twice with sshfs (machines A
# and B), each mount has its own pisessionfs daemon, and for each set of
# sshfs options (SSHFS_VARIANTS: sshfs's defaults, then -o cache=no):
#
# * for SSHFS_SECONDS (quick 6 s, full 30 s) .md files go into one session
#   through both daemons (every 5th one 24 KiB: a line that spans pages,
#   still one SFTP write), raw lines into its session.jsonl through B, and
#   pi's own SessionManager appends to the file on the server; every write
#   must succeed, and verify.py checks that every acknowledged entry is
#   there exactly once, every line is whole JSON, every parentId names an
#   earlier line and no line is a stranger's; pi loads the file.  Where the
#   entries hang (unintended branches: a daemon that appended under a tip
#   that had moved on) is counted and printed, not checked: two machines
#   without a shared lock can always race (docs/shared-stores.md);
# * then, one at a time: an entry appended on the server (under the main
#   line's tip), one through B, one through A right after A read the
#   session (its caches warm): each must hang under the one before it (the daemon re-reads the real end of
#   the file through sshfs's caches before it appends);
# * an entry larger than 32 KiB (sshfs sends at most 32 KiB per SFTP
#   write; larger writes reach the server in pieces another machine's
#   append can come between) is refused with EFBIG, the file is
#   byte-identical and the text kept in .pisessionfs/rejected/.
#
#   t_sshfs.sh DAEMON [--quick]
# shellcheck disable=SC2317 # functions run by traps
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh" "$@"

SECS=${SSHFS_SECONDS:-$((QUICK ? 6 : 30))}
PACE=${SSHFS_PACE:-$((QUICK ? 10 : 15))} # ms between one writer's writes
BIG_KB=${SSHFS_BIG_KB:-24}                 # the concurrent writers' big entries
SEQ_ROUNDS=${SSHFS_SEQ_ROUNDS:-$((QUICK ? 3 : 10))}
read -r -a VARIANTS <<<"${SSHFS_VARIANTS:-default cache=no}"
SSHD=${SSHD:-/usr/sbin/sshd}

for tool in sshfs ssh ssh-keygen "$SSHD"; do
	command -v "$tool" >/dev/null || die "$tool is missing (tests/deps.sh --test installs sshfs and openssh-server)"
done
need_pi

# --- a private sshd on 127.0.0.1 ----------------------------------------------

K=$T_DIR/ssh
mkdir -p "$K"
ssh-keygen -q -t ed25519 -N '' -f "$K/hostkey"
ssh-keygen -q -t ed25519 -N '' -f "$K/id"
cp "$K/id.pub" "$K/authorized_keys"
SSH_USER=$(id -un)
# sshd run by root wants its privilege separation directory.
if [[ ! -d /run/sshd && $(id -u) == 0 ]]; then
	mkdir -p /run/sshd
fi
SSHD_PID=
declare -a PIDS=()
teardown() {
	local p
	for p in "${PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
}
# After every mount is gone (lib.sh unmounts the daemons, then sshfs).
after_unmount() {
	if [[ -n $SSHD_PID ]]; then
		kill -TERM "$SSHD_PID" 2>/dev/null || true
		wait "$SSHD_PID" 2>/dev/null || true
		SSHD_PID=
	fi
}
port_free() {
	python3 -c 'import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)' "$1"
}
# 2222, or the next free port: another run (or another engineer's) may hold it.
PORT=
for p in $(seq 2222 2262); do
	port_free "$p" || continue
	cat >"$K/sshd_config" <<-EOF
		Port $p
		ListenAddress 127.0.0.1
		HostKey $K/hostkey
		AuthorizedKeysFile $K/authorized_keys
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		PermitRootLogin prohibit-password
		StrictModes no
		UsePAM no
		Subsystem sftp internal-sftp
		PidFile none
	EOF
	: >"$K/sshd.log"
	"$SSHD" -D -f "$K/sshd_config" -E "$K/sshd.log" &
	SSHD_PID=$!
	if poll_until 10 grep -q "Server listening" "$K/sshd.log"; then
		PORT=$p
		break
	fi
	kill -TERM "$SSHD_PID" 2>/dev/null || true
	wait "$SSHD_PID" 2>/dev/null || true
	SSHD_PID=
done
[[ -n $PORT ]] || die "no sshd could listen on 127.0.0.1:2222-2262: $(tail -3 "$K/sshd.log")"
note "sshd on 127.0.0.1:$PORT"

# mount_net MOUNTPOINT SSHFS-OPTIONS...: sshfs of $STORE (a "machine").
mount_net() {
	local mp=$1
	shift
	mkdir -p "$mp"
	mount_with "$mp" sshfs -f -p "$PORT" -o IdentityFile="$K/id" -o StrictHostKeyChecking=no \
		-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o BatchMode=yes "$@" \
		"$SSH_USER@127.0.0.1:$STORE" "$mp"
}

PROJ=--net--
mkdir -p "$STORE/$PROJ"
LOGS_DIR=$T_DIR/logs
mkdir -p "$LOGS_DIR"
LIMIT=$((SECS + 60))

# msg_line ID PARENT TEXT: one user message line, as pi writes it.
msg_line() {
	printf '{"type":"message","id":"%s","parentId":"%s","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":"%s","timestamp":1767225605000}}\n' "$1" "$2" "$3"
}

# write_md FILE TEXT: a new .md file through a mount (under fsx).
write_md() {
	fsx python3 -c 'import sys
with open(sys.argv[1], "w") as f:
    f.write(sys.argv[2] + "\n")' "$1" "$2"
}

# last_line_field FILE KEY: KEY of the last line of FILE (on the server).
last_field() {
	tail -n 1 "$1" | python3 -c 'import json, sys; print(json.loads(sys.stdin.read()).get(sys.argv[1]))' "$2"
}

phase() {
	local variant=$1 name opts=()
	name=s-${variant//[^a-z0-9]/-}
	[[ $variant == default ]] || opts=(-o "$variant")
	local F=$STORE/$PROJ/$name.jsonl BASE=$T_DIR/$name.base
	local NA=$T_DIR/net-a-$name NB=$T_DIR/net-b-$name PA=$T_DIR/ps-a-$name PB=$T_DIR/ps-b-$name
	{
		header 3 "dddddddd-0000-0000-0000-0000000000$((${#variant} % 90 + 10))"
		user_msg r1 null "shared store"
		asst_msg r2 r1 "ok"
	} >"$F"
	cp "$F" "$BASE"
	cp "$ROOT_DIR/tests/data/fixtures/pi-v1-before-compaction.jsonl" "$STORE/$PROJ/$name-v1.jsonl"
	mount_net "$NA" "${opts[@]}"
	mount_net "$NB" "${opts[@]}"
	mkdir -p "$PA" "$PB"
	mount_fs "$NA" "$PA"
	mount_fs "$NB" "$PB"
	local SA=$PA/$PROJ/$name SB=$PB/$PROJ/$name
	assert_poll "[$variant] machine A's daemon shows the session" 5 test -f "$SA/0002-assistant.r2.md"
	assert_poll "[$variant] machine B's daemon shows the session" 5 test -f "$SB/0002-assistant.r2.md"

	# --- concurrent writers ---------------------------------------------------
	local lg=$LOGS_DIR/$name
	mkdir -p "$lg"
	PIDS=()
	local w args=()
	start_writer() {
		local who=$1
		shift
		timeout -s KILL "$LIMIT" python3 "$STRESS_DIR/writer.py" --log "$lg/$who.log" --tag "$name-$who" \
			--seconds "$SECS" --sleep "$PACE" "$@" >"$lg/$who.out" 2>&1 &
		PIDS+=($!)
		args+=(--log "$F=$lg/$who.log")
	}
	start_writer A --mode md --target "$SA" --big-every 5 --big-kb "$BIG_KB"
	start_writer B --mode md --target "$SB" --big-every 5 --big-kb "$BIG_KB"
	start_writer R --mode raw --target "$SB/session.jsonl" --chain --parent r2
	timeout -s KILL "$LIMIT" "$PI_NODE" "$STRESS_DIR/pi_tool.mjs" "$PI_SESSION_MANAGER" writer "$F" "$SECS" \
		"$lg/PI.log" "$name-PI" "$PACE" >"$lg/PI.out" 2>&1 &
	PIDS+=($!)
	args+=(--log "$F=$lg/PI.log")
	local p
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null || fail "[$variant] a writer ended with status $? (see $lg)"
	done
	PIDS=()
	for w in A B R PI; do
		local summary
		summary=$(python3 -c '
import json, sys
end, first = None, None
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("ev") == "end":
        end = r
    elif r.get("ev") == "err" and first is None:
        first = "%s: %s" % (r.get("stage", ""), r.get("error"))
errs = (end or {}).get("errors")
n = sum(errs.values()) if isinstance(errs, dict) else (errs or 0)
if end is None:
    print("BAD no end record")
elif n:
    print("BAD %d of %d writes failed (%s); first: %s" % (n, end["tries"], json.dumps(errs), first))
else:
    print("OK %d" % end["tries"])' "$lg/$w.log")
		case $summary in
		OK*) pass "[$variant] writer $w: all ${summary#OK } writes succeeded" ;;
		*) fail "[$variant] writer $w: ${summary#BAD }" ;;
		esac
	done
	py_checks timeout -s KILL 300 python3 "$STRESS_DIR/verify.py" --session "$F=$BASE" "${args[@]}"
	local figures
	figures=$(grep '^@figures' "$T_DIR/.py_checks" | sed 's/^@figures //' || true)
	python3 "$STRESS_DIR/branches.py" --session "$F" --base "$BASE" \
		--log "A=$lg/A.log" --log "B=$lg/B.log" --log "R=$lg/R.log" --log "PI=$lg/PI.log" >"$lg/branches" 2>&1 ||
		fail "[$variant] branches.py failed: $(head -c 600 "$lg/branches")"
	note "[$variant] ${SECS}s, 2 machines (A: .md; B: .md and raw session.jsonl lines) and pi on the server: $figures"
	note "[$variant] $(sed -n 's/^# //p' "$lg/branches" | head -2 | tr '\n' ' ')"
	assert_pi_loads "[$variant] the shared session" "$F"

	# --- one at a time: each entry hangs under the one before -----------------
	local r bad=0 first_bad= sid bid aid
	# The file's last line may be pi's or R's, off the main line; an .md
	# file through A goes under the main line's tip and ends the file.
	write_md "$SA/seq-start.md" "$name seq start" || fail "[$variant] writing seq-start.md through A failed"
	for ((r = 1; r <= SEQ_ROUNDS; r++)); do
		# A reads the session (its sshfs caches now hold the file's size).
		fsx cat "$SA/context.json" >/dev/null || fail "[$variant] reading $SA/context.json failed"
		sid=$name-srv-$r
		msg_line "$sid" "$(last_field "$F" id)" "server $r" >>"$F"
		write_md "$SB/seq-b-$r.md" "$name seq B $r" || fail "[$variant] writing seq-b-$r.md through B failed"
		bid=$(last_field "$F" id)
		[[ $(last_field "$F" parentId) == "$sid" ]] || { bad=$((bad + 1)); first_bad=${first_bad:-"B's entry $r hangs under $(last_field "$F" parentId), not the server's $sid"}; }
		write_md "$SA/seq-a-$r.md" "$name seq A $r" || fail "[$variant] writing seq-a-$r.md through A failed"
		aid=$(last_field "$F" id)
		[[ $(last_field "$F" parentId) == "$bid" ]] || { bad=$((bad + 1)); first_bad=${first_bad:-"A's entry $aid hangs under $(last_field "$F" parentId), not B's $bid"}; }
	done
	if ((bad == 0)); then
		pass "[$variant] $SEQ_ROUNDS rounds of server, B, A one at a time: each entry hangs under the one before"
	else
		fail "[$variant] $bad of $((2 * SEQ_ROUNDS)) entries written one at a time hang under a stale tip: $first_bad"
	fi

	# --- an entry that sshfs would send in pieces is refused -----------------
	local before after kb
	for kb in 40 80; do
		before=$(sha256sum <"$F")
		write_close "$SA/big-$kb.md" "big $kb $(head -c $((kb * 1024)) /dev/zero | tr '\0' y)"$'\n'
		after=$(sha256sum <"$F")
		assert_eq "[$variant] a ${kb} KiB entry through A is refused at close()" "EFBIG" "${OUT%$'\n'}"
		assert_eq "[$variant] the refused ${kb} KiB entry left the session file byte-identical" "$before" "$after"
		assert_true "[$variant] the refused ${kb} KiB text is kept in rejected/" \
			bash -c 'grep -lq "^big $1 y" "$2"/.pisessionfs/rejected/*' _ "$kb" "$PA"
	done
	# --- a version 1 file is not migrated (rewritten) over the network -------
	local V1=$STORE/$PROJ/$name-v1.jsonl
	before=$(sha256sum <"$V1")
	write_close "$PA/$PROJ/$name-v1/new.md" $'a question for an old session\n'
	assert_eq "[$variant] a message into a version 1 session through A is refused at close()" "EPERM" "${OUT%$'\n'}"
	assert_eq "[$variant] the version 1 file is byte-identical" "$before" "$(sha256sum <"$V1")"
	fsx_out cat "$PA/.pisessionfs/log"
	assert_contains "[$variant] the log says why a big entry was refused" "SFTP" "$OUT"
	assert_contains "[$variant] the log says why the version 1 file was left" "rewrites it, which could lose another machine's append" "$OUT"
	# The daemons logged their refusals (expected): they are not trouble.
	umount_fs "$PA"
	umount_fs "$PB"
	umount_fs "$NA"
	umount_fs "$NB"
}

for v in "${VARIANTS[@]}"; do
	phase "$v"
done
finish
