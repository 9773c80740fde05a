#!/usr/bin/env bash
# Editors and tools saving an entry file on a real mount (docs/layout.md,
# "Editors' side files"; /work/shared/notes/editor-saves.md): vim (swap
# files, backupcopy=auto and =yes), nano (plain, and with --backup
# --locking), emacs in batch mode (backups, lock link, auto-save), sed -i,
# and the saves by rename of issue 11 item 12: nvim, perl -i, Python's
# atomic saves (mkstemp + os.replace, NamedTemporaryFile(suffix=".md")),
# gio save, JetBrains' safe write, rsync, Node's fs.writeFile, sed -i.orig.
# Each save must append exactly one entry (a sibling of the edited entry
# with the edited text), no side file may reach the session file, the mount
# must list nothing stray afterwards (only what the editor leaves by
# design), and the daemon must refuse nothing.  strace shows that the
# interesting paths (4913 probe, rename to f~, O_EXCL backups) are taken.
# Last, refused saves (a changed role): what vim, nano, emacs --batch and
# sed -i say, as docs/layout.md quotes it, and that nothing is lost.
# shellcheck disable=SC2016 # 'bash -c' scripts get their arguments as $1...
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

# The interpreter itself, not a version manager's shim (which costs 0.2 s a
# call).
PY=$(python3 -c 'import sys; print(sys.executable)')

PROJ=--home-u-w--
mkdir -p "$STORE/$PROJ"

# --- helpers of the write tests ---------------------------------------------

# aaaa0001 user "alpha one", aaaa0002 assistant, aaaa0003 user "alpha two"
# (the entry every editor edits), aaaa0004 assistant.
mksession() {
	local f=$STORE/$PROJ/$1.jsonl
	{
		header
		alpha_turns
	} >"$f"
	chmod 644 "$f"
}

# Checks the lines appended to a session file since `mark`, against a JSON
# array of expected entries.  Every field must be there with that value and
# no other field (deep, types included), and placeholders stand for values
# the daemon makes: "@id" a fresh 8-hex id (not in the file before, not
# repeated), "@ts" an ISO timestamp (ms, Z) within 5 minutes of now, "@ms"
# Unix ms within 5 minutes of now, "@int" any integer, "@newN" the id of
# appended line N (0-based).  Each appended line starts with type, id,
# parentId, timestamp (pi's order).  Prints the new ids.
cp "$(dirname "$0")/check_append.py" "$T_DIR/check.py"

# mark FILE: remembers the session file's lines and sha256 and the log's
# length.
mark() {
	MARK_FILE=$1
	MARK_LINES=$(wc -l <"$1")
	MARK_SHA=$(sha256sum <"$1")
	MARK_LOG=$(fsx cat "$MNT/.pisessionfs/log" | wc -l)
}

# expect_new WHAT JSON-ARRAY: the lines appended since mark are these
# entries (check.py); NEW_IDS gets their ids.
expect_new() {
	local out
	NEW_IDS=()
	if out=$("$PY" -I -S "$T_DIR/check.py" "$MARK_FILE" "$MARK_LINES" "$2" 2>&1); then
		pass
		read -r -a NEW_IDS <<<"$out"
	else
		fail "$1: $out"
	fi
}

# expect_no_refusal WHAT: no "refused" line in the log since mark.
expect_no_refusal() {
	local new
	new=$(fsx cat "$MNT/.pisessionfs/log" | tail -n +$((MARK_LOG + 1)) | grep refused || true)
	assert_eq "$1: no refusal in the log" "" "$new"
}

# need PACKAGE COMMAND: installs PACKAGE when COMMAND is missing; a
# missing editor fails the test (it is promised), it does not skip it.
need() {
	command -v "$2" >/dev/null && return 0
	timeout 600 apt-get install -y "$1" >"$T_DIR/apt.log" 2>&1 || true
	command -v "$2" >/dev/null && return 0
	fail "$2 is missing and apt-get install $1 failed: $(tail -3 "$T_DIR/apt.log")"
	return 1
}

