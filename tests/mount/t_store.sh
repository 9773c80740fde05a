#!/usr/bin/env bash
# shellcheck disable=SC2016,SC2088 # sh -c scripts get their arguments as $1; "~" in messages and values is literal
# The store pi actually uses (issue 11, item 5):
#   1. a flat store (pi --session-dir, $PI_CODING_AGENT_SESSION_DIR or
#      sessionDir: session files directly in the store) shows each file as a
#      session directory at the mount root, in every view and in usage.csv;
#      a write there appends to that file, the watcher follows it, and pi's
#      own SessionManager loads the result;
#   2. symlinked project folders are followed (pi's listAll does), also to a
#      folder outside the store; a symlink loop is not listed and hangs
#      nothing; a symlinked session file stays hidden;
#   3. without --store the daemon finds the store as pi 1.6.0 does:
#      $PI_CODING_AGENT_SESSION_DIR, else sessionDir in
#      <agent dir>/settings.json, else <agent dir>/sessions, where the agent
#      dir is $PI_CODING_AGENT_DIR, else ~/.pi/agent ("~" expanded, relative
#      paths from the current directory); --print-store says which.
. "$(dirname "$0")/lib.sh" "$@"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
ID_A=aaaaaaaa-0000-4000-8000-000000000001
ID_B=bbbbbbbb-0000-4000-8000-000000000002
ID_C=cccccccc-0000-4000-8000-000000000003
ID_D=dddddddd-0000-4000-8000-000000000004

# session ID CWD: a header with its own cwd.
session_header() {
	printf '{"type":"session","version":3,"id":"%s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"%s"}\n' "$1" "$2"
}

# --- 1. a flat store -----------------------------------------------------------
{
	session_header "$ID_A" /w/flat
	user_msg a1 null "first flat question"
	asst_msg a2 a1 "first flat answer"
} >"$STORE/2026-01-01T00-00-00-000Z_$ID_A.jsonl"
A=2026-01-01T00-00-00-000Z_$ID_A
{
	session_header "$ID_B" /w/flat
	user_msg b1 null "second flat question"
	printf '{"type":"session_info","id":"b2","parentId":"b1","timestamp":"2026-01-01T00:00:03.000Z","name":"flat named"}\n'
} >"$STORE/2026-01-02T00-00-00-000Z_$ID_B.jsonl"
B=2026-01-02T00-00-00-000Z_$ID_B
echo "not a session" >"$STORE/notes.txt"
mkdir -p "$STORE/--w-proj--"
{
	session_header "$ID_C" /w/proj
	user_msg c1 null "in a project"
} >"$STORE/--w-proj--/c.jsonl"

mount_fs "$STORE" "$MNT"

root=$(ls_names "$MNT")
for name in "$A" "$B" --w-proj-- by-id by-name by-cwd recent search sessions.md usage.csv usage-daily.csv usage-monthly.csv \
	usage-daily-models.csv usage.svg; do
	assert_contains "the mount root lists $name" "$name" "$root"
done
assert_true "a flat session is a directory at the root" test -d "$MNT/$A"
assert_contains "its entries read" "first flat question" "$(fsx cat "$MNT/$A/0001-user.a1.md")"
assert_eq "a file that is no session is not shown" "" "$(grep -x 'notes.*' <<<"$root" || true)"
assert_eq "by-id links to a flat session at the root" "../$A" "$(fsx readlink "$MNT/by-id/$ID_A")"
assert_contains "by-id resolves into it" "first flat answer" "$(fsx cat "$MNT/by-id/$ID_A/0002-assistant.a2.md")"
assert_eq "by-id still links to project sessions" "../--w-proj--/c" "$(fsx readlink "$MNT/by-id/$ID_C")"
assert_eq "by-name covers flat sessions" "../$B" "$(fsx readlink "$MNT/by-name/flat named")"
assert_eq "by-cwd covers flat sessions" "$(printf '%s\n' "$A" "$B")" "$(ls_names "$MNT/by-cwd/w/flat")"
assert_eq "by-cwd's link resolves" "../../../$A" "$(fsx readlink "$MNT/by-cwd/w/flat/$A")"
assert_true "by-cwd's link leads into the session" test -f "$MNT/by-cwd/w/flat/$A/0001-user.a1.md"
recent=$(ls_names "$MNT/recent" | while IFS= read -r n; do fsx readlink "$MNT/recent/$n" </dev/null; done)
assert_contains "recent covers a flat session" "../$A" "$recent"
assert_contains "recent covers the other" "../$B" "$recent"
assert_contains "recent names it by its title" "01-in a project~00000003" "$(ls_names "$MNT/recent")"
csv=$(fsx cat "$MNT/usage.csv")
assert_contains "usage.csv at the root has a row for a flat session (empty project)" ",$A,$ID_A," "$csv"
assert_contains "usage.csv keeps the project rows" "--w-proj--,c,$ID_C," "$csv"
assert_eq "usage.csv: one row per session" 4 "$(wc -l <<<"$csv")"

