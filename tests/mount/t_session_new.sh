#!/usr/bin/env bash
# mkdir PROJECT/NAME starts a session, as pi's /new does (docs/layout.md
# "Starting a session"): a <timestamp>_<uuid v7>.jsonl with a version 3
# header and NAME as its session_info; NAME resolves as typed, a message
# written into it lands in the new file, and pi loads it and continues it
# from that cwd.  At the root, the same in a flat store.
. "$(dirname "$0")/lib.sh" "$@"

need_pi

P=--home-u-proj--
mkdir -p "$STORE/$P" "$STORE/--srv-empty-dir--"
{
	printf '{"type":"session","version":3,"id":"0190aaaa-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/proj"}\n'
	user_msg u1 null "an older question"
} >"$STORE/$P/2026-01-01T00-00-00-000Z_old.jsonl"
touch -d @1000 "$STORE/$P/2026-01-01T00-00-00-000Z_old.jsonl"
before=$(sha256sum <"$STORE/$P/2026-01-01T00-00-00-000Z_old.jsonl")
mount_fs "$STORE" "$MNT"

assert_true "mkdir in a project folder" mkdir "$MNT/$P/fresh idea"
files=("$STORE/$P"/*.jsonl)
assert_eq "one new session file" 2 "${#files[@]}"
new=$(ls -t "$STORE/$P"/*.jsonl | head -1)
stem=$(basename "$new" .jsonl)
assert_true "named <timestamp>_<uuid v7>.jsonl" bash -c \
	"[[ '$stem' =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{3}Z_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]]"
header=$(head -1 "$new")
assert_contains "a version 3 header with the project's cwd" '"type":"session","version":3,' "$header"
assert_contains "the cwd is the project's sessions'" '"cwd":"/home/u/proj"}' "$header"
assert_contains "the id is the file name's" "\"id\":\"${stem#*_}\"" "$header"
ts=${stem%%_*}
assert_contains "the timestamp is the file name's" "\"timestamp\":\"${ts:0:13}:${ts:14:2}:${ts:17:2}.${ts:20:3}Z\"" "$header"
assert_contains "NAME is its session_info" '"type":"session_info"' "$(sed -n 2p "$new")"
assert_contains "with the name as typed" '"parentId":null,' "$(sed -n 2p "$new")"
assert_eq "the name reads" "fresh idea" "$(fsx cat "$MNT/$P/$stem/name")"
assert_true "NAME resolves as typed" test -d "$MNT/$P/fresh idea"
assert_eq "through NAME, the new session" "fresh idea" "$(fsx cat "$MNT/$P/fresh idea/name")"
assert_contains "the listing shows the session by its file name" "$stem" "$(fsx ls "$MNT/$P")"
assert_eq "by-name links it" "../$P/$stem" "$(fsx readlink "$MNT/by-name/fresh idea")"

# The shell that made it writes into it.
assert_true "a message written into it" bash -c "cd '$MNT/$P/fresh idea' && echo 'what should we build?' > ask.md"
assert_contains "lands in the new file" '"content":"what should we build?"' "$(tail -1 "$new")"
assert_eq "the other session is untouched" "$before" "$(sha256sum <"$STORE/$P/2026-01-01T00-00-00-000Z_old.jsonl")"

# pi loads it, and `pi -c` from that cwd continues it.
pi_open "$new"
assert_contains "pi opens it" '"ok":true' "$OUT"
assert_contains "pi reads its name" '"name":"fresh idea"' "$OUT"
assert_contains "pi leaves it as it is" '"unchanged":true' "$OUT"
fsx_out timeout -s KILL 60 "$PI_NODE" --input-type=module -e "
const { SessionManager } = await import('file://$PI_SESSION_MANAGER');
const sm = SessionManager.continueRecent('/home/u/proj', '$STORE/$P');
console.log(sm.getSessionFile());"
assert_eq "pi -c from /home/u/proj continues it" "$new" "${OUT%$'\n'}"

# A folder without sessions: the cwd read back from its name.
assert_true "mkdir in an empty project folder" mkdir "$MNT/--srv-empty-dir--/first"
assert_contains "its cwd from the folder's name" '"cwd":"/srv/empty/dir"}' "$(head -1 "$STORE/--srv-empty-dir--/"*.jsonl)"

# Refusals: no file is made.
assert_errno "File exists" mkdir "$MNT/$P/fresh idea"
assert_errno "Invalid argument" mkdir "$MNT/$P/$(printf 'bad\xff')"
assert_errno "Operation not permitted" mkdir "$MNT/not-flat"
assert_contains "the log says why, and what to do instead" \
	"refused mkdir $MNT/not-flat: project folders are made by pi, the first time it saves a session for a directory" \
	"$(fsx cat "$MNT/.pisessionfs/log")"
assert_contains "... the folder's name is not its directory; by-cwd/ is the way" \
	"to start a session in a directory that has no folder yet, mkdir -p by-cwd/PATH/NAME" \
	"$(fsx tail -n 1 "$MNT/.pisessionfs/log")"
assert_errno "Operation not permitted" mkdir "$MNT/by-name/via name"
assert_contains "a mkdir in a view: the log says the views hold links" \
	"refused mkdir $MNT/by-name/via name: the views hold links to sessions, not sessions; mkdir PROJECT/NAME starts one, or mkdir -p by-cwd/PATH/NAME" \
	"$(fsx tail -n 1 "$MNT/.pisessionfs/log")"
assert_eq "still two sessions in the project" 2 "$(ls "$STORE/$P"/*.jsonl | wc -l)"
root_files=("$STORE"/*.jsonl)
assert_eq "none at the root of a store of project folders" 0 "${#root_files[@]}"
umount_fs "$MNT"

# A flat store: the same at the root.
FLAT=$T_DIR/flat
mkdir -p "$FLAT" "$T_DIR/mnt2"
{
	printf '{"type":"session","version":3,"id":"0190bbbb-0000-7000-8000-000000000002","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w/flat"}\n'
	user_msg u1 null "flat"
} >"$FLAT/2026-01-01T00-00-00-000Z_flat.jsonl"
mount_fs "$FLAT" "$T_DIR/mnt2"
assert_true "mkdir at the root of a flat store" mkdir "$T_DIR/mnt2/flat idea"
assert_eq "a session file in the store itself" 2 "$(ls "$FLAT"/*.jsonl | wc -l)"
assert_contains "with the flat sessions' cwd" '"cwd":"/w/flat"}' "$(head -1 "$(ls -t "$FLAT"/*.jsonl | head -1)")"
assert_eq "its name resolves at the root" "flat idea" "$(fsx cat "$T_DIR/mnt2/flat idea/name" 2>&1)"

finish