# A private tmux server for nano, killed however the test ends.
TMUX_SOCK=psfs-$$
# shellcheck disable=SC2317 # called from the EXIT trap
return_rc() { return "$1"; }
# shellcheck disable=SC2317
editors_cleanup() {
	local rc=$?
	tmux -L "$TMUX_SOCK" kill-server >/dev/null 2>&1 || true
	if return_rc "$rc"; then cleanup; else cleanup; fi
}
trap editors_cleanup EXIT

# Every editor edits 0003-user.aaaa0003.md ("alpha two") of its own session.
E=0003-user.aaaa0003.md
# start SESSION: mksession was done before mounting; sets S, F, the
# listing before, the original entry file, and marks.
start() {
	SESS=$1
	S=$MNT/$PROJ/$SESS
	F=$STORE/$PROJ/$SESS.jsonl
	BEFORE_LS=$(ls_names "$S")
	fsx cat "$S/$E" >"$T_DIR/$SESS.orig"
	mark "$F"
}

# saved WHAT TEXT [LEFT...]: after an editor saved: exactly one sibling of
# aaaa0003 holding TEXT (a JSON string) was appended; the session file has
# no side-file artefact; the mount lists what it listed before plus the new
# branch plus LEFT (files the editor leaves by design); the original entry
# file is unchanged; the new entry file shows the text; nothing was refused.
saved() {
	local what=$1 text=$2
	shift 2
	expect_new "$what: one sibling entry with the edited text" \
		"[{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"aaaa0002\",\"timestamp\":\"@ts\",\"message\":{\"role\":\"user\",\"content\":$text,\"timestamp\":\"@int\"}}]"
	local id=${NEW_IDS[0]:-none}
	local bad
	# vim's probe file is named 4913: not as digits of a longer number
	# (an appended line's millisecond timestamp may hold them).
	bad=$(grep -nE '(^|[^0-9])4913([^0-9]|$)|\.sw[a-z]|#|~|sed[A-Za-z0-9]{6}' "$F" || true)
	assert_eq "$what: no side-file artefact in the session file" "" "$bad"
	assert_eq "$what: the mount lists nothing stray" \
		"$(printf '%s\n' "$BEFORE_LS" "0003~$id" "$@" | grep . | sort)" "$(ls_names "$S" | sort)"
	assert_same_bytes "$S/$E" "$T_DIR/$SESS.orig"
	local body
	body=$("$PY" -I -S -c 'import json,sys; print(json.loads(sys.argv[1]))' "$text")
	fsx_out cat "$S/0003~$id/0003-user.$id.md"
	assert_contains "$what: the new entry file shows the text" $'---\n'"$body"$'\n' "$OUT"
	fsx_out readlink "$S/leaf"
	assert_eq "$what: leaf is the new entry" "0003~$id/0003-user.$id.md" "${OUT%$'\n'}"
	assert_eq "$what: no label appeared" "" "$(ls_names "$S/labels")"
	expect_no_refusal "$what"
}

# traced LOG PATTERN WHAT: the strace log has a line matching PATTERN (ERE).
traced() {
	if grep -qE "$2" "$1"; then
		pass
	else
		fail "$3: strace shows no $(show "$2")"
	fi
}

# strace is only a witness here: without it (or where ptrace is not
# allowed) the editors still run, unobserved.
if ! command -v strace >/dev/null; then
	timeout 300 apt-get install -y strace >/dev/null 2>&1 || true
fi
have_strace=0
if command -v strace >/dev/null && strace -qq -o /dev/null true 2>/dev/null; then
	have_strace=1
fi
# traced_run LOG SECONDS CMD...: CMD (time-limited) under strace -f (file
# and descriptor calls) when strace is there.
traced_run() {
	local log=$1 secs=$2
	shift 2
	if ((have_strace)); then
		timeout -s KILL "$secs" strace -f -qq -o "$log" -e trace=%file,%desc "$@"
	else
		: >"$log"
		timeout -s KILL "$secs" "$@"
	fi
}