# A write in a flat session appends to its file, as in any session.
before=$(wc -l <"$STORE/$A.jsonl")
assert_true "a new message in a flat session" sh -c 'echo "a note in the flat store" > "$1/next.md"' _ "$MNT/$A"
assert_eq "it appended exactly one line to the file in the store root" $((before + 1)) "$(wc -l <"$STORE/$A.jsonl")"
assert_contains "the line is the note" '"content":"a note in the flat store"' "$(tail -n 1 "$STORE/$A.jsonl")"
assert_contains "the entry shows" "0003-user." "$(ls_names "$MNT/$A")"
assert_eq "the project is untouched" 2 "$(wc -l <"$STORE/--w-proj--/c.jsonl")"

# The watcher follows a flat session and new files in the root: the
# kernel keeps attributes for 10 s where the watcher runs, so a size that
# changes sooner was invalidated by it (stat only: a read would mend it).
size=$(fsx stat -c %s "$MNT/$B/context.json" || true)
asst_msg b3 b2 "appended outside" >>"$STORE/$B.jsonl"
assert_poll "the watcher tells the kernel that a flat session grew" 5 \
	bash -c 'size_is_not "$1" "$2"' _ "$MNT/$B/context.json" "$size"
assert_poll "an append outside the mount shows in the flat session" 5 sh -c 'ls "$1" | grep -q "^0003-assistant.b3.md$"' _ "$MNT/$B"
cp "$STORE/--w-proj--/c.jsonl" "$STORE/later.jsonl"
assert_poll "a new session file in the root shows" 5 test -f "$MNT/later/0001-user.c1.md"

# pi's own SessionManager loads what the mount appended (on a copy: open()
# may rewrite a file).
if ! pi_env=$(PI_REF_DIR=${PI_REF_DIR:-} "$REPO/tests/setup-pi.sh"); then
	fail "tests/setup-pi.sh could not provide pi 1.6.0"
else
	eval "$pi_env"
	cp "$STORE/$A.jsonl" "$T_DIR/copy.jsonl"
	fsx_out "$PI_NODE" "$REPO/tests/interop/pi_open.mjs" "$PI_SESSION_MANAGER" "$T_DIR/copy.jsonl"
	assert_eq "pi opens the flat session" 0 "$RC"
	assert_contains "pi loads it" '"ok":true' "$OUT"
	assert_contains "pi's context ends with the note" '"content":"a note in the flat store"' "$OUT"
	assert_contains "pi finds nothing to repair" '"unchanged":true' "$OUT"
fi
umount_fs "$MNT"

