#!/usr/bin/env bash
# An entry file emptied (docs/layout.md, "Refusals"): `: > ENTRY.md`,
# Python's open(f, "w").close(), ftruncate + fsync + close, and an editor
# saving an empty buffer (vim with and without its backup, emacs, nano).
# Each must append nothing (the session file stays byte-identical), log a
# "refused ... empty file" line, keep the entry file showing what it showed,
# and tell the writer at close(), not at fsync(): a failed fsync reads as a
# disk that lost the file (vim: "E667: Fsync failed" and "Original file may
# be lost or damaged").  What each editor says is pinned here as the docs
# quote it.
# shellcheck disable=SC2016 # 'bash -c' scripts get their arguments as $1...
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

PY=$(python3 -c 'import sys; print(sys.executable)')
PROJ=--home-u-w--
mkdir -p "$STORE/$PROJ"
E=0001-user.aaaa0001.md

# need PACKAGE COMMAND: installs PACKAGE when COMMAND is missing; a missing
# editor fails the test (it is promised), it does not skip it.
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
emptied_cleanup() {
	tmux -L "$TMUX_SOCK" kill-server >/dev/null 2>&1 || true
	cleanup
}
trap emptied_cleanup EXIT

CASES=(colon python-close python-fsync python-blank vim-auto vim-yes vim-nobackup emacs emacs-nobackup nano)
for c in "${CASES[@]}"; do
	{
		header
		user_msg aaaa0001 null "alpha one"
		asst_msg aaaa0002 aaaa0001 "reply one"
	} >"$STORE/$PROJ/s-$c.jsonl"
	chmod 644 "$STORE/$PROJ/s-$c.jsonl"
done
mount_fs "$STORE" "$MNT"

# start CASE: sets S and F, keeps the entry file, the listing, the session
# file's sha256 and the log's length.
start() {
	CASE=$1
	S=$MNT/$PROJ/s-$1
	F=$STORE/$PROJ/s-$1.jsonl
	fsx cat "$S/$E" >"$T_DIR/$1.orig"
	BEFORE_LS=$(ls_names "$S")
	MARK_SHA=$(sha256sum <"$F")
	MARK_LOG=$(fsx cat "$MNT/.pisessionfs/log" | wc -l)
}

# log_has LOG FROM TEXT: line FROM or a later one of LOG holds TEXT.
# shellcheck disable=SC2317 # run by poll_until through bash -c
log_has() {
	tail -n +"$2" "$1" | grep -qF "$3"
}
export -f log_has

# nothing_changed WHAT [LEFT...]: the session file is byte-identical, the
# log says why, the entry file shows what it showed, and the mount lists
# what it listed plus LEFT (side files the editor keeps by design).
nothing_changed() {
	local what=$1
	shift
	assert_eq "$what: session file unchanged (sha256)" "$MARK_SHA" "$(sha256sum <"$F")"
	# a refusal at the last close is logged just after it returns
	assert_poll "$what: a refused line in the log" 5 bash -c 'log_has "$@"' _ "$MNT/.pisessionfs/log" \
		$((MARK_LOG + 1)) "refused $MNT/$PROJ/s-$CASE/$E: empty file: nothing to append"
	assert_poll "$what: the entry file shows what it showed" 5 cmp -s "$S/$E" "$T_DIR/$CASE.orig"
	assert_eq "$what: the mount lists nothing new" \
		"$(printf '%s\n' "$BEFORE_LS" "$@" | grep . | sort)" "$(ls_names "$S" | sort)"
}

# --- the shell: `: > ENTRY` ------------------------------------------------------------
# The refusal is the error of the last close(), which a shell does not
# check: the exit status is 0, and nothing changes.
start colon
fsx_out bash -c ': > "$1"' _ "$S/$E"
assert_eq ": > ENTRY: the shell's status (it ignores close errors)" "0" "$RC"
nothing_changed ": > ENTRY"

# --- Python ----------------------------------------------------------------------------
cat >"$T_DIR/empty.py" <<'EOF'
import os, sys
path, how = sys.argv[1], sys.argv[2]
res = []
step = "open"
try:
    if how == "close":
        f = open(path, "w")
        step = "close"
        f.close()
    else:
        fd = os.open(path, os.O_RDWR)
        step = "ftruncate"
        os.ftruncate(fd, 0)
        if how == "blank":
            step = "write"
            os.write(fd, b"\n  \n")
        step = "fsync"
        os.fsync(fd)
        res.append("fsync:ok")
        step = "close"
        os.close(fd)
    res.append("close:ok")
except OSError as e:
    res.append("%s:%s" % (step, os.strerror(e.errno)))