REFUSED=(ref-vim-auto ref-vim-yes ref-vim-nobackup ref-nano ref-emacs ref-sed)
for s in vim-auto vim-yes nano nano-backup emacs sed nvim perl py-mkstemp py-named gio jetbrains rsync node sed-orig "${REFUSED[@]}"; do
	mksession "s-$s"
done
mount_fs "$STORE" "$MNT"

# --- vim, defaults (backupcopy=auto), swap file on -------------------------------
start s-vim-auto
vimrun() {
	local dir=$1 log=$2
	shift 2
	(cd "$dir" && traced_run "$log" 20 vim -Nu NONE -i NONE -es "$@")
}
if vimrun "$S" "$T_DIR/vim-auto.st" -c 'set backupskip= backupcopy=auto' -c '%s/^alpha two$/omega two/' \
	-c "!ls -A > $T_DIR/vim-auto.ls" -c wq "$E" >"$T_DIR/vim.out" 2>&1; then
	pass
else
	fail "vim (backupcopy=auto) failed: $(cat "$T_DIR/vim.out")"
fi
assert_contains "vim: its swap file was visible while editing" $'\n.0003-user.aaaa0003.md.swp\n' $'\n'"$(cat "$T_DIR/vim-auto.ls" 2>/dev/null)"$'\n'
if ((have_strace)); then
	traced "$T_DIR/vim-auto.st" '"4913", O_WRONLY\|O_CREAT\|O_EXCL\|O_NOFOLLOW, [0-9]+\) = [0-9]' "vim auto: the 4913 probe was made"
	traced "$T_DIR/vim-auto.st" "rename\\(\"$E\", \"$E~\"\\) += 0" "vim auto: the entry was renamed to its backup"
	traced "$T_DIR/vim-auto.st" "unlink\\(\"$E~\"\\) += 0" "vim auto: the backup was removed"
fi
saved "vim (backupcopy=auto)" '"omega two"'

# --- vim, backupcopy=yes -------------------------------------------------------------
start s-vim-yes
if vimrun "$S" "$T_DIR/vim-yes.st" -c 'set backupskip= backupcopy=yes' -c '%s/^alpha two$/omega yes/' \
	-c wq "$E" >"$T_DIR/vim.out" 2>&1; then
	pass
else
	fail "vim (backupcopy=yes) failed: $(cat "$T_DIR/vim.out")"
fi
if ((have_strace)); then
	traced "$T_DIR/vim-yes.st" "\"$E~\", O_WRONLY\\|O_CREAT\\|O_EXCL.*\\) = [0-9]" "vim yes: the backup copy was made"
	traced "$T_DIR/vim-yes.st" 'ftruncate\([0-9]+, 0\) += 0' "vim yes: the entry was truncated in place"
fi
saved "vim (backupcopy=yes)" '"omega yes"'