# --- 2. symlinked project folders ---------------------------------------------
OUTSIDE=$T_DIR/outside
mkdir -p "$OUTSIDE"
{
	session_header "$ID_D" /w/linked
	user_msg d1 null "behind a symlink"
} >"$OUTSIDE/d.jsonl"
ln -s "$OUTSIDE" "$STORE/--w-linked--"
ln -s -- --w-loop-- "$STORE/--w-loop--"
ln -s "../$A.jsonl" "$STORE/--w-proj--/e.jsonl"
mount_fs "$STORE" "$MNT"
root=$(ls_names "$MNT")
assert_contains "a symlinked project folder is listed" "--w-linked--" "$root"
assert_eq "its sessions are listed" "d$(printf '\nsearch\nsessions.md\nusage-daily-models.csv\nusage-daily.csv\nusage-monthly.csv\nusage.csv\nusage.svg')" "$(ls_names "$MNT/--w-linked--")"
assert_contains "they read" "behind a symlink" "$(fsx cat "$MNT/--w-linked--/d/0001-user.d1.md")"
assert_eq "by-id covers them" "../--w-linked--/d" "$(fsx readlink "$MNT/by-id/$ID_D")"
assert_eq "a symlink loop is not listed" "" "$(grep -x -- '--w-loop--' <<<"$root" || true)"
assert_fails test -d "$MNT/--w-loop--"
assert_eq "a symlinked session file stays hidden" "c$(printf '\nsearch\nsessions.md\nusage-daily-models.csv\nusage-daily.csv\nusage-monthly.csv\nusage.csv\nusage.svg')" "$(ls_names "$MNT/--w-proj--")"
assert_true "a write behind the symlink" sh -c 'echo "through the link" > "$1/next.md"' _ "$MNT/--w-linked--/d"
assert_contains "appends to the folder it points to" '"content":"through the link"' "$(tail -n 1 "$OUTSIDE/d.jsonl")"
size=$(fsx stat -c %s "$MNT/--w-linked--/d/context.json" || true)
asst_msg d9 d1 "appended behind the link" >>"$OUTSIDE/d.jsonl"
assert_poll "the watcher tells the kernel that a session behind the link grew" 5 \
	bash -c 'size_is_not "$1" "$2"' _ "$MNT/--w-linked--/d/context.json" "$size"
assert_poll "the watcher follows the linked folder" 5 sh -c 'ls "$1" | grep -q "^0002-assistant.d9.md$"' _ "$MNT/--w-linked--/d/0002~d9"
umount_fs "$MNT"
# A folder linked to another project of the store shows the same sessions,
# but the views list each session once, under its real folder.
ln -s -- --w-proj-- "$STORE/--w-alias--"
mount_fs "$STORE" "$MNT"
assert_eq "the alias folder lists the project's sessions" "$(ls_names "$MNT/--w-proj--")" "$(ls_names "$MNT/--w-alias--")"
assert_eq "by-id lists the session once, under its real folder" "../--w-proj--/c" "$(fsx readlink "$MNT/by-id/$ID_C")"
assert_eq "by-id has no second name for it" "" "$(ls_names "$MNT/by-id" | grep -Fx -- "$ID_C~c" || true)"
assert_eq "by-cwd lists it once" 1 "$(ls_names "$MNT/by-cwd/w/proj" | grep -cx c || true)"
assert_eq "usage.csv has one row for it" 1 "$(fsx cat "$MNT/usage.csv" | grep -c ",c,$ID_C," || true)"
umount_fs "$MNT"
rm "$STORE/--w-linked--" "$STORE/--w-loop--" "$STORE/--w-proj--/e.jsonl" "$STORE/--w-alias--"

# --- 3. the default store, as pi finds it --------------------------------------
H=$T_DIR/home
mkdir -p "$H/.pi/agent/sessions/--w-home--" "$T_DIR/work"
{
	session_header "$ID_C" /w/home
	user_msg h1 null "in the home store"
} >"$H/.pi/agent/sessions/--w-home--/h.jsonl"

# print_store EXPECTED WHAT [VAR=VALUE...]: --print-store, in a private
# environment (HOME=$H, run from $T_DIR/work), prints EXPECTED.
print_store() {
	local expected=$1 what=$2
	shift 2
	fsx_out env -u PI_CODING_AGENT_DIR -u PI_CODING_AGENT_SESSION_DIR HOME="$H" "$@" \
		sh -c 'cd "$1" && exec "$2" --print-store' _ "$T_DIR/work" "$DAEMON"
	assert_eq "--print-store succeeds ($what)" 0 "$RC"
	assert_eq "--print-store: $what" "$expected" "${OUT%$'\n'}"
}
# mount_default MOUNTPOINT [VAR=VALUE...]: the daemon without --store.
mount_default() {
	local mp=$1
	shift
	mount_with "$mp" env -u PI_CODING_AGENT_DIR -u PI_CODING_AGENT_SESSION_DIR HOME="$H" "$@" \
		sh -c 'cd "$1" && exec "$2" -f -o auto_unmount "$3"' _ "$T_DIR/work" "$DAEMON" "$mp"
}

print_store "$H/.pi/agent/sessions" "~/.pi/agent/sessions by default"
mount_default "$MNT"
assert_true "the default store is ~/.pi/agent/sessions" test -f "$MNT/--w-home--/h/0001-user.h1.md"
umount_fs "$MNT"

