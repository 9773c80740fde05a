#!/usr/bin/env bash
# make install into a temporary prefix; the installed daemon mounts the way
# fstab and mount(8) run it (mount.fuse3 passes STORE MOUNTPOINT -o ...), the
# man page renders and the systemd user unit runs the installed program.
# make install and make uninstall into a DESTDIR, with PREFIX, BINDIR and
# MANDIR, leave no file behind.  Then make install into /usr/local (removed
# again at exit, by make uninstall), where mount -t fuse.pisessionfs and the
# README's fstab line find it.
. "$(dirname "$0")/lib.sh" "$@"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
PREFIX_DIR=$T_DIR/prefix
mkdir -p "$STORE/--w--"
{
	header 3
	user_msg a1 null "installed"
} >"$STORE/--w--/s.jsonl"

# The same build the other tests use: install copies, it does not rebuild.
BUILD_DIR=$(dirname "$DAEMON")
fsx_out make -s -C "$REPO" install PREFIX="$PREFIX_DIR" BUILD="${BUILD_DIR#"$REPO"/}"
assert_eq "make install succeeds" 0 "$RC"
for f in bin/pisessionfs bin/pisession share/man/man1/pisessionfs.1 share/man/man1/pisession.1 \
	lib/systemd/user/pisessionfs.service; do
	assert_true "installed $f" test -f "$PREFIX_DIR/$f"
done
assert_true "the installed daemon is executable" test -x "$PREFIX_DIR/bin/pisessionfs"
fsx_out "$PREFIX_DIR/bin/pisessionfs" --version
assert_contains "--version names the program" "pisessionfs" "$OUT"
fsx_out man -l "$PREFIX_DIR/share/man/man1/pisessionfs.1"
assert_contains "the man page renders" "mount a pi coding-agent session store" "$OUT"
fsx_out man -l "$PREFIX_DIR/share/man/man1/pisession.1"
assert_contains "pisession's man page renders" "show what pisessionfs would show for one pi session file" "$OUT"
# Every page a man page refers to in SEE ALSO is installed, or a system one.
while read -r page; do
	case $page in
	pisession*) assert_true "SEE ALSO $page is installed" test -f "$PREFIX_DIR/share/man/man${page##*.}/$page" ;;
	esac
