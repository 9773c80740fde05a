#!/usr/bin/env bash
# The tree of a real pi 1.6.0 session (branched, labelled, named), as
# docs/layout.md describes it, read through a real mount.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

FIX=$(cd "$(dirname "$0")/../data/fixtures" && pwd)/pi-1.6.0-v3-branched.jsonl
PROJ=--home-user-demo-project--
SNAME=2026-11-29T19-11-30-970Z_01a228b8-3699-77d4-8ab4-6586c2fad309
mkdir -p "$STORE/$PROJ"
SRC=$STORE/$PROJ/$SNAME.jsonl
cp "$FIX" "$SRC"
chmod 644 "$SRC"
cp "$SRC" "$T_DIR/orig.jsonl"

mount_fs "$STORE" "$MNT"
S=$MNT/$PROJ/$SNAME
B=$S/0008~c34de545

# --- listings ---------------------------------------------------------------
assert_eq "ls of the mount root" "$PROJ
.pisessionfs
by-cwd
by-id
by-name
recent
search
sessions.md
usage-daily-models.csv
usage-daily.csv
usage-monthly.csv
usage.csv
usage.svg" "$(ls_names "$MNT")"
assert_eq "ls of .pisessionfs" "log
rejected" "$(ls_names "$MNT/.pisessionfs")"
assert_file_content "$MNT/.pisessionfs/log" ""
assert_eq "ls of the project" "$SNAME
search
sessions.md
usage-daily-models.csv
usage-daily.csv
usage-monthly.csv
usage.csv
usage.svg" "$(ls_names "$MNT/$PROJ")"

expected_root='0001-model_change.5862b5cb.md
0002-thinking_level_change.5e5a4449.md
0003-system.b5b34113.md
0004-user.7bfd5a82.md
0005-assistant.8a6d4fb1.md
0006-toolResult-bash.128263f4.md
0007-assistant.9977f973.md
0008-user.3ecbb500.md
0008~c34de545
0009-assistant.2fca4b92.md
0010-label.40e11ef7.md
0011-session_info.433cdfbc.md
context.json
header.json
labels
leaf
loadout.json
name
problems
session.jsonl
transcript.md
tree.txt
usage.json'
assert_eq "ls of the session directory" "$expected_root" "$(ls_names "$S")"

expected_branch='0008-user.c34de545.md
0009-assistant.b037ea6e.md
context.json'
assert_eq "ls of the branch directory" "$expected_branch" "$(ls_names "$B")"

ids=(5862b5cb 5e5a4449 b5b34113 7bfd5a82 8a6d4fb1 128263f4 9977f973 3ecbb500 2fca4b92 40e11ef7 433cdfbc c34de545 b037ea6e)
expected_entries=$(printf '%s.json\n' "${ids[@]}" | sort)
assert_eq "ls of entries/" "$expected_entries" "$(ls_names "$S/entries")"
assert_eq "ls of labels/" "first-question" "$(ls_names "$S/labels")"

# ls -F shows kinds: directories, symlinks, plain files.
fsx_out ls -AF "$S"
assert_contains "ls -F marks the branch a directory" "0008~c34de545/" "$OUT"
assert_contains "ls -F marks leaf a symlink" "leaf@" "$OUT"
assert_eq "entries/ is not listed (docs/layout.md: what a recursive walk sees)" "" "$(grep -x 'entries/' <<<"$OUT" || true)"
fsx_out ls -dF "$S/entries"
assert_eq "ls -dF marks entries/ a directory" "$S/entries/" "${OUT%$'\n'}"

# --- symlinks -----------------------------------------------------------------
fsx_out readlink "$S/leaf"
assert_eq "readlink leaf" "0008~c34de545/0009-assistant.b037ea6e.md" "${OUT%$'\n'}"
assert_same_bytes "$S/leaf" "$B/0009-assistant.b037ea6e.md"
fsx_out readlink "$S/labels/first-question"
assert_eq "readlink labels/first-question" "../0004-user.7bfd5a82.md" "${OUT%$'\n'}"
assert_same_bytes "$S/labels/first-question" "$S/0004-user.7bfd5a82.md"
assert_errno "Invalid argument" readlink -v "$S/name"

