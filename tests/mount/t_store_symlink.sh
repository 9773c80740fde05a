#!/usr/bin/env bash
# A store reached through a symlink (README "Command line", --store): the paths
# the mount writes into files are the store's as pi resolves it (Node's
# path.resolve: no symlink followed), both ways it is given: --store LINK,
# and PI_CODING_AGENT_DIR=LINK (the store then LINK/sessions).  Checked:
# --print-store, a fork's parentSession (ln -s SESSION/ENTRY PROJECT/NAME)
# and the trash's Path= (rm -r SESSION).
. "$(dirname "$0")/lib.sh" "$@"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FIX=$ROOT/tests/data/fixtures/pi-1.6.0-v3-branched.jsonl
P=--home-u-proj--
A=2026-01-01T00-00-00-000Z_aaaa
B=2026-01-02T00-00-00-000Z_bbbb
REAL=$T_DIR/real/agent
mkdir -p "$REAL/sessions/$P"
for s in $A $B; do cp "$FIX" "$REAL/sessions/$P/$s.jsonl"; done
ln -s "$REAL" "$T_DIR/agentlink"
ln -s "$REAL/sessions" "$T_DIR/storelink"

# header_field FILE FIELD: the session header's FIELD.
header_field() { head -n 1 "$1" | python3 -c "import json, sys; print(json.load(sys.stdin).get('$2'))"; }

# through LABEL LINKED-STORE MOUNTPOINT: the checks on a mounted store
# whose path, as given, is LINKED-STORE.
through() {
	local what=$1 linked=$2 mp=$3 new
	fsx ln -s "$mp/$P/$A/0004-user.7bfd5a82.md" "$mp/$P/forked" || fail "$what: ln -s (fork) failed"
	# The one session file that is neither A nor B (not "newer than B":
	# B is put back with an old time, after which A is newer too).
	new=$(find "$REAL/sessions/$P" -name '*.jsonl' ! -name "$A.jsonl" ! -name "$B.jsonl" | head -n 1)
	assert_true "$what: the fork was made" test -n "$new"
	[[ -n $new ]] && assert_eq "$what: the fork's parentSession is the path as given" \
		"$linked/$P/$A.jsonl" "$(header_field "$new" parentSession)"
	[[ -n $new ]] && rm -f "$new"
	fsx_out rm -r "$mp/$P/$B"
	assert_eq "$what: rm -r SESSION exits 0" 0 "$RC"
	assert_contains "$what: the trash's Path= is the path as given" "Path=$linked/$P/$B.jsonl" \
		"$(cat "$XDG_DATA_HOME/Trash/info/$B.jsonl.trashinfo" 2>/dev/null)"
	# Put it back for the next way.
	mv "$XDG_DATA_HOME/Trash/files/$B.jsonl" "$REAL/sessions/$P/$B.jsonl"
	rm -f "$XDG_DATA_HOME/Trash/info/$B.jsonl.trashinfo"
	touch -d '2026-01-02' "$REAL/sessions/$P/$B.jsonl"
}

# --store LINK
fsx_out "$DAEMON" --store "$T_DIR/storelink" --print-store
assert_eq "--print-store keeps the link" "$T_DIR/storelink" "${OUT%$'\n'}"
mount_fs "$T_DIR/storelink" "$MNT"
through "--store LINK" "$T_DIR/storelink" "$MNT"
umount_fs "$MNT"

# PI_CODING_AGENT_DIR=LINK
fsx_out env -u PI_CODING_AGENT_SESSION_DIR PI_CODING_AGENT_DIR="$T_DIR/agentlink" "$DAEMON" --print-store
assert_eq "PI_CODING_AGENT_DIR=LINK: --print-store keeps the link" "$T_DIR/agentlink/sessions" "${OUT%$'\n'}"
MNT2=$T_DIR/mnt2
mkdir -p "$MNT2"
mount_with "$MNT2" env -u PI_CODING_AGENT_SESSION_DIR PI_CODING_AGENT_DIR="$T_DIR/agentlink" \
	"$DAEMON" -f -o auto_unmount "$MNT2"
through "PI_CODING_AGENT_DIR=LINK" "$T_DIR/agentlink/sessions" "$MNT2"
finish
