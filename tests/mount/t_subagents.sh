#!/usr/bin/env bash
# Subagent runs (docs/layout.md "Subagent runs"): a store laid out as
# pi-subagents lays it out (children in PROJECT/STEM/RUNID/run-N/, a forked
# child in PROJECT/STEM/forks/, artifacts in PROJECT/subagent-artifacts/)
# shows each child under SESSION/subagents/ exactly as a top-level session
# of the same file, in start order, named by start, agent, run and index,
# with its run's input/output/meta beside it; a run that left artifacts
# only shows them; a subagent's own subagents nest.  A child takes writes
# as any session; subagents/ and the artifacts take none (EPERM, the
# store byte for byte as it was, a log line).  grep -r of the parent
# reaches the children.  A child's growth shows.  rm -r of the parent
# moves its family folder and its runs' artifacts to the trash with it.
# A session without a family, and the project's listing, are as before.
. "$(dirname "$0")/lib.sh" "$@"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FIX=$ROOT/tests/data/fixtures/pi-1.6.0-v3-branched.jsonl
TRASH=$XDG_DATA_HOME/Trash
P=--home-u-proj--
PARENT=2026-02-01T10-00-00-000Z_01aa0000-0000-7000-8000-000000000001
LONE=2026-02-01T09-00-00-000Z_01aa0000-0000-7000-8000-000000000002
RUN=k3x9q2ab
ASYNC=z8y7w6v5
FAM=$STORE/$P/$PARENT
ART=$STORE/$P/subagent-artifacts
CHILD0=2026-02-01T10-01-00-000Z_01aa0000-0000-7000-8000-000000000010
CHILD1=2026-02-01T10-01-00-500Z_01aa0000-0000-7000-8000-000000000011
FORK=2026-02-01T10-02-00-000Z_01aa0000-0000-7000-8000-000000000012
GRAND=2026-02-01T10-03-00-000Z_01aa0000-0000-7000-8000-000000000013
mkdir -p "$STORE/$P" "$FAM/$RUN/run-0" "$FAM/$RUN/run-1" "$FAM/forks" "$FAM/$ASYNC" "$ART/outputs/u1"
cp "$FIX" "$STORE/$P/$PARENT.jsonl"
cp "$FIX" "$STORE/$P/$LONE.jsonl"
{ header 3 01aa0000-0000-7000-8000-000000000010; alpha_turns; } >"$FAM/$RUN/run-0/$CHILD0.jsonl"
{
	header 3 01aa0000-0000-7000-8000-000000000011
	user_msg bbbb0001 null "second child task"
	printf '{"type":"session_info","id":"bbbb0002","parentId":"bbbb0001","timestamp":"2026-01-01T00:00:02.000Z","name":"worker: second"}\n'
} >"$FAM/$RUN/run-1/$CHILD1.jsonl"
cp "$FIX" "$FAM/forks/$FORK.jsonl"
# The first child's own subagent: a family folder below the child's folder.
mkdir -p "$FAM/$RUN/run-0/$CHILD0/g1/run-0"
{ header 3 01aa0000-0000-7000-8000-000000000013; user_msg cccc0001 null "grandchild task"; } \
	>"$FAM/$RUN/run-0/$CHILD0/g1/run-0/$GRAND.jsonl"
# A parallel run's artifacts carry the child's index; an async run left
# artifacts only.
for i in 0 1; do
	agent=scout
	[[ $i == 1 ]] && agent=worker
	printf 'task of %s %s\n' "$agent" "$i" >"$ART/${RUN}_${agent}_${i}_input.md"
	printf 'the whole result of %s %s: found zebra-quartz\n' "$agent" "$i" >"$ART/${RUN}_${agent}_${i}_output.md"
	printf '{"runId":"%s","agent":"%s","index":%s,"exitCode":0}\n' "$RUN" "$agent" "$i" >"$ART/${RUN}_${agent}_${i}_meta.json"
	printf '{"type":"event"}\n' >"$ART/${RUN}_${agent}_${i}.jsonl"