# --- nano, through tmux ------------------------------------------------------------------
# nano_edit DIR TEXT OPTIONS...: opens $E at its end, types TEXT, saves (^S),
# waits for "Wrote", lists DIR into $T_DIR/nano.ls while nano still runs,
# quits (^X) and waits for nano to exit.
nano_edit() {
	local dir=$1 text=$2
	shift 2
	local cmd
	cmd="cd $(printf '%q' "$dir") && exec nano --ignorercfiles $* +999 $E"
	tmux -L "$TMUX_SOCK" new-session -d -s nano -x 100 -y 30 "$cmd"
	if ! poll_until 5 bash -c 'tmux -L "$1" capture-pane -p -t nano | grep -q "^\^G Help"' _ "$TMUX_SOCK"; then
		fail "nano did not start: $(tmux -L "$TMUX_SOCK" capture-pane -p -t nano 2>&1 | head -5)"
	fi
	tmux -L "$TMUX_SOCK" send-keys -t nano -l "$text"
	tmux -L "$TMUX_SOCK" send-keys -t nano C-s
	if poll_until 5 bash -c 'tmux -L "$1" capture-pane -p -t nano | grep -q "Wrote [0-9]* line"' _ "$TMUX_SOCK"; then
		pass
	else
		fail "nano did not write: $(tmux -L "$TMUX_SOCK" capture-pane -p -t nano 2>&1 | grep . | tail -5)"
	fi
	ls_names "$dir" >"$T_DIR/nano.ls" || true
	tmux -L "$TMUX_SOCK" send-keys -t nano C-x
	if poll_until 5 bash -c '! tmux -L "$1" has-session -t nano 2>/dev/null' _ "$TMUX_SOCK"; then
		pass
	else
		fail "nano did not exit: $(tmux -L "$TMUX_SOCK" capture-pane -p -t nano 2>&1 | grep . | tail -5)"
		tmux -L "$TMUX_SOCK" kill-session -t nano >/dev/null 2>&1 || true
	fi
}
if need nano nano && need tmux tmux; then
	start s-nano
	nano_edit "$S" "nano-added"
	saved "nano" '"alpha two\nnano-added"'

	start s-nano-backup
	nano_edit "$S" "nano-backup" --backup --locking
	assert_contains "nano --locking: its lock file was visible while editing" \
		$'\n.0003-user.aaaa0003.md.swp\n' $'\n'"$(cat "$T_DIR/nano.ls")"$'\n'
	saved "nano --backup --locking" '"alpha two\nnano-backup"' "$E~"
	assert_same_bytes "$S/$E~" "$T_DIR/$SESS.orig"
	fsx_out rm "$S/$E~"
	mark "$F"
	assert_missing "$S/$E~"
	assert_exists "$S/$E"
	assert_eq "removing nano's backup: session unchanged" "$MARK_SHA" "$(sha256sum <"$F")"
fi

# --- emacs, batch mode ---------------------------------------------------------------------
# Backups are on for every file (emacs makes none under /tmp by default),
# and auto-save is forced once, so that all three side files appear.
if need emacs-nox emacs; then
	start s-emacs
	elisp='(progn
	  (setq backup-enable-predicate (lambda (f) t))
	  (find-file "'$E'")
	  (auto-save-mode 1)
	  (goto-char (point-max))
	  (insert "emacs-added\n")
	  (do-auto-save t)
	  (message "LISTING %S" (directory-files "."))
	  (save-buffer))'
	if (cd "$S" && traced_run "$T_DIR/emacs.st" 30 emacs -Q --batch --eval "$elisp") >"$T_DIR/emacs.out" 2>&1; then
		pass
	else
		fail "emacs failed: $(tail -5 "$T_DIR/emacs.out")"
	fi
	listing=$(grep '^LISTING' "$T_DIR/emacs.out" || true)
	assert_contains "emacs: its lock link was visible while editing" "\".#$E\"" "$listing"
	assert_contains "emacs: its auto-save file was visible while editing" "\"#$E#\"" "$listing"
	if ((have_strace)); then
		traced "$T_DIR/emacs.st" "rename\\(\"[^\"]*/$E\", \"[^\"]*/$E~\"\\) += 0" "emacs: the entry was renamed to its backup"
		traced "$T_DIR/emacs.st" "symlink\\(\"[^\"]*\", \"[^\"]*/\\.#$E\"\\) += 0" "emacs: the lock link was made"
		traced "$T_DIR/emacs.st" "unlink\\(\"[^\"]*/#$E#\"\\) += 0" "emacs: the auto-save file was removed"
	fi
	saved "emacs" '"alpha two\nemacs-added"' "$E~"
	assert_same_bytes "$S/$E~" "$T_DIR/$SESS.orig"
fi

# --- sed -i -----------------------------------------------------------------------------
start s-sed
if (cd "$S" && traced_run "$T_DIR/sed.st" 10 sed -i 's/^alpha two$/sed two/' "$E") >"$T_DIR/sed.out" 2>&1; then
	pass
else
	fail "sed -i failed: $(cat "$T_DIR/sed.out")"
fi
if ((have_strace)); then
	traced "$T_DIR/sed.st" "rename\\(\"\\./sed[A-Za-z0-9]{6}\", \"$E\"\\) += 0" "sed -i: its temp file was renamed over the entry"
fi
saved "sed -i" '"sed two"'

