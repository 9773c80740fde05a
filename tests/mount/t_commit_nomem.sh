#!/usr/bin/env bash
# A commit that runs out of memory fails the close() that asked for it and
# appends nothing (issue 13: a failed malloc in psfs_commit_file made the
# close of a `name` saved by an editor report success and append nothing).
# The failure is injected: a preloaded strdup fails for one string while a
# flag file exists, so only the copy the commit makes at close fails.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

PY=$(python3 -c 'import sys; print(sys.executable)')
PROJ=--home-u-w--
mkdir -p "$STORE/$PROJ"
{
	header
	user_msg aaaa0001 null "alpha one"
	asst_msg aaaa0002 aaaa0001 "reply one"
} >"$STORE/$PROJ/s1.jsonl"
chmod 644 "$STORE/$PROJ/s1.jsonl"
F=$STORE/$PROJ/s1.jsonl
S=$MNT/$PROJ/s1

# The shim: built here, with the compiler that built the daemon.
SHIM=$T_DIR/failstrdup.so
cat >"$T_DIR/failstrdup.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
char *strdup(const char *s)
{
	static char *(*real)(const char *);
	const char *match = getenv("PSFS_FAIL_STRDUP"), *flag = getenv("PSFS_FAIL_FLAG");
	if (match && flag && strcmp(s, match) == 0 && access(flag, F_OK) == 0) {
		errno = ENOMEM;
		return NULL;
	}
	if (!real)
		real = (char *(*)(const char *))dlsym(RTLD_NEXT, "strdup");
	return real(s);
}
C
if ! "${CC:-cc}" -shared -fPIC -o "$SHIM" "$T_DIR/failstrdup.c" -ldl 2>"$T_DIR/cc.log"; then
	die "cannot build the strdup shim: $(cat "$T_DIR/cc.log")"
fi
FLAG=$T_DIR/fail-now
# The sanitizers' runtimes want to come first; the shim only wraps strdup.
mount_with "$MNT" env LD_PRELOAD="$SHIM" PSFS_FAIL_STRDUP="/$PROJ/s1/name" PSFS_FAIL_FLAG="$FLAG" \
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	"$DAEMON" --store "$STORE" -f -o auto_unmount "$MNT"

SHA=$(sha256sum <"$F")
# An editor's save of `name` with a backup (vim): put aside, written anew,
# closed.  The close runs out of memory.
fsx_out "$PY" - "$S" "$FLAG" <<'PYEOF'
import errno, os, sys
s, flag = sys.argv[1], sys.argv[2]
os.rename(s + "/name", s + "/name~")
fd = os.open(s + "/name", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"new title\n")
open(flag, "w").close()
try:
    os.close(fd)
    print("close ok")
except OSError as e:
    print("close failed:", errno.errorcode[e.errno])
finally:
    os.remove(flag)
PYEOF
assert_eq "the script ran ($ERR)" 0 "$RC"
# Either the close says it failed and nothing was appended, or it
# succeeded and the name is in the session: never success with nothing.
if [[ $OUT == "close ok"* ]]; then
	assert_contains "a close that succeeded appended the name" "new title" "$(cat "$F")"
else
	assert_eq "the close reports the lack of memory" "close failed: ENOMEM"$'\n' "$OUT"
	assert_eq "a failed close appended nothing" "$SHA" "$(sha256sum <"$F")"
	assert_contains "the log says why" "out of memory" "$(fsx cat "$MNT/.pisessionfs/log")"
	assert_eq "the text is kept in the file written" "new title" "$(fsx cat "$S/name")"
fi
finish