done
printf 'async task\n' >"$ART/${ASYNC}_reviewer_input.md"
printf 'async result\n' >"$ART/${ASYNC}_reviewer_output.md"
printf 'another session run\n' >"$ART/otherrun_scout_input.md"
printf 'an agent file\n' >"$ART/outputs/u1/notes.md"
# A file below the family folder that is no session: shown as a child that
# is not one (session.jsonl and error), counted nowhere.
mkdir -p "$FAM/odd"
: >"$FAM/odd/empty.jsonl"
# An artifact too large to read into a reader's snapshot (sparse).
truncate -s 300M "$ART/otherrun_big_output.md"
touch -d '2026-02-01 10:05:00 UTC' "$ART/${ASYNC}_reviewer_input.md" "$ART/${ASYNC}_reviewer_output.md"
# Sessions that name the parent in their header: a /fork in the same
# project, a forkFrom copy in another (through a symlinked store path, as
# pi resolves the path it is given), and one naming another session.
mkdir -p "$STORE/--home-u-other--"
ln -s "$STORE" "$T_DIR/store-link"
sed '1s#"cwd"#"parentSession":"'"$STORE/$P/$PARENT.jsonl"'","cwd"#' "$FIX" >"$STORE/$P/2026-02-02T00-00-00-000Z_01aa0000-0000-7000-8000-000000000020.jsonl"
sed '1s#"cwd"#"parentSession":"'"$T_DIR/store-link/$P/$PARENT.jsonl"'","cwd"#' "$FIX" \
	>"$STORE/--home-u-other--/2026-02-03T00-00-00-000Z_01aa0000-0000-7000-8000-000000000021.jsonl"
sed '1s#"cwd"#"parentSession":"'"$STORE/$P/$LONE.jsonl"'","cwd"#' "$FIX" >"$STORE/$P/2026-02-04T00-00-00-000Z_01aa0000-0000-7000-8000-000000000022.jsonl"
cp -a "$STORE" "$T_DIR/store.orig"

# The same files as top-level sessions, for comparison.
FLAT=$T_DIR/flat
mkdir -p "$FLAT/$P" "$T_DIR/mnt2"
cp "$FAM/$RUN/run-0/$CHILD0.jsonl" "$FAM/forks/$FORK.jsonl" "$FLAT/$P/"
mount_fs "$FLAT" "$T_DIR/mnt2"
mount_fs "$STORE" "$MNT"
S=$MNT/$P/$PARENT
SA=$S/subagents
C0=$SA/2026-02-01T10-01-00-000Z_scout_${RUN}_0

# children/: every session that names it its parent, as links, there in
# every session but listed in none.
fsx_out ls "$S/children"
assert_eq "children/ links the sessions naming it their parent, and its forked subagent" \
	"2026-02-01T10-02-00-000Z_fork_01aa0000
2026-02-02T00-00-00-000Z_01aa0000-0000-7000-8000-000000000020
2026-02-03T00-00-00-000Z_01aa0000-0000-7000-8000-000000000021" "${OUT%$'\n'}"
fsx_out readlink "$S/children/2026-02-02T00-00-00-000Z_01aa0000-0000-7000-8000-000000000020" \
	"$S/children/2026-02-03T00-00-00-000Z_01aa0000-0000-7000-8000-000000000021" \
	"$S/children/2026-02-01T10-02-00-000Z_fork_01aa0000"
assert_eq "the links are relative, within the mount" "../../../$P/2026-02-02T00-00-00-000Z_01aa0000-0000-7000-8000-000000000020
../../../--home-u-other--/2026-02-03T00-00-00-000Z_01aa0000-0000-7000-8000-000000000021
../subagents/2026-02-01T10-02-00-000Z_fork_01aa0000" "${OUT%$'\n'}"
assert_same_bytes "$S/children/2026-02-03T00-00-00-000Z_01aa0000-0000-7000-8000-000000000021/session.jsonl" \
	"$STORE/--home-u-other--/2026-02-03T00-00-00-000Z_01aa0000-0000-7000-8000-000000000021.jsonl"