mkdir -p "$T_DIR/agent/sessions/--w-agent--"
cp "$H/.pi/agent/sessions/--w-home--/h.jsonl" "$T_DIR/agent/sessions/--w-agent--/"
print_store "$T_DIR/agent/sessions" '$PI_CODING_AGENT_DIR/sessions' PI_CODING_AGENT_DIR="$T_DIR/agent"
mount_default "$MNT" PI_CODING_AGENT_DIR="$T_DIR/agent"
assert_true '$PI_CODING_AGENT_DIR is followed' test -d "$MNT/--w-agent--/h"
assert_fails test -e "$MNT/--w-home--"
umount_fs "$MNT"
mkdir -p "$H/agent2/sessions"
print_store "$H/agent2/sessions" '$PI_CODING_AGENT_DIR with ~' PI_CODING_AGENT_DIR="~/agent2"

# sessionDir in the agent directory's settings.json: a flat store.
mkdir -p "$H/flat"
cp "$STORE/$A.jsonl" "$H/flat/"
printf '{\n  "theme": "dark",\n  "sessionDir": "~/flat"\n}\n' >"$H/.pi/agent/settings.json"
print_store "$H/flat" "sessionDir in ~/.pi/agent/settings.json"
mount_default "$MNT"
assert_true "sessionDir is the store, and it is flat" test -f "$MNT/$A/0001-user.a1.md"
assert_eq "by-id covers it" "../$A" "$(fsx readlink "$MNT/by-id/$ID_A")"
umount_fs "$MNT"
printf '{"sessionDir": "%s"}\n' "$T_DIR/agent/sessions" >"$T_DIR/agent/settings.json"
print_store "$T_DIR/agent/sessions" 'sessionDir in $PI_CODING_AGENT_DIR/settings.json' PI_CODING_AGENT_DIR="$T_DIR/agent"
# A project's .pi/settings.json is not read (it names that project's store).
mkdir -p "$T_DIR/work/.pi"
printf '{"sessionDir": "/nonexistent"}\n' >"$T_DIR/work/.pi/settings.json"
print_store "$H/flat" "a project's .pi/settings.json is not read"

# $PI_CODING_AGENT_SESSION_DIR comes first; a relative one counts from the
# current directory, "~" from HOME.
mkdir -p "$T_DIR/work/rel" "$H/envdir"
print_store "$H/envdir" '$PI_CODING_AGENT_SESSION_DIR with ~' PI_CODING_AGENT_SESSION_DIR="~/envdir"
print_store "$T_DIR/work/rel" '$PI_CODING_AGENT_SESSION_DIR relative' PI_CODING_AGENT_SESSION_DIR=rel
cp "$STORE/$B.jsonl" "$H/envdir/"
mount_default "$MNT" PI_CODING_AGENT_SESSION_DIR="~/envdir" PI_CODING_AGENT_DIR="$T_DIR/agent"
assert_true '$PI_CODING_AGENT_SESSION_DIR wins over settings and the agent dir' test -d "$MNT/$B"
assert_fails test -e "$MNT/--w-agent--"
umount_fs "$MNT"

# pi itself agrees (its config and settings code, in the order main.js
# uses them) in the sessionDir case.
if [[ -n ${PI_NODE:-} ]]; then
	pkg=$(dirname "$(dirname "$PI_SESSION_MANAGER")")
	fsx_out env -u PI_CODING_AGENT_DIR -u PI_CODING_AGENT_SESSION_DIR HOME="$H" "$PI_NODE" --input-type=module -e "
		const { getAgentDir } = await import('$pkg/config.js');
		const { SettingsManager } = await import('$pkg/core/settings-manager.js');
		console.log(SettingsManager.create('$T_DIR', getAgentDir()).getSessionDir());"
	assert_eq "pi's own settings code finds the same sessionDir" "$H/flat" "${OUT%$'\n'}"
fi

# A store given by the default that does not exist: the message says where
# it came from.
rm "$H/.pi/agent/settings.json"
fsx_out env -u PI_CODING_AGENT_DIR -u PI_CODING_AGENT_SESSION_DIR HOME="$H" PI_CODING_AGENT_DIR="$T_DIR/none" \
	"$DAEMON" -f "$MNT"
assert_ne "a missing default store fails" 0 "$RC"
assert_contains "and says which store and why" "$T_DIR/none/sessions" "$ERR"
assert_contains "and where it came from" "PI_CODING_AGENT_DIR" "$ERR"

finish