# --- small files --------------------------------------------------------------
assert_file_content "$S/name" $'List files demo\n'
assert_file_content "$S/problems" ""
assert_missing "$S/error"
assert_json "$S/header.json"
fsx cat "$S/header.json" >"$T_DIR/header.json"
head -1 "$SRC" >"$T_DIR/header.line"
if python3 - "$T_DIR/header.json" "$T_DIR/header.line" <<'EOF'
import json, sys
a = json.load(open(sys.argv[1]))
b = json.loads(open(sys.argv[2]).read())
sys.exit(0 if a == b and list(a) == list(b) else 1)
EOF
then pass; else fail "header.json is not the header line (same keys, same order, same values)"; fi
assert_eq "header.json ends with a newline" "}" "$(tail -c 2 "$T_DIR/header.json" | head -c 1)"

# entries/<id>.json: the exact stored line, with its newline.
for id in "${ids[@]}"; do
	n=$(grep -n "\"id\":\"$id\"" "$SRC" | head -1 | cut -d: -f1)
	line_of "$SRC" "$n" >"$T_DIR/want.line"
	fsx cat "$S/entries/$id.json" >"$T_DIR/got.line" 2>&1 || true
	if cmp -s "$T_DIR/want.line" "$T_DIR/got.line"; then pass; else fail "entries/$id.json is not line $n of the file"; fi
done

assert_same_bytes "$S/session.jsonl" "$SRC"

# context.json: parses, two-space pretty printing, final newline, the leaf's
# context at the root, and the same at the branch tip (the leaf is there).
assert_json "$S/context.json"
assert_json "$B/context.json"
assert_same_bytes "$S/context.json" "$B/context.json"
fsx cat "$S/context.json" >"$T_DIR/ctx.json"
assert_eq "context.json final newline" "1" "$(tail -c 1 "$T_DIR/ctx.json" | wc -l)"
assert_eq "context.json two-space indent" '  "messages": [' "$(sed -n 2p "$T_DIR/ctx.json")"
roles=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sorted(d), d["thinkingLevel"], d["model"]["provider"], d["model"]["modelId"])
print(" ".join(m["role"] for m in d["messages"]))
print(d["messages"][-2]["content"][0]["text"])' "$T_DIR/ctx.json" 2>&1) || true
assert_eq "context.json summary" "['messages', 'model', 'thinkingLevel'] off fake fake-1
system user assistant toolResult assistant user assistant
thanks, now summarize the output in one line" "$roles"

# Entry files: front matter and body.
fsx_out cat "$S/0004-user.7bfd5a82.md"
assert_contains "user entry front matter" $'type: message\nid: 7bfd5a82\nparentId: b5b34113\n' "$OUT"
assert_contains "user entry text" $'---\nplease run a command to list files\n' "$OUT"

fsx cat "$S/0004-user.7bfd5a82.md" >"$T_DIR/0004.md"

# --- grep -r ------------------------------------------------------------------
fsx_out grep -rl --include='*.md' --exclude=transcript.md "please run a command to list files" "$S"
assert_eq "grep -r finds the first question in one entry file" "$S/0004-user.7bfd5a82.md" "${OUT%$'\n'}"
fsx_out grep -rl --include='*.md' --exclude=transcript.md --exclude-dir=by-id --exclude-dir=by-name --exclude-dir=by-cwd --exclude-dir=recent "thanks, now summarize the output in one line" "$MNT"
assert_eq "grep -r over the mount finds the branch question" "$B/0008-user.c34de545.md" "${OUT%$'\n'}"
fsx_out grep -rl --include='*.md' --exclude=transcript.md "thanks, now explain the output" "$S"
assert_eq "grep -r finds the quoted question in both files" "$S/0008-user.3ecbb500.md
$S/0009-assistant.2fca4b92.md" "$(sort <<<"${OUT%$'\n'}")"
fsx_out grep -rl "please run a command to list files" "$MNT"
assert_eq "grep -r over everything" "$(printf '%s\n' "$B/context.json" "$S/0004-user.7bfd5a82.md" \
	"$S/context.json" "$S/session.jsonl" "$S/transcript.md" "$S/tree.txt" | sort)" "$(sort <<<"${OUT%$'\n'}")"

# --- find -----------------------------------------------------------------------
fsx_out find "$MNT"
if ((RC == 0)); then pass; else fail "find over the mount failed ($RC): $ERR"; fi
printf '%s' "$OUT" >"$T_DIR/find.txt"
for id in "${ids[@]}"; do
	assert_eq "find: entry file of $id" 1 "$(grep -c "\.$id\.md\$" "$T_DIR/find.txt" || true)"
	assert_eq "find: no entries/$id.json" 0 "$(grep -c "/entries/$id\.json\$" "$T_DIR/find.txt" || true)"