# --- saves by rename (issue 11 item 12) ------------------------------------------
# edited_copy OUT TEXT: the entry file with "alpha two" replaced by TEXT.
edited_copy() {
	sed "s/^alpha two\$/$2/" "$T_DIR/$SESS.orig" >"$1"
}

# nvim (Debian's neovim), defaults: its backup f~ while writing.
if need neovim nvim; then
	start s-nvim
	if (cd "$S" && timeout -s KILL 20 nvim -u NONE -i NONE -n -es -c 'set backupskip=' \
		-c '%s/^alpha two$/nvim two/' -c wq "$E") >"$T_DIR/nvim.out" 2>&1; then
		pass
	else
		fail "nvim failed: $(cat "$T_DIR/nvim.out")"
	fi
	saved "nvim" '"nvim two"'
fi

# perl -i: a temporary beside the file, renamed over it.
start s-perl
if (cd "$S" && traced_run "$T_DIR/perl.st" 10 perl -pi -e 's/^alpha two$/perl two/' "$E") >"$T_DIR/perl.out" 2>&1; then
	pass
else
	fail "perl -i failed: $(cat "$T_DIR/perl.out")"
fi
if ((have_strace)); then
	traced "$T_DIR/perl.st" "rename(at2?)?\\(([0-9A-Z_]+, )?\"[^\"]*\", ([0-9A-Z_]+, )?\"$E\"(, [0-9A-Z_]+)?\\) += 0" \
		"perl -i: its temporary was renamed over the entry"
fi
saved "perl -i" '"perl two"'

# Python: mkstemp in the directory, os.replace onto the entry.
start s-py-mkstemp
edited_copy "$T_DIR/py.md" "python atomic"
fsx_out "$PY" -I -S -c '
import os, sys, tempfile
d, entry, src = sys.argv[1:]
fd, tmp = tempfile.mkstemp(dir=d)
os.write(fd, open(src, "rb").read())
os.close(fd)
os.replace(tmp, os.path.join(d, entry))
print("ok")' "$S" "$E" "$T_DIR/py.md"
assert_eq "python mkstemp + os.replace" "ok" "${OUT%$'\n'}${ERR:+ $ERR}"
saved "python mkstemp + os.replace" '"python atomic"'

# Python: a temporary named *.md (NamedTemporaryFile(suffix=".md")) is not
# a new message at its close: it is the edit its rename makes.
start s-py-named
edited_copy "$T_DIR/pyn.md" "python named"
fsx_out "$PY" -I -S -c '
import os, sys, tempfile
d, entry, src = sys.argv[1:]
with tempfile.NamedTemporaryFile(dir=d, suffix=".md", delete=False) as f:
    f.write(open(src, "rb").read())
os.replace(f.name, os.path.join(d, entry))
print("ok")' "$S" "$E" "$T_DIR/pyn.md"
assert_eq "python NamedTemporaryFile(.md) + os.replace" "ok" "${OUT%$'\n'}${ERR:+ $ERR}"
saved "python NamedTemporaryFile(.md) + os.replace" '"python named"'

# gio save (GIO's replace: .goutputstream-XXXXXX renamed over the file).
if need libglib2.0-bin gio; then
	start s-gio
	edited_copy "$T_DIR/gio.md" "gio two"
	if (cd "$S" && traced_run "$T_DIR/gio.st" 10 gio save "$E" <"$T_DIR/gio.md") >"$T_DIR/gio.out" 2>&1; then
		pass
	else
		fail "gio save failed: $(cat "$T_DIR/gio.out")"
	fi
	if ((have_strace)); then
		traced "$T_DIR/gio.st" "rename\\(\"[^\"]*\\.goutputstream-[A-Za-z0-9]+\", \"[^\"]*$E\"\\) += 0" "gio save: its temporary was renamed over the entry"
	fi
	saved "gio save" '"gio two"'
fi