fsx_out ls "$MNT/$P/$LONE/children"
assert_eq "the other session's own child" "2026-02-04T00-00-00-000Z_01aa0000-0000-7000-8000-000000000022" "${OUT%$'\n'}"
fsx_out ls "$C0/children"
assert_eq "a session without children: children/ is empty" "" "$OUT"
assert_true "children/ is not listed" bash -c "! ls -a '$S' | grep -qx children"
assert_errno "Operation not permitted" ln -s ../0004-user.7bfd5a82.md "$S/children/new"
assert_errno "Operation not permitted" rm "$S/children/2026-02-02T00-00-00-000Z_01aa0000-0000-7000-8000-000000000020"

# SESSION/search/QUERY/: its subagents' sessions that pi's /resume query
# matches, as links; the store's search/ stays pi's (no subagent in it).
fsx_out ls "$S/search/task"
assert_eq "search/ in a session finds its subagents, nested ones too" \
	"2026-02-01T10-01-00-500Z_worker_${RUN}_1
2026-02-01T10-03-00-000Z_run_g1_0" "${OUT%$'\n'}"
fsx_out readlink "$S/search/task/2026-02-01T10-03-00-000Z_run_g1_0"
assert_eq "a hit links to the child below subagents/" \
	"../../subagents/2026-02-01T10-01-00-000Z_scout_${RUN}_0/subagents/2026-02-01T10-03-00-000Z_run_g1_0" "${OUT%$'\n'}"
assert_contains "through it, the child" "grandchild task" "$(cat "$S/search/task/2026-02-01T10-03-00-000Z_run_g1_0/transcript.md")"
fsx_out ls "$MNT/search/grandchild"
assert_eq "the store's search/ is pi's: no subagent" "" "$OUT"
assert_errno "Invalid argument" ls "$S/search/re:("
fsx_out ls "$S/search/nothing-matches-this"
assert_eq "a query without hits: empty" "" "$OUT"
assert_true "search/ is not listed in a session" bash -c "! ls -a '$S' | grep -qx search"

# by-id/ and by-name/ resolve a subagent's session (listed in neither).
fsx_out readlink "$MNT/by-id/01aa0000-0000-7000-8000-000000000013" "$MNT/by-name/worker: second"
assert_eq "by-id/ and by-name/ lead to a subagent's session" \
	"../$P/$PARENT/subagents/2026-02-01T10-01-00-000Z_scout_${RUN}_0/subagents/2026-02-01T10-03-00-000Z_run_g1_0
../$P/$PARENT/subagents/2026-02-01T10-01-00-500Z_worker_${RUN}_1" "${OUT%$'\n'}"
assert_errno "No such file or directory" stat "$MNT/by-id/01aa0000-0000-7000-8000-00000000001"
assert_same_bytes "$MNT/by-id/01aa0000-0000-7000-8000-000000000011/session.jsonl" "$FAM/$RUN/run-1/$CHILD1.jsonl"
assert_true "by-id/ lists no subagent" bash -c "! ls '$MNT/by-id' | grep -q 01aa0000-0000-7000-8000-000000000011"

# The project lists its sessions only, as before; a session without a
# family lists no subagents.
fsx_out ls "$MNT/$P"
assert_eq "the project folder lists its sessions, and the artifacts' folder, no family folder" \
	"$LONE