done
assert_eq "find: number of .md files (entries, the session's transcript, two sessions.md)" "$((${#ids[@]} + 3))" "$(grep -c '\.md$' "$T_DIR/find.txt" || true)"
# root, project, session, 13 entry files, the branch and its context.json
# (its transcript.md and entries/ answer by name only), 11 generated names
# in the session, 1 label, .pisessionfs with log and rejected/, the 4 views with the
# session's link in by-id and recent and 6 nested by-cwd names (by-cwd/home/
# user/demo-project/<session>), the two usage.csv, the two sessions.md, the
# two of each usage-over-time file (usage-daily.csv, usage-monthly.csv,
# usage-daily-models.csv, usage.svg) and
# the two search/ directories (empty until a query is named).
assert_eq "find: number of paths" 58 "$(wc -l <"$T_DIR/find.txt")"
fsx_out find -L "$S" -type l
assert_eq "find -L: every symlink resolves" "" "$OUT"

# --- sizes: ls -l / stat must agree with what cat returns -----------------------
while IFS= read -r -d '' f; do
	size=$(fsx stat -c %s "$f")
	bytes=$(fsx cat "$f" | wc -c)
	assert_eq "st_size of ${f#"$MNT"/} equals its content length" "$bytes" "$size"
done < <(fsx find "$MNT" "$S/entries" "$B/transcript.md" -type f -print0)
while IFS= read -r -d '' f; do
	size=$(fsx stat -c %s "$f")
	target=$(fsx readlink "$f")
	assert_eq "st_size of symlink ${f#"$MNT"/} equals its target length" "${#target}" "$size"
done < <(fsx find "$MNT" -type l -print0)
# The same through ls -l (what people look at), directory by directory.
for d in "$S" "$B" "$S/entries"; do
	fsx_out ls -ln "$d"
	bad=()
	n=0
	while read -r mode _ _ _ size _ _ _ name; do
		[[ $mode == -* ]] || continue
		n=$((n + 1))
		bytes=$(fsx cat "$d/$name" | wc -c)
		[[ $size == "$bytes" ]] || bad+=("$name: ls -l $size, wc -c $bytes")
	done <<<"$OUT"
	assert_eq "ls -l sizes in ${d#"$MNT"/}" "" "${bad[*]}"
	((n >= 3)) || fail "ls -l of ${d#"$MNT"/} showed only $n files"
done

# --- stat of directories --------------------------------------------------------
# Tree directories and labels/ take the session file's write bit (the
# session file is 644 here); the store's levels have the store directories'
# own modes (755 here: mkdir there starts a session), entries/ is read-only.
declare -A dmode=(["$MNT"]=$(stat -c %a "$STORE") ["$MNT/$PROJ"]=$(stat -c %a "$STORE/$PROJ") ["$S"]=755 ["$B"]=755 ["$S/entries"]=555 ["$S/labels"]=755)
for d in "$MNT" "$MNT/$PROJ" "$S" "$B" "$S/entries" "$S/labels"; do
	fsx_out stat -c '%F %a %h' "$d"
	assert_eq "stat of ${d#"$MNT"}/" "directory ${dmode[$d]}" "$(cut -d' ' -f1,2 <<<"${OUT%$'\n'}")"
	nlink=$(cut -d' ' -f3 <<<"${OUT%$'\n'}")
	if [[ $nlink =~ ^[0-9]+$ ]] && ((nlink >= 1)); then pass; else fail "nlink of $d: $nlink"; fi
done
fsx_out stat -c '%F %a %s' "$S/name"
assert_eq "stat of a file (the session file's mode)" "regular file 644 16" "${OUT%$'\n'}"
fsx_out stat -c '%F' "$S/leaf"
assert_eq "stat of leaf" "symbolic link" "${OUT%$'\n'}"
# Owner and times of the generated files come from the session file.
assert_eq "mtime of the session directory is the file's" "$(stat -c %Y "$SRC")" "$(fsx stat -c %Y "$S")"
# An entry file's mtime is the entry's own timestamp (it never changes).
assert_eq "mtime of an entry file is its entry's timestamp" "$(date -d 2026-11-29T19:11:31.067Z +%s)" \
	"$(fsx stat -c %Y "$S/0004-user.7bfd5a82.md")"