# JetBrains' safe write, scripted: write f___jb_tmp___, move f to
# f___jb_old___, move the temporary onto f, delete the old one.
start s-jetbrains
edited_copy "$T_DIR/jb.md" "jetbrains two"
fsx_out bash -ec 'cd "$1"
cat "$3" >"$2___jb_tmp___"
mv "$2" "$2___jb_old___"
mv "$2___jb_tmp___" "$2"
rm "$2___jb_old___"' _ "$S" "$E" "$T_DIR/jb.md"
assert_eq "JetBrains safe write: every step succeeds" "0" "$RC${ERR:+ $ERR}"
saved "JetBrains safe write" '"jetbrains two"'

# rsync onto the entry (its .f.XXXXXX temporary, renamed, then utimes).
if need rsync rsync; then
	start s-rsync
	edited_copy "$T_DIR/rsync.md" "rsync two"
	fsx_out rsync "$T_DIR/rsync.md" "$S/$E"
	assert_eq "rsync onto an entry" "0" "$RC${ERR:+ $ERR}"
	saved "rsync onto an entry" '"rsync two"'
fi

# Node's fs.writeFile (open O_TRUNC, write, close).
NODE_BIN=${PI_NODE:-/usr/bin/node}
if [[ -x $NODE_BIN ]] || need nodejs node; then
	[[ -x $NODE_BIN ]] || NODE_BIN=$(command -v node)
	start s-node
	edited_copy "$T_DIR/node.md" "node two"
	fsx_out "$NODE_BIN" -e 'const fs = require("fs");
fs.writeFile(process.argv[1], fs.readFileSync(process.argv[2]), (e) => { if (e) { console.error(e.message); process.exit(1); } console.log("ok"); });' \
		"$S/$E" "$T_DIR/node.md"
	assert_eq "node fs.writeFile" "ok" "${OUT%$'\n'}${ERR:+ $ERR}"
	saved "node fs.writeFile" '"node two"'
fi

# sed -i.orig: the original put aside as f.orig (a backup left by design).
start s-sed-orig
fsx_out bash -c 'cd "$1" && sed -i.orig "s/^alpha two\$/sed orig/" "$2"' _ "$S" "$E"
assert_eq "sed -i.orig" "0" "$RC${ERR:+ $ERR}"
saved "sed -i.orig" '"sed orig"' "$E.orig"
assert_same_bytes "$S/$E.orig" "$T_DIR/$SESS.orig"

# --- refused saves (docs/layout.md, "A refused save in an editor") ---------------------
# Each editor saves the entry with its role changed in the front matter,
# which is refused: what it says is pinned here as the docs quote it, and
# nothing is lost: the session file is byte-identical, the entry file reads
# as before, the saved text is in rejected/ exactly, the log says why.
# refused_save WHAT [LEFT...]: checks the last save of $E in $S.
refused_save() {
	local what=$1
	shift
	assert_eq "$what: session file unchanged (sha256)" "$MARK_SHA" "$(sha256sum <"$F")"
	assert_poll "$what: the entry file reads as before" 5 cmp -s "$S/$E" "$T_DIR/$SESS.orig"
	local log kept
	# What the editor saved: the entry with role: assistant.
	sed 's/^role: user$/role: assistant/' "$T_DIR/$SESS.orig" >"$T_DIR/refused.md"
	log=$(fsx cat "$MNT/.pisessionfs/log" | tail -n +$((MARK_LOG + 1)) | grep "refused $MNT/$PROJ/$SESS/$E: " || true)
	assert_contains "$what: the log says why" 'front matter field "role" cannot change (was user, now assistant)' "$log"
	kept=$(sed -n "s|.*your text is kept in $MNT/\\(.pisessionfs/rejected/[^)]*\\)).*|\\1|p" <<<"$log" | tail -1)
	if [[ -n $kept ]] && fsx cat "$MNT/$kept" | cmp -s - "$T_DIR/refused.md"; then
		pass
	else
		fail "$what: the saved text is not kept in rejected/ (${kept:-no name in the log})"
	fi
	assert_eq "$what: the mount lists nothing new" \
		"$(printf '%s\n' "$BEFORE_LS" "$@" | grep . | sort)" "$(ls_names "$S" | sort)"
}