print(" ".join(res))
EOF
start python-close
fsx_out "$PY" -I -S "$T_DIR/empty.py" "$S/$E" close
assert_eq "open(f, 'w').close()" "close:Invalid argument" "${OUT%$'\n'}"
nothing_changed "open(f, 'w').close()"

start python-fsync
fsx_out "$PY" -I -S "$T_DIR/empty.py" "$S/$E" fsync
assert_eq "ftruncate, fsync, close: refused at close" "fsync:ok close:Invalid argument" "${OUT%$'\n'}"
nothing_changed "ftruncate, fsync, close"

start python-blank
fsx_out "$PY" -I -S "$T_DIR/empty.py" "$S/$E" blank
assert_eq "whitespace only, fsync, close: refused at close" "fsync:ok close:Invalid argument" "${OUT%$'\n'}"
nothing_changed "whitespace only, fsync, close"

# --- vim, an empty buffer written --------------------------------------------------------
# The message vim gives is caught from :write (v:exception).  backupskip=
# makes vim take its usual path under /tmp too (rename to f~, write f);
# backupskip=* is what vim does for a file it makes no backup of.
# vim_empty CASE SETTINGS LEFT...
vim_empty() {
	local c=$1 settings=$2
	shift 2
	start "$c"
	rm -f "$T_DIR/vim.msg"
	(cd "$S" && fsx vim -Nu NONE -i NONE -n -es -c "set $settings" -c '%d' \
		-c "try | write | catch | call writefile([v:exception], '$T_DIR/vim.msg') | endtry" -c 'q!' "$E") \
		>"$T_DIR/vim.out" 2>&1 || true
	assert_eq "vim ($settings): what :write says" "Vim(write):E512: Close failed ($E)" \
		"$(cat "$T_DIR/vim.msg" 2>/dev/null || echo "no error: $(cat "$T_DIR/vim.out")")"
	nothing_changed "vim ($settings)" "$@"
}
if need vim vim; then
	vim_empty vim-auto 'backupskip= backupcopy=auto'
	vim_empty vim-yes 'backupskip= backupcopy=yes' "$E~"
	vim_empty vim-nobackup 'backupskip=* backupcopy=auto'
fi

# --- emacs ------------------------------------------------------------------------------
# With backups (as for any file outside /tmp) it renames the entry to f~
# and writes an empty f; without, it truncates f in place.
# emacs_empty CASE BACKUPS LEFT...
emacs_empty() {
	local c=$1 backups=$2
	shift 2
	start "$c"
	fsx_out bash -c 'cd "$1" && emacs -Q --batch --eval "(progn (setq backup-enable-predicate (lambda (f) $3))
		(find-file \"$2\") (erase-buffer) (save-buffer))"' _ "$S" "$E" "$backups"
	assert_ne "emacs ($c): its exit status" "0" "$RC"
	assert_contains "emacs ($c): what it says" "(file-error \"Write error\" \"Invalid argument\"" "$ERR"
	nothing_changed "emacs ($c)" "$@"
}
if need emacs-nox emacs; then
	emacs_empty emacs t "$E~"
	emacs_empty emacs-nobackup nil
fi

# --- nano: truncates, writes nothing, fsyncs, closes ---------------------------------------
# nano_screen: what nano shows now.
nano_screen() {
	tmux -L "$TMUX_SOCK" capture-pane -p -t nano 2>&1
}
if need nano nano && need tmux tmux; then
	start nano
	tmux -L "$TMUX_SOCK" new-session -d -s nano -x 200 -y 30 \
		"cd $(printf '%q' "$S") && exec nano --ignorercfiles $E"
	if poll_until 5 bash -c 'tmux -L "$1" capture-pane -p -t nano | grep -q "^\^G Help"' _ "$TMUX_SOCK"; then
		pass
	else
		fail "nano did not start: $(nano_screen | head -5)"
	fi
	# ^K cuts a line; more than the file has empties the buffer.
	for _ in $(seq 30); do
		tmux -L "$TMUX_SOCK" send-keys -t nano C-k
	done
	tmux -L "$TMUX_SOCK" send-keys -t nano C-s
	assert_poll "nano: says the write failed" 5 \
		bash -c 'tmux -L "$1" capture-pane -p -t nano | grep -qF "[ Error writing $2: Invalid argument ]"' _ "$TMUX_SOCK" "$E"
	tmux -L "$TMUX_SOCK" send-keys -t nano C-x
	assert_poll "nano: asks whether to save the modified buffer" 5 \
		bash -c 'tmux -L "$1" capture-pane -p -t nano | grep -q "Save modified buffer"' _ "$TMUX_SOCK"
	tmux -L "$TMUX_SOCK" send-keys -t nano n
	assert_poll "nano: exits" 5 bash -c '! tmux -L "$1" has-session -t nano 2>/dev/null' _ "$TMUX_SOCK"
	nothing_changed "nano"
fi

finish