# --- errors -----------------------------------------------------------------------
assert_errno "Is a directory" cat "$S"
assert_errno "Is a directory" cat "$B"
assert_errno "Is a directory" cat "$S/entries"
assert_errno "Is a directory" cat "$MNT/$PROJ"
assert_errno "Not a directory" ls "$S/name/x"
assert_missing "$S/0004-user.00000000.md"
assert_missing "$S/0008~00000000"
assert_missing "$S/entries/00000000.json"
assert_missing "$S/labels/no-such-label"
assert_missing "$MNT/$PROJ/no-such-session"
assert_missing "$MNT/no-such-project"
# The session directory's file cannot be reached under another name.
assert_missing "$MNT/$PROJ/$SNAME.jsonl"

# --- refused writes change nothing -------------------------------------------------
# docs/layout.md "Refusals": history is append-only, generated files are
# generated.  Each of these must fail with the documented errno and leave
# the session file byte-identical.  (Writes that become entries are not
# layout; they are not tried here.)
# refused ERRNO-MESSAGE CMD...
refused() {
	local msg=$1
	shift
	assert_errno "$msg" "$@"
}
# shellcheck disable=SC2016 # $1 is the inner shell's argument
{
	refused "Operation not permitted" truncate -s 0 "$S/session.jsonl"
	refused "Invalid argument" bash -c 'printf "not json\n" | tee -a "$1" >/dev/null' _ "$S/session.jsonl"
	refused "Operation not permitted" rm -f "$S/0004-user.7bfd5a82.md"
	# onto another entry (to any other name, an entry is put aside:
	# docs/layout.md, "Editors' side files")
	refused "Operation not permitted" mv "$S/0004-user.7bfd5a82.md" "$S/0005-assistant.8a6d4fb1.md"
	refused "Operation not permitted" rmdir "$B"
	refused "Operation not permitted" chmod 777 "$S/0004-user.7bfd5a82.md"
	for f in context.json header.json entries/7bfd5a82.json problems tree.txt 0008~c34de545/context.json; do
		refused "Operation not permitted" bash -c 'printf "x\n" | tee "$1" >/dev/null' _ "$S/$f"
	done
	# a text alone replaces an entry's text (docs/entry-format.md), but a
	# model_change has none: refused
	refused "Invalid argument" bash -c 'printf "no front matter\n" | tee "$1" >/dev/null' _ "$S/0001-model_change.5862b5cb.md"
	refused "Invalid argument" bash -c ': | tee "$1" >/dev/null' _ "$S/0005-assistant.8a6d4fb1.md"
}
assert_fails rm -rf "$B"
assert_fails rm -f "$S/leaf"
assert_fails mkdir "$MNT/newproject"
assert_fails mkdir "$S/newdir"
assert_exists "$B/0008-user.c34de545.md"
assert_exists "$S/0004-user.7bfd5a82.md"
assert_exists "$S/leaf"
assert_missing "$S/0004-user.moved.md"
assert_missing "$MNT/newproject"
assert_missing "$S/newdir"
assert_same_bytes "$SRC" "$T_DIR/orig.jsonl"
assert_same_bytes "$S/session.jsonl" "$T_DIR/orig.jsonl"
assert_eq "the store is unchanged" "$SNAME.jsonl" "$(ls -A "$STORE/$PROJ")"
assert_eq "after the refusals: the same session directory" "$expected_root" "$(ls_names "$S")"
assert_same_bytes "$S/0004-user.7bfd5a82.md" "$T_DIR/0004.md"
assert_eq "after the refusals: no problems" "" "$(fsx cat "$S/problems")"
# Each refusal is logged (daemon stderr and .pisessionfs/log); the texts of
# refused content are kept in .pisessionfs/rejected.
fsx_out cat "$MNT/.pisessionfs/log"
assert_contains "the log names a refused rename" "refused renaming $S/0004-user.7bfd5a82.md" "$OUT"
assert_contains "the log names the refused append" "refused $S/session.jsonl" "$OUT"
assert_eq "rejected/ keeps the refused texts" "3" "$(ls_names "$MNT/.pisessionfs/rejected" | grep -c .)"
fsx_out grep -rl "not json" "$MNT/.pisessionfs/rejected"
assert_ne "rejected/ has the refused append" "" "$OUT"

finish
