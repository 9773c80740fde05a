#!/usr/bin/env bash
# The Makefile, on a copy of the source tree: every object is rebuilt when
# a header it includes changes (the dependency files of -MMD), the unit
# tests' own headers included; and warnings are errors in a git checkout
# (and with WERROR=1, as run-tests.sh builds), not in a tree without .git
# (a release tarball, as distributions build it) or with WERROR=0.  Mounts
# nothing.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
# The Makefile's own behaviour is tested, not the caller's settings: the
# sanitized pass runs the tests from `make check SANITIZE=1` (MAKEFLAGS
# carries SANITIZE=1, which moves BUILD), and run-tests.sh exports WERROR=1.
unset MAKEFLAGS MFLAGS MAKELEVEL WERROR SANITIZE
SRC=$T_DIR/src-copy
mkdir -p "$SRC/tests"
cp -r "$REPO/Makefile" "$REPO/src" "$REPO/fs" "$SRC/"
cp -r "$REPO/tests/unit" "$SRC/tests/"

# stale TARGET: make -q says TARGET must be rebuilt (status 1).
stale() {
	local rc=0
	make -q -C "$SRC" "$1" >/dev/null 2>&1 || rc=$?
	[[ $rc == 1 ]]
}
# objects TARGET...: builds them, then checks make -q finds them up to date.
# Every file of the copy is then given the same time, a minute ago, so that
# a header touched afterwards is newer than every object, with no file in
# the future.
objects() {
	fsx_out make -s -C "$SRC" "$@"
	assert_eq "make $* succeeds" 0 "$RC$ERR"
	find "$SRC" -exec touch -h -d "@$(($(date +%s) - 60))" {} +
	local t
	for t in "$@"; do
		if stale "$t"; then fail "$t is out of date right after it was built"; else pass; fi
	done
}
# touched HEADER TARGET...: after HEADER changes every TARGET is out of date.
touched() {
	local header=$1 t
	shift
	touch "$SRC/$header"
	for t in "$@"; do
		if stale "$t"; then pass; else fail "$t is not rebuilt after $header changed"; fi
	done
}

UNIT_O=build/tests/unit/test_recover.o
CORE_O=build/src/recover.o
FS_O=build/fs/journal.o
TOOL_O=build/src/cli/pisession.o
objects "$UNIT_O" "$CORE_O" "$FS_O" "$TOOL_O"
touched tests/unit/helpers.h "$UNIT_O"
objects "$UNIT_O"
touched tests/unit/suites.h "$UNIT_O"
objects "$UNIT_O"
touched src/recover.h "$UNIT_O" "$CORE_O"
objects "$UNIT_O" "$CORE_O"
touched fs/overlay.h "$FS_O"
objects "$FS_O"
touched src/ps_error.h "$TOOL_O" "$CORE_O"
objects "$TOOL_O" "$CORE_O"
# An object built before dependency files were written (it has none) is
# rebuilt once.
rm "$SRC/build/fs/journal.d"
if stale "$FS_O"; then pass; else fail "$FS_O is not rebuilt without its dependency file"; fi
objects "$FS_O"
assert_true "the rebuild wrote its dependency file" test -f "$SRC/build/fs/journal.d"

# A header that goes away with its #include does not stop the build (-MP).
printf '/* a header that will go */\n' >"$SRC/fs/gone.h"
cp "$SRC/fs/journal.c" "$T_DIR/journal.c"
printf '#include "gone.h"\n' | cat - "$T_DIR/journal.c" >"$SRC/fs/journal.c"
objects "$FS_O"
rm "$SRC/fs/gone.h"
cp "$T_DIR/journal.c" "$SRC/fs/journal.c"
objects "$FS_O"

# --- -Werror where the code is worked on, not in distribution builds ---------
# werror DIR [VARS...]: how many compiles of make -n -B all in DIR pass
# -Werror (the defaults: the caller's WERROR is unset above).
werror() {
	local dir=$1
	shift
	make -n -B -C "$dir" BUILD="$T_DIR/werror-build" "$@" all 2>/dev/null | grep -c -- ' -Werror ' || true
}
if [[ -e $REPO/.git ]]; then
	assert_ne "a git checkout builds with -Werror" 0 "$(werror "$REPO")"
	assert_eq "a git checkout with WERROR=0 does not" 0 "$(werror "$REPO" WERROR=0)"
fi
assert_eq "a tree without .git (a release tarball) builds without -Werror" 0 "$(werror "$SRC")"
assert_ne "and with it when WERROR=1" 0 "$(werror "$SRC" WERROR=1)"
assert_contains "run-tests.sh (what CI runs) builds with WERROR=1" "export WERROR=1" "$(cat "$REPO/run-tests.sh")"

finish