done < <(sed -n '/^\.SH SEE ALSO/,$s/^\.BR \([a-z0-9.]*\) (\([0-9]\)).*/\1.\2/p' "$REPO"/docs/*.1 | sort -u)

UNIT=$PREFIX_DIR/lib/systemd/user/pisessionfs.service
assert_eq "the installed unit runs the installed daemon" \
	"ExecStart=$PREFIX_DIR/bin/pisessionfs -f -o auto_unmount %h/pi-sessions" "$(grep '^ExecStart=' "$UNIT" || true)"
assert_eq "the installed unit is docs/pisessionfs.service otherwise" \
	"$(grep -v '^ExecStart=' "$REPO/docs/pisessionfs.service")" "$(grep -v '^ExecStart=' "$UNIT" || true)"
# systemd's own check: the program exists, the man page it names is there.
if command -v systemd-analyze >/dev/null; then
	fsx_out env MANPATH="$PREFIX_DIR/share/man" systemd-analyze verify "$UNIT"
	assert_eq "systemd-analyze verify accepts the installed unit" 0 "$RC$ERR"
fi

# --- make install and uninstall into a DESTDIR ----------------------------------
# installed DEST: the files and symlinks under DEST, one per line, sorted.
installed() {
	(cd "$1" && find . ! -type d | sed 's/^\.//' | sort)
}
DEST=$T_DIR/dest
fsx_out make -s -C "$REPO" install DESTDIR="$DEST" PREFIX=/usr BUILD="${BUILD_DIR#"$REPO"/}"
assert_eq "make install DESTDIR=... PREFIX=/usr succeeds" 0 "$RC$ERR"
assert_eq "it installs the programs, the man pages and the user unit" "/usr/bin/pisession
/usr/bin/pisessionfs
/usr/lib/systemd/user/pisessionfs.service
/usr/share/man/man1/pisession.1
/usr/share/man/man1/pisessionfs.1" "$(installed "$DEST")"
assert_eq "the unit runs /usr/bin/pisessionfs" "ExecStart=/usr/bin/pisessionfs -f -o auto_unmount %h/pi-sessions" \
	"$(grep '^ExecStart=' "$DEST/usr/lib/systemd/user/pisessionfs.service" || true)"
fsx_out make -s -C "$REPO" uninstall DESTDIR="$DEST" PREFIX=/usr
assert_eq "make uninstall DESTDIR=... PREFIX=/usr succeeds" 0 "$RC$ERR"
assert_eq "make uninstall leaves no file behind" "" "$(installed "$DEST")"

DEST=$T_DIR/dest2
fsx_out make -s -C "$REPO" install DESTDIR="$DEST" BINDIR=/opt/ps/bin MANDIR=/opt/ps/man BUILD="${BUILD_DIR#"$REPO"/}"
assert_eq "make install with BINDIR and MANDIR succeeds" 0 "$RC$ERR"
assert_eq "BINDIR and MANDIR place the programs and man pages" "/opt/ps/bin/pisession
/opt/ps/bin/pisessionfs
/opt/ps/man/man1/pisession.1
/opt/ps/man/man1/pisessionfs.1
/usr/local/lib/systemd/user/pisessionfs.service" "$(installed "$DEST")"
assert_eq "the unit runs BINDIR's pisessionfs" "ExecStart=/opt/ps/bin/pisessionfs -f -o auto_unmount %h/pi-sessions" \
	"$(grep '^ExecStart=' "$DEST/usr/local/lib/systemd/user/pisessionfs.service" || true)"
fsx_out make -s -C "$REPO" uninstall DESTDIR="$DEST" BINDIR=/opt/ps/bin MANDIR=/opt/ps/man
assert_eq "make uninstall with BINDIR and MANDIR succeeds" 0 "$RC$ERR"
assert_eq "and leaves no file behind" "" "$(installed "$DEST")"

# mount -t fuse with the TYPE#SOURCE form (fstab: fuse.pisessionfs finds
# the program on mount's PATH; this form names it exactly).
MOUNTS+=("$MNT")
fsx_out mount -t fuse "$PREFIX_DIR/bin/pisessionfs#$STORE" "$MNT" -o auto_unmount
assert_eq "mount -t fuse PROGRAM#STORE succeeds" 0 "$RC"
poll_until 5 test -d "$MNT/--w--/s" || true
assert_eq "the mount shows the store" "s" "$(fsx ls "$MNT/--w--" | grep -Ev '^(usage.*\.(csv|svg)|sessions.md|search)$')"
assert_contains "the entry reads through the mount" "installed" "$(fsx cat "$MNT/--w--/s/0001-user.a1.md")"
assert_eq "it is a fuse.pisessionfs mount" "fuse.pisessionfs" \
	"$(awk -v mp="$MNT" '$5 == mp { for (i = 7; i <= NF; i++) if ($i == "-") { print $(i + 1); exit } }' /proc/self/mountinfo)"
fsx fusermount3 -u "$MNT"
assert_true "fusermount3 -u unmounts it" bash -c "! grep -q ' $MNT ' /proc/self/mountinfo"

# --- mount -t fuse.pisessionfs STORE MOUNTPOINT, and the README's fstab line --
# mount(8) runs mount.fuse3 without any PATH in its environment; mount.fuse3
# runs "pisessionfs STORE MOUNTPOINT -o OPTIONS" through /bin/sh, which then
# searches its default path (/usr/local/sbin:/usr/local/bin:/usr/sbin:...).
# So this part installs for real with the default PREFIX, /usr/local, and the
# EXIT trap removes exactly what it installed.  It never touches an
# installation it did not make: if a pisessionfs is already installed there
# (or in a directory searched before it), the test fails and says so.
SYS_FILES=(/usr/local/bin/pisessionfs /usr/local/bin/pisession /usr/local/share/man/man1/pisessionfs.1
	/usr/local/share/man/man1/pisession.1 /usr/local/lib/systemd/user/pisessionfs.service)
SHADOWS=(/usr/local/sbin/pisessionfs /usr/sbin/pisessionfs /usr/bin/pisessionfs /sbin/pisessionfs /bin/pisessionfs)
SYS_INSTALLED=()
SYS_NEW_DIRS=()
sys_uninstall() {
	local f d
	for f in "${SYS_INSTALLED[@]}"; do
		rm -f -- "$f"
	done
	for d in "${SYS_NEW_DIRS[@]}"; do
		rmdir -- "$d" 2>/dev/null || true
	done
}
# cleanup (lib.sh) unmounts, checks the logs and exits with the verdict;
# the uninstall runs first and keeps the status cleanup reads.
trap 'keep_rc=$?; sys_uninstall; (exit $keep_rc); cleanup' EXIT

# Two runs of this test (other checkouts) must not install over each other.
lock=/run/lock/pisessionfs-install-test.lock
[[ -d /run/lock ]] || lock=/tmp/pisessionfs-install-test.lock
exec 9>"$lock"
flock -w 60 9 || die "another run of t_install holds $lock for over 60s"
for f in "${SYS_FILES[@]}" "${SHADOWS[@]}"; do
	if [[ -e $f || -L $f ]]; then
		die "$f exists and was not installed by this test; not replacing it (remove it to run this part)"
	fi
done
for d in /usr/local/share/man/man1 /usr/local/share/man /usr/local/share /usr/local/bin \
	/usr/local/lib/systemd/user /usr/local/lib/systemd /usr/local/lib; do
	[[ -d $d ]] || SYS_NEW_DIRS+=("$d")
done
# Recorded before make runs, so a half-done install is removed too.
SYS_INSTALLED=("${SYS_FILES[@]}")
fsx_out make -s -C "$REPO" install PREFIX=/usr/local BUILD="${BUILD_DIR#"$REPO"/}"
assert_eq "make install (PREFIX=/usr/local) succeeds" "0" "$RC$ERR"
assert_same_bytes /usr/local/bin/pisessionfs "$DAEMON"

# The daemon mount.fuse3 started: found by its arguments, which must be
# STORE MOUNTPOINT -o OPTIONS (the form main.c takes from mount(8)).
SYS_MNT=$T_DIR/sysmnt
mkdir -p "$SYS_MNT"
daemon_of() {
	python3 - "$1" <<'PY'
import os, sys
mnt = sys.argv[1]
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[:-1]
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        continue
    if len(argv) >= 3 and argv[0] == b"pisessionfs" and argv[2] == mnt.encode():
        print(pid, exe, *(a.decode() for a in argv[1:]))
PY
}
daemon_gone() {
	local pid=$1 i
	for ((i = 0; i < 100; i++)); do
		[[ -e /proc/$pid ]] || return 0
		sleep 0.05
	done
	return 1
}
mount_log=$T_DIR/mount-t.log
LOGS+=("$mount_log")
MOUNTS+=("$SYS_MNT")
RC=0
timeout -s KILL 20 mount -t fuse.pisessionfs "$STORE" "$SYS_MNT" >"$mount_log" 2>&1 </dev/null || RC=$?
assert_eq "mount -t fuse.pisessionfs STORE MOUNTPOINT succeeds" "0" "$RC$(head -c 500 "$mount_log")"
if is_mounted "$SYS_MNT"; then pass; else fail "$SYS_MNT is not mounted"; fi
assert_eq "the mount lists the store's sessions" "s" "$(fsx ls "$SYS_MNT/--w--" | grep -Ev '^(usage.*\.(csv|svg)|sessions.md|search)$')"
assert_contains "an entry reads through it" "installed" "$(fsx cat "$SYS_MNT/--w--/s/0001-user.a1.md")"
read -r pid exe a1 a2 a3 rest <<<"$(daemon_of "$SYS_MNT")" || true
assert_eq "mount ran the installed daemon" "/usr/local/bin/pisessionfs" "${exe:-none}"
assert_eq "with STORE MOUNTPOINT -o OPTIONS" "$STORE $SYS_MNT -o" "${a1:-} ${a2:-} ${a3:-}"
fsx_out umount "$SYS_MNT"
assert_eq "umount unmounts it" "0" "$RC$ERR"
assert_true "it is no longer mounted" bash -c "! grep -q ' $SYS_MNT ' /proc/self/mountinfo"
if [[ -n ${pid:-} ]] && daemon_gone "$pid"; then pass; else fail "the daemon (${pid:-not found}) did not exit after umount"; fi

# The fstab line of the README, with this test's paths: mount -T reads it
# from a file of its own instead of /etc/fstab.
line=$(grep -E '^[^ #]+ +[^ ]+ +fuse\.pisessionfs +[^ ]+ +[0-9] +[0-9]$' "$REPO/README.md" || true)
assert_eq "README.md shows one fstab line" 1 "$(grep -c . <<<"$line")"
read -r _ _ fstype fsopts dump pass_no <<<"$line"
printf '%s %s %s %s %s %s\n' "$STORE" "$SYS_MNT" "$fstype" "$fsopts" "$dump" "$pass_no" >"$T_DIR/fstab"
mount_log=$T_DIR/mount-fstab.log
LOGS+=("$mount_log")
RC=0
timeout -s KILL 20 mount -T "$T_DIR/fstab" "$SYS_MNT" >"$mount_log" 2>&1 </dev/null || RC=$?
assert_eq "mount MOUNTPOINT with the README's fstab line ($fsopts) succeeds" "0" "$RC$(head -c 500 "$mount_log")"
assert_eq "the fstab mount lists the store's sessions" "s" "$(fsx ls "$SYS_MNT/--w--" | grep -Ev '^(usage.*\.(csv|svg)|sessions.md|search)$')"
read -r pid exe rest <<<"$(daemon_of "$SYS_MNT")" || true
assert_eq "the fstab mount ran the installed daemon" "/usr/local/bin/pisessionfs" "${exe:-none}"
fsx_out umount "$SYS_MNT"
assert_eq "umount unmounts the fstab mount" "0" "$RC$ERR"
assert_true "it is no longer mounted" bash -c "! grep -q ' $SYS_MNT ' /proc/self/mountinfo"
if [[ -n ${pid:-} ]] && daemon_gone "$pid"; then pass; else fail "the daemon (${pid:-not found}) did not exit after umount"; fi

fsx_out make -s -C "$REPO" uninstall
assert_eq "make uninstall (PREFIX=/usr/local) succeeds" 0 "$RC$ERR"
for f in "${SYS_FILES[@]}"; do
	if [[ -e $f || -L $f ]]; then fail "make uninstall left $f"; else pass; fi
done

finish