$PARENT
2026-02-02T00-00-00-000Z_01aa0000-0000-7000-8000-000000000020
2026-02-04T00-00-00-000Z_01aa0000-0000-7000-8000-000000000022
search
sessions.md
subagent-artifacts
usage-daily-models.csv
usage-daily.csv
usage-monthly.csv
usage.csv
usage.svg" "${OUT%$'\n'}"
# PROJECT/subagent-artifacts/: every artifact as the store keeps it, those
# of runs that match no run folder (another session's here) too; read-only.
assert_same_bytes "$MNT/$P/subagent-artifacts/otherrun_scout_input.md" "$ART/otherrun_scout_input.md"
assert_same_bytes "$MNT/$P/subagent-artifacts/outputs/u1/notes.md" "$ART/outputs/u1/notes.md"
fsx_out bash -c "ls '$MNT/$P/subagent-artifacts' | wc -l"
assert_eq "subagent-artifacts/ lists the store's folder" "$(ls "$ART" | wc -l)" "${OUT%$'\n'}"
assert_errno "Operation not permitted" touch "$MNT/$P/subagent-artifacts/new.md"
assert_errno "Operation not permitted" rm "$MNT/$P/subagent-artifacts/otherrun_scout_input.md"
assert_errno "Operation not permitted" bash -c "echo x >> '$MNT/$P/subagent-artifacts/otherrun_scout_input.md'"
assert_errno "No such file or directory" ls "$MNT/--home-u-other--/subagent-artifacts"
assert_errno "File too large" cat "$MNT/$P/subagent-artifacts/otherrun_big_output.md"
fsx_out cat "$MNT/.pisessionfs/log"
assert_contains "an artifact too large to read says so in the log" "over the 256 MiB an artifact may have here" "$OUT"
fsx_out ls "$SA/odd_empty"
assert_eq "a file that is no session: session.jsonl and error" "error
session.jsonl" "${OUT%$'\n'}"
fsx_out ls "$MNT/$P/$LONE"
assert_true "a session without a family lists no subagents" bash -c "! ls '$MNT/$P/$LONE' | grep -qx subagents"
assert_errno "No such file or directory" ls "$MNT/$P/$LONE/subagents"
fsx_out ls "$S"
assert_contains "the parent lists subagents" "subagents" "$OUT"

fsx_out ls "$SA"
assert_eq "subagents/: runs in start order, named by start, agent, run id and index, artifacts beside" \
	"2026-02-01T10-01-00-000Z_scout_${RUN}_0
2026-02-01T10-01-00-000Z_scout_${RUN}_0.input.md
2026-02-01T10-01-00-000Z_scout_${RUN}_0.meta.json
2026-02-01T10-01-00-000Z_scout_${RUN}_0.output.md
2026-02-01T10-01-00-500Z_worker_${RUN}_1
2026-02-01T10-01-00-500Z_worker_${RUN}_1.input.md
2026-02-01T10-01-00-500Z_worker_${RUN}_1.meta.json
2026-02-01T10-01-00-500Z_worker_${RUN}_1.output.md
2026-02-01T10-02-00-000Z_fork_01aa0000
2026-02-01T10-05-00-000Z_reviewer_${ASYNC}_0.input.md
2026-02-01T10-05-00-000Z_reviewer_${ASYNC}_0.output.md
odd_empty" "${OUT%$'\n'}"
assert_same_bytes "$C0.output.md" "$ART/${RUN}_scout_0_output.md"
assert_same_bytes "$SA/2026-02-01T10-01-00-500Z_worker_${RUN}_1.meta.json" "$ART/${RUN}_worker_1_meta.json"
assert_same_bytes "$SA/2026-02-01T10-05-00-000Z_reviewer_${ASYNC}_0.output.md" "$ART/${ASYNC}_reviewer_output.md"
fsx_out stat -c '%F %a' "$SA" "$C0.output.md"
assert_eq "subagents/ and the artifacts are read-only" "directory 555
regular file 444" "${OUT%$'\n'}"