# vim: the message of :write, caught (v:exception): vim's fsync() only
# makes the text durable (docs/layout.md "fsync"), its close() is refused:
# E512, with its backup and without one (backupskip=*, as for files under
# /tmp).
vim_refused() {
	local c=$1 settings=$2
	shift 2
	start "s-$c"
	rm -f "$T_DIR/vim.msg"
	(cd "$S" && fsx vim -Nu NONE -i NONE -n -es -c "set $settings" -c '%s/^role: user$/role: assistant/' \
		-c "try | write | catch | call writefile([v:exception], '$T_DIR/vim.msg') | endtry" -c 'q!' "$E") \
		>"$T_DIR/vim.out" 2>&1 || true
	assert_eq "vim ($settings), refused save: what :write says" "Vim(write):E512: Close failed ($E)" \
		"$(cat "$T_DIR/vim.msg" 2>/dev/null || echo "no error: $(cat "$T_DIR/vim.out")")"
	refused_save "vim ($settings), refused save" "$@"
}
vim_refused ref-vim-auto 'backupskip= backupcopy=auto'
vim_refused ref-vim-yes 'backupskip= backupcopy=yes' "$E~"
vim_refused ref-vim-nobackup 'backupskip=* backupcopy=auto'

# nano: the error in its status bar; the buffer stays modified.
start s-ref-nano
tmux -L "$TMUX_SOCK" new-session -d -s nanoref -x 200 -y 30 \
	"cd $(printf '%q' "$S") && exec nano --ignorercfiles +6 $E"
if poll_until 5 bash -c 'tmux -L "$1" capture-pane -p -t nanoref | grep -q "^\^G Help"' _ "$TMUX_SOCK"; then
	pass
else
	fail "nano did not start: $(tmux -L "$TMUX_SOCK" capture-pane -p -t nanoref 2>&1 | head -5)"
fi
tmux -L "$TMUX_SOCK" send-keys -t nanoref C-k
tmux -L "$TMUX_SOCK" send-keys -t nanoref -l 'role: assistant'
tmux -L "$TMUX_SOCK" send-keys -t nanoref Enter C-s
assert_poll "nano, refused save: says the write failed" 5 \
	bash -c 'tmux -L "$1" capture-pane -p -t nanoref | grep -qF "[ Error writing $2: Invalid argument ]"' _ "$TMUX_SOCK" "$E"
tmux -L "$TMUX_SOCK" send-keys -t nanoref C-x
assert_poll "nano, refused save: asks whether to save the modified buffer" 5 \
	bash -c 'tmux -L "$1" capture-pane -p -t nanoref | grep -q "Save modified buffer"' _ "$TMUX_SOCK"
tmux -L "$TMUX_SOCK" send-keys -t nanoref n
assert_poll "nano, refused save: exits" 5 bash -c '! tmux -L "$1" has-session -t nanoref 2>/dev/null' _ "$TMUX_SOCK"
refused_save "nano, refused save"

# emacs in batch mode (no fsync there): the write error of the close.
start s-ref-emacs
fsx_out bash -c 'cd "$1" && emacs -Q --batch --eval "(progn (setq backup-enable-predicate (lambda (f) nil))
	(find-file \"$2\") (goto-char (point-min)) (re-search-forward \"^role: user$\")
	(replace-match \"role: assistant\") (save-buffer))"' _ "$S" "$E"
assert_ne "emacs --batch, refused save: its exit status" "0" "$RC"
assert_contains "emacs --batch, refused save: what it says" "(file-error \"Write error\" \"Invalid argument\"" "$ERR"
refused_save "emacs --batch, refused save"

# sed -i: the rename of its temporary over the entry fails; sed removes it.
start s-ref-sed
fsx_out bash -c 'cd "$1" && sed -i "s/^role: user\$/role: assistant/" "$2"' _ "$S" "$E"
assert_eq "sed -i, refused save: its exit status" 4 "$RC"
assert_contains "sed -i, refused save: what it says" "Invalid argument" "$ERR"
assert_contains "sed -i, refused save: names its temporary" "sed: cannot rename ./sed" "$ERR"
refused_save "sed -i, refused save"

finish
