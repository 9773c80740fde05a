#!/usr/bin/env bash
# A session for a directory that has no project folder yet (docs/layout.md
# "Starting a session in a new directory"): `mkdir -p by-cwd/PATH/NAME`
# keeps directories in memory and changes nothing in the store; the first
# entry file written in the deepest starts the session NAME with the cwd
# /PATH exactly, in the folder pi names for it, made then.  pi, given
# only that cwd, continues the session.  What is refused makes nothing.
. "$(dirname "$0")/lib.sh" "$@"
command -v setpriv >/dev/null || die "setpriv (util-linux) is needed"

need_pi

OTHER=52011
# pi finds a cwd's folder under its agent directory's sessions/.
mkdir -p "$T_DIR/agent"
ln -s "$STORE" "$T_DIR/agent/sessions"
P=--home-user-demo--
mkdir -p "$STORE/$P"
{
	header 3 0190aaaa-0000-7000-8000-000000000001
	user_msg u1 null "an older question"
} >"$STORE/$P/2026-01-01T00-00-00-000Z_old.jsonl"
sed -i 's|"cwd":"[^"]*"|"cwd":"/home/user/demo"|' "$STORE/$P/2026-01-01T00-00-00-000Z_old.jsonl"
chmod 755 "$STORE" "$STORE/$P"
let_others_reach "$MNT"
chmod 755 "$MNT"
store_state() { (cd "$STORE" && find . -printf '%p %s %m\n' | sort && cat ./*/*.jsonl | sha256sum); }
before=$(store_state)
mount_fs "$STORE" "$MNT" -o allow_other
as_other() { fsx_out setpriv --reuid="$OTHER" --regid="$OTHER" --clear-groups -- "$@"; }
# pi, from nothing but the cwd: the session `pi -c` there continues.
pi_continues() {
	fsx_out timeout -s KILL 60 env PI_CODING_AGENT_DIR="$T_DIR/agent" "$PI_NODE" --input-type=module -e "
const { SessionManager } = await import('file://$PI_SESSION_MANAGER');
const sm = SessionManager.continueRecent(process.argv[1]);
console.log(JSON.stringify({ file: sm.getSessionFile(), name: sm.getSessionName(), cwd: sm.getCwd(),
	texts: sm.getEntries().filter((e) => e.type === 'message').map((e) => e.message.content) }));" "$1"
}

# --- the root says where to go --------------------------------------------------
assert_errno "Operation not permitted" mkdir "$MNT/--home-ana-newproj--"
assert_contains "the refusal's log line says how to start one" "mkdir -p by-cwd/PATH/NAME" "$(cat "$MNT/.pisessionfs/log")"

# --- kept in memory: the store does not change ----------------------------------
D="$MNT/by-cwd/home/ana/new-proj"
assert_true "mkdir -p by-cwd/PATH/NAME" mkdir -p "$D/first try"
assert_eq "the store is as it was" "$before" "$(store_state)"
assert_eq "the new directories are listed" "first try" "$(fsx ls "$D")"
assert_contains "by-cwd/ lists the first one beside the real ones" "ana" "$(fsx ls "$MNT/by-cwd/home")"
assert_eq "an empty directory" "" "$(fsx ls -A "$D/first try")"
assert_true "rmdir of one that started nothing" bash -c "mkdir '$D/spare' && rmdir '$D/spare'"
assert_missing "it is gone" "$D/spare"
assert_errno "Directory not empty" rmdir "$D"
assert_errno "Invalid argument" mkdir "$D/bad%41"
assert_contains "a name by-cwd/ would list otherwise is refused, said why" "%25" "$(cat "$MNT/.pisessionfs/log")"

# --- who sees and makes them ----------------------------------------------------
as_other ls "$MNT/by-cwd/home"
assert_eq "another user does not see them" "user" "${OUT%$'\n'}"
as_other mkdir "$MNT/by-cwd/home/theirs"
assert_ne "another user may not make one where the store is not theirs to write" 0 "$RC"
assert_contains "with EACCES" "Permission denied" "$ERR"

# --- refused first files make nothing -------------------------------------------
assert_errno "Operation not permitted" bash -c "echo hi > '$D/first try/notes.txt'"
assert_errno "Operation not permitted" bash -c "mkdir -p '$D/deeper/still' && echo hi > '$D/deeper/x.md'"
assert_eq "still nothing in the store" "$before" "$(store_state)"

# --- the first entry file starts the session ------------------------------------
assert_true "the first message" bash -c "echo 'set up the repo' > '$D/first try/ask.md'"
assert_exists "$STORE/--home-ana-new-proj--"
files=("$STORE/--home-ana-new-proj--"/*.jsonl)
assert_eq "one session file in it" 1 "${#files[@]}"
new=${files[0]}
stem=$(basename "$new" .jsonl)
assert_contains "its header has the cwd exactly" '"cwd":"/home/ana/new-proj"}' "$(head -1 "$new")"
assert_contains "named as typed" '"name":"first try"' "$(sed -n 2p "$new")"
assert_contains "the message follows" '"content":"set up the repo"' "$(sed -n 3p "$new")"
assert_eq "three lines" 3 "$(wc -l <"$new")"
assert_eq "the directory is the session now" "first try" "$(fsx cat "$D/first try/name")"
assert_contains "with its files" "context.json" "$(fsx ls "$D/first try")"
assert_true "a second message" bash -c "echo 'and a test' > '$D/first try/more.md'"
assert_eq "in the same session file" 4 "$(wc -l <"$new")"
files=("$STORE/--home-ana-new-proj--"/*.jsonl)
assert_eq "still one session" 1 "${#files[@]}"
assert_contains "by-cwd links the session" "$stem" "$(fsx ls "$D")"
assert_eq "by-name too" "../--home-ana-new-proj--/$stem" "$(fsx readlink "$MNT/by-name/first try")"
pi_continues /home/ana/new-proj
assert_contains "pi -c from that cwd continues it" "\"file\":\"$T_DIR/agent/sessions/--home-ana-new-proj--/$stem.jsonl\"" "$OUT"
assert_contains "pi reads its name and messages" '"name":"first try","cwd":"/home/ana/new-proj","texts":["set up the repo","and a test"]' "$OUT"
assert_eq "the older session is untouched" "$(sed -n 1,2p <<<"$before" | head -1)" "$(store_state | head -1)"

# --- a cwd its folder's name cannot give back -----------------------------------
E="$MNT/by-cwd/srv/x:y/a-b c"
assert_true "a cwd with ':', '-' and a space" bash -c "mkdir -p '$E/idea' && echo '{\"role\":\"user\",\"content\":\"hi\"}' > '$E/idea/q.json'"
f=("$STORE/--srv-x-y-a-b c--"/*.jsonl)
assert_eq "in pi's folder for it" 1 "${#f[@]}"
assert_contains "the cwd exactly" '"cwd":"/srv/x:y/a-b c"}' "$(head -1 "${f[0]}")"
pi_continues "/srv/x:y/a-b c"
assert_contains "pi continues it from that cwd" "\"cwd\":\"/srv/x:y/a-b c\",\"texts\":[\"hi\"]" "$OUT"
# /srv/x/y/a-b c has the same folder: it is used as it is.
assert_true "another cwd of the same folder" bash -c "mkdir -p '$MNT/by-cwd/srv/x/y/a-b c/two' && echo two > '$MNT/by-cwd/srv/x/y/a-b c/two/a.md'"
f=("$STORE/--srv-x-y-a-b c--"/*.jsonl)
assert_eq "beside the first" 2 "${#f[@]}"
assert_contains "each with its own cwd" '"cwd":"/srv/x/y/a-b c"}' "$(head -1 "$(ls -t "$STORE/--srv-x-y-a-b c--"/*.jsonl | head -1)")"

# --- two first files at once start one session ----------------------------------
mkdir -p "$MNT/by-cwd/srv/race/both"
writers=()
for i in 1 2 3 4; do
	(echo "message $i" >"$MNT/by-cwd/srv/race/both/m$i.md") &
	writers+=($!)
done
wait "${writers[@]}"
f=("$STORE/--srv-race--"/*.jsonl)
assert_eq "one session" 1 "${#f[@]}"
assert_eq "with the four messages" 4 "$(grep -c '"role":"user"' "${f[0]}")"

# --- names that cannot be ---------------------------------------------------------
long_a=$(printf 'a%.0s' {1..150})
long_b=$(printf 'b%.0s' {1..150})
assert_true "a deep path's directories" mkdir -p "$MNT/by-cwd/$long_a/$long_b/x"
assert_errno "File name too long" bash -c "echo hi > '$MNT/by-cwd/$long_a/$long_b/x/a.md'"
assert_contains "logged: pi's folder name would be too long" "longer than a file name may be" "$(cat "$MNT/.pisessionfs/log")"
assert_true "a name that is not UTF-8 is kept" mkdir -p "$MNT/by-cwd/srv/bad/$(printf 'n\xff')"
assert_errno "Invalid argument" bash -c "echo hi > '$MNT/by-cwd/srv/bad/$(printf 'n\xff')/a.md'"
assert_eq "neither made anything" "" "$(find "$STORE" -maxdepth 1 \( -name '--a*' -o -name '--srv-bad*' \))"

# --- rm -r of a started one deletes its session, as of its session directory --------
mkdir -p "$MNT/by-cwd/srv/gone/soon"
echo bye >"$MNT/by-cwd/srv/gone/soon/a.md"
gone=("$STORE/--srv-gone--"/*.jsonl)
assert_eq "a session to delete" 1 "${#gone[@]}"
assert_true "rm -r of it" rm -r "$MNT/by-cwd/srv/gone/soon"
assert_missing "${gone[0]}"
assert_eq "its file is in the trash" 1 "$(ls "$XDG_DATA_HOME/Trash/files/" | grep -c "$(basename "${gone[0]}")")"

# --- a user who may not write the store's folder --------------------------------
mkdir -p "$STORE/--srv-locked--"
chmod 755 "$STORE/--srv-locked--"
chmod 777 "$STORE"
as_other mkdir -p "$MNT/by-cwd/srv/locked/mine"
assert_eq "another user may make the directories where the store is writable" 0 "$RC"
locked_before=$(ls -A "$STORE/--srv-locked--")
as_other bash -c "echo hi > '$MNT/by-cwd/srv/locked/mine/a.md'"
assert_contains "but not a session in a folder not theirs" "Permission denied" "$ERR"
assert_eq "nothing is made there" "$locked_before" "$(ls -A "$STORE/--srv-locked--")"
as_other bash -c "mkdir -p '$MNT/by-cwd/srv/theirs/mine' && echo hi > '$MNT/by-cwd/srv/theirs/mine/a.md'"
assert_eq "a new folder of their own they may" 0 "$RC"
assert_eq "made theirs, as pi would" "$OTHER $OTHER" "$(stat -c '%u %g' "$STORE/--srv-theirs--")"
assert_eq "with the session file" "$OTHER" "$(stat -c '%u' "$STORE/--srv-theirs--"/*.jsonl)"
chmod 755 "$STORE"

# --- after a remount, what is in the store stays ---------------------------------
umount_fs "$MNT"
mount_fs "$STORE" "$MNT" -o allow_other
assert_eq "the kept directories were the mount's only" "$stem" "$(fsx ls "$D")"
assert_eq "the session is there by its name" "first try" "$(fsx cat "$MNT/by-name/first try/name")"

finish