# A child is the same tree as its file mounted top-level, file for file.
for pair in "$C0:$T_DIR/mnt2/$P/$CHILD0" "$SA/2026-02-01T10-02-00-000Z_fork_01aa0000:$T_DIR/mnt2/$P/$FORK"; do
	child=${pair%%:*} top=${pair#*:}
	fsx_out ls -R "$top"
	want=$OUT
	# (the first child has a subagent of its own: its subagents/ aside)
	fsx_out ls -R --ignore=subagents "$child"
	assert_eq "${child##*/}: the same names as a top-level session (ls -R)" \
		"$(sed "s#^$top#X#" <<<"$want")" "$(sed "s#^$child#X#" <<<"$OUT")"
	for f in context.json transcript.md tree.txt header.json session.jsonl name; do
		assert_same_bytes "$child/$f" "$top/$f"
	done
	assert_eq "${child##*/}: its own usage is a top-level session's" "$(jq -c .total "$top/usage.json")" \
		"$(jq -c .total "$child/usage.json")"
done
assert_same_bytes "$SA/2026-02-01T10-02-00-000Z_fork_01aa0000/usage.json" "$T_DIR/mnt2/$P/$FORK/usage.json"

# usage.json: its own, its subagents' (every child below it, the
# grandchild too) and the total with them; a session without any as before.
fsx_out jq -c '[.total.cost, .subagents.sessions, .subagents.total.cost, .withSubagents.cost]' "$S/usage.json"
assert_eq "a parent's usage.json adds its subagents'" "[0.00021,4,0.00021,0.00042]" "${OUT%$'\n'}"
fsx_out jq -c 'keys' "$MNT/$P/$LONE/usage.json"
assert_eq "a session without subagents: usage.json as before" \
	'["assistantMessages","byModel","messages","total"]' "${OUT%$'\n'}"
fsx_out jq -c '[.subagents.sessions, (.withSubagents.cost == .total.cost)]' "$C0/usage.json"
assert_eq "a child with a subagent of its own" "[1,true]" "${OUT%$'\n'}"
# The store's usage files: each child a row of its own, named under its parent.
fsx_out bash -c "cut -d, -f2 '$MNT/usage.csv' | sort"
assert_eq "usage.csv: a row per session file, children under their parent" "$(sort <<<"2026-02-02T00-00-00-000Z_01aa0000-0000-7000-8000-000000000020
2026-02-03T00-00-00-000Z_01aa0000-0000-7000-8000-000000000021
2026-02-04T00-00-00-000Z_01aa0000-0000-7000-8000-000000000022
$LONE
$PARENT
$PARENT/subagents/2026-02-01T10-01-00-000Z_scout_${RUN}_0
$PARENT/subagents/2026-02-01T10-01-00-000Z_scout_${RUN}_0/subagents/2026-02-01T10-03-00-000Z_run_g1_0
$PARENT/subagents/2026-02-01T10-01-00-500Z_worker_${RUN}_1
$PARENT/subagents/2026-02-01T10-02-00-000Z_fork_01aa0000
session")" "${OUT%$'\n'}"
fsx_out grep -c "(4 subagent sessions: \$0.00 in all)" "$MNT/sessions.md"
assert_eq "sessions.md: pi's rows, the parent's with its subagents" "1" "${OUT%$'\n'}"
fsx_out grep -c '^| ' "$MNT/sessions.md"
assert_eq "sessions.md: pi's five sessions (and the table's two header lines)" "7" "${OUT%$'\n'}"
fsx_out readlink "$C0/leaf"
assert_eq "a child's leaf link" "0004-assistant.aaaa0004.md" "${OUT%$'\n'}"
# The child's own subagent.
fsx_out ls "$C0/subagents"
assert_eq "a subagent's own subagents nest" "2026-02-01T10-03-00-000Z_run_g1_0" "${OUT%$'\n'}"
assert_contains "a grandchild's entries" "grandchild task" "$(cat "$C0/subagents/2026-02-01T10-03-00-000Z_run_g1_0/transcript.md")"

# grep -r of the parent reaches its children's entries and outputs.
fsx_out grep -rl zebra-quartz "$S"
assert_contains "grep -r finds a run's output" "$C0.output.md" "$OUT"
fsx_out grep -rl "second child task" "$S"
assert_contains "grep -r finds a child's entry" "worker_${RUN}_1/0001-user.bbbb0001.md" "$OUT"

# Refusals: nothing below subagents/ but a child's own files takes a write.
assert_errno "Operation not permitted" mkdir "$SA/new"
assert_errno "Operation not permitted" touch "$SA/new.md"
assert_errno "Operation not permitted" rm "$C0.input.md"
assert_errno "Operation not permitted" rmdir "$C0"
assert_errno "Operation not permitted" mv "$C0.output.md" "$SA/renamed.md"
assert_errno "Operation not permitted" bash -c "echo x > '$C0.output.md'"
assert_errno "Operation not permitted" rm -r "$C0"
assert_true "the store is as it was" diff -r "$T_DIR/store.orig" "$STORE"
fsx_out cat "$MNT/.pisessionfs/log"
assert_contains "a refusal is logged" "refused making $MNT/$P/$PARENT/subagents/new" "$OUT"
assert_contains "and says why" "a subagent's run goes with the session that started it" "$OUT"

# A child takes writes as any session: a new message lands in its file only.
write_close "$C0/next.md" "hello from the mount"
assert_eq "a new message in a child is committed" closed "${OUT%$'\n'}"
assert_contains "it is appended to the child's file" '"content":"hello from the mount"' \
	"$(tail -n 1 "$FAM/$RUN/run-0/$CHILD0.jsonl")"
assert_same_bytes "$STORE/$P/$PARENT.jsonl" "$T_DIR/store.orig/$P/$PARENT.jsonl"
assert_poll "the new message is listed in the child" 5 bash -c "ls '$C0' | grep -q '^0005-user\\.'"
# A run in progress: its child appends, and the kernel is told as for a
# session of the store's own (the sizes it keeps for the attribute
# timeout, 10 s, follow within the poll's 2 s).
fsx stat -c %s "$C0/session.jsonl" "$C0/transcript.md" "$S/usage.json" >/dev/null
size_before=$(stat -c %s "$C0/session.jsonl")
usage_before=$(stat -c %s "$S/usage.json")
last=$(tail -n 1 "$FAM/$RUN/run-0/$CHILD0.jsonl" | sed 's/.*"id":"\([^"]*\)".*/\1/')
asst_msg aaaa0009 "$last" "progress" | sed 's/"total":0}/"total":0.123456789}/' >>"$FAM/$RUN/run-0/$CHILD0.jsonl"
assert_poll "a child's append: its size follows" 2 bash -c 'size_is_not "$1" "$2"' _ "$C0/session.jsonl" "$size_before"
assert_poll "a child's append: the parent's usage.json size follows" 2 bash -c 'size_is_not "$1" "$2"' _ "$S/usage.json" "$usage_before"
assert_size "$C0/transcript.md"
assert_poll "a child's append shows" 2 bash -c "ls '$C0' | grep -q '^0006-assistant\\.aaaa0009'"
# A new run appears, and grows.
mkdir -p "$FAM/newrun/run-0"
NEW=$FAM/newrun/run-0/2026-02-01T11-00-00-000Z_01aa0000-0000-7000-8000-000000000014.jsonl
{ header 3 01aa0000-0000-7000-8000-000000000014; user_msg dddd0001 null "late"; } >"$NEW"
assert_poll "a new run shows" 2 bash -c "ls '$SA' | grep -qx '2026-02-01T11-00-00-000Z_run_newrun_0'"
size_before=$(stat -c %s "$SA/2026-02-01T11-00-00-000Z_run_newrun_0/session.jsonl")
asst_msg dddd0002 dddd0001 "later" >>"$NEW"
assert_poll "a new run's append: its size follows" 2 bash -c 'size_is_not "$1" "$2"' _ \
	"$SA/2026-02-01T11-00-00-000Z_run_newrun_0/session.jsonl" "$size_before"

# A fork of the parent (ln -s ENTRY PROJECT/NAME) forks the parent only:
# a new file in the project, nothing in the family folder, no subagents.
find "$FAM" "$ART" -printf '%P %s\n' | sort >"$T_DIR/family.before"
fsx_out ln -s "$S/0004-user.7bfd5a82.md" "$MNT/$P/forked-parent"
assert_eq "ln -s forks the parent" "0 " "$RC $ERR"
assert_true "the fork has no subagents" bash -c "! ls '$MNT/$P/forked-parent/' | grep -qx subagents"
find "$FAM" "$ART" -printf '%P %s\n' | sort >"$T_DIR/family.after"
assert_same_bytes "$T_DIR/family.after" "$T_DIR/family.before"
fsx_out ls "$S/children"
assert_contains "the fork is the parent's child" "$(readlink "$MNT/$P/forked-parent" | sed 's#.*/##')" "$OUT"

# rm -r of the parent: the parent, its family folder and its runs'
# artifacts go to the trash; the other session and another run's stay.
cp "$FAM/$RUN/run-0/$CHILD0.jsonl" "$T_DIR/child0.now"
fsx_out rm -r "$S"
assert_eq "rm -r of a parent exits 0, quietly" "0 " "$RC $ERR"
assert_missing "$STORE/$P/$PARENT.jsonl"
assert_missing "$FAM"
assert_missing "$ART/${RUN}_scout_0_output.md"
assert_missing "$ART/${ASYNC}_reviewer_input.md"
assert_missing "$ART/${RUN}_scout_0.jsonl"
assert_exists "$ART/otherrun_scout_input.md"
assert_exists "$ART/outputs/u1/notes.md"
assert_exists "$STORE/$P/$LONE.jsonl"
assert_same_bytes "$TRASH/files/$PARENT.jsonl" "$T_DIR/store.orig/$P/$PARENT.jsonl"
assert_same_bytes "$TRASH/files/$PARENT/$RUN/run-0/$CHILD0.jsonl" "$T_DIR/child0.now"
assert_same_bytes "$TRASH/files/${RUN}_scout_0_output.md" "$T_DIR/store.orig/$P/subagent-artifacts/${RUN}_scout_0_output.md"
assert_contains "the folder's info file names where it was" "Path=$FAM" "$(cat "$TRASH/info/$PARENT.trashinfo")"
fsx_out cat "$MNT/.pisessionfs/log"
assert_contains "the log says what went with it" "moved to the trash with it" "$OUT"

# trash-restore of the session file brings its runs back with it: the
# folder and the artifacts, byte for byte, and subagents/ lists them again.
(cd "$T_DIR" && echo 0 | trash_cli trash-restore "$STORE/$P/$PARENT.jsonl" >/dev/null 2>&1)
assert_poll "the family folder comes back with the session" 5 test -f "$FAM/$RUN/run-0/$CHILD0.jsonl"
assert_poll "and its runs' artifacts" 5 test -f "$ART/${ASYNC}_reviewer_input.md"
assert_same_bytes "$ART/${RUN}_worker_1.jsonl" "$T_DIR/store.orig/$P/subagent-artifacts/${RUN}_worker_1.jsonl"
assert_same_bytes "$FAM/$RUN/run-0/$CHILD0.jsonl" "$T_DIR/child0.now"
assert_same_bytes "$ART/${RUN}_scout_0_output.md" "$T_DIR/store.orig/$P/subagent-artifacts/${RUN}_scout_0_output.md"
assert_missing "$TRASH/info/$PARENT.trashinfo"
assert_missing "$TRASH/files/${RUN}_scout_0_output.md"
assert_poll "subagents/ lists the runs again" 5 test -f "$S/subagents/2026-02-01T10-01-00-000Z_scout_${RUN}_0.output.md"
fsx_out cat "$MNT/.pisessionfs/log"
assert_contains "the log says what came back" "came back from the trash with it" "$OUT"

umount_fs "$T_DIR/mnt2"
finish
