#!/usr/bin/env bash
# shellcheck disable=SC2016 # bash -c scripts get their arguments as $1
# The README and the man page as a new user meets them (issue 22, item 4):
#   1. ./quickstart.sh, in a home of its own with no pi store, mounts a copy
#      of the demo store at ~/pi-sessions; on a machine without Check
#      (pkg-config knows no "check") it says nothing about Check, which only
#      the unit tests need; and the commands of its "try:" hint work;
#   2. every transcript of the README from "What you see" up to "Command
#      line", run in order as pasted into bash, prints what the README
#      shows (tests/mount/readme_transcript.py: the home, ls -l's owners
#      and times, and ids made on the way are made the same first);
#   3. the man page's fstab line is one line as man prints it at 80
#      columns, and the README's fstab line is a valid one.
. "$(dirname "$0")/lib.sh" "$@"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
H=$T_DIR/home
MP=$H/pi-sessions
mkdir -p "$H" "$T_DIR/bin"
for tool in jq column man; do
	command -v "$tool" >/dev/null || die "$tool is missing (tests/deps.sh --test)"
done

# --- 1. quickstart --------------------------------------------------------------
# A pkg-config that has never heard of Check, as on a fresh machine.
real_pkg_config=$(command -v pkg-config)
cat >"$T_DIR/bin/pkg-config" <<EOS
#!/bin/sh
for a; do
	if [ "\$a" = check ]; then
		echo "Package check was not found in the pkg-config search path." >&2
		exit 1
	fi
done
exec $real_pkg_config "\$@"
EOS
chmod +x "$T_DIR/bin/pkg-config"
MOUNTS+=("$MP") # unmounted at exit whatever happens
(
	TIMEOUT=$(scaled 600)
	fsx_out env -u PI_CODING_AGENT_DIR -u PI_CODING_AGENT_SESSION_DIR -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		PATH="$T_DIR/bin:$PATH" HOME="$H" XDG_CACHE_HOME="$H/cache" "$REPO/quickstart.sh"
	printf '%s' "$RC" >"$T_DIR/qs.rc"
	printf '%s' "$OUT" >"$T_DIR/qs.out"
	printf '%s' "$ERR" >"$T_DIR/qs.err"
)
QS_OUT=$(cat "$T_DIR/qs.out" "$T_DIR/qs.err")
assert_eq "quickstart succeeds" 0 "$(cat "$T_DIR/qs.rc")"
assert_contains "it mounts the demo copy at ~/pi-sessions" "is mounted at $MP" "$QS_OUT"
assert_eq "it says nothing about Check, which only the tests need" "" "$(grep -i 'package check' <<<"$QS_OUT" || true)"
hint=$(sed -n 's/^  try: *//p' <<<"$QS_OUT")
assert_ne "it gives a hint" "" "$hint"
fsx_out env HOME="$H" bash -c "$hint"
assert_eq "the hint's commands work ($hint)" 0 "$RC"
assert_eq "... and print no error" "" "$ERR"
assert_contains "... and show the demo session's name" "List files demo" "$OUT"

# --- 2. the README's transcripts, in order -------------------------------------
python3 "$LIB_DIR/readme_transcript.py" script "$REPO/README.md" "What you see" "Command line" "$T_DIR/readme.sh" ||
	die "no transcripts found in README.md"
(
	TIMEOUT=$(scaled 120)
	fsx env HOME="$H" LC_ALL=C.UTF-8 bash "$T_DIR/readme.sh" >"$T_DIR/readme.out" 2>&1 || true
)
while IFS= read -r line; do
	case $line in
	"ok "*) pass ;;
	"not ok "*) fail "the README's transcript: ${line#not ok }" ;;
	*) printf '%s\n' "$line" >&2 ;;
	esac
done < <(python3 "$LIB_DIR/readme_transcript.py" compare "$REPO/README.md" "What you see" "Command line" \
	"$T_DIR/readme.out" "$H" "$REPO/docs/examples/store")

# --- 3. fstab lines -------------------------------------------------------------
# The man page's, as its source writes it (\- is -, fonts dropped).
man_line=$(grep 'fuse\.pisessionfs *noauto' "$REPO/docs/pisessionfs.1" | sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g')
assert_eq "the man page has one fstab line" 1 "$(grep -c . <<<"$man_line")"
shown=$(MANWIDTH=80 man -l "$REPO/docs/pisessionfs.1" 2>/dev/null | sed 's/^ *//')
assert_contains "man at 80 columns prints the fstab line whole, on one line" $'\n'"$man_line"$'\n' $'\n'"$shown"$'\n'
readme_line=$(grep -E '^/[^ ]+ +/[^ ]+ +fuse\.pisessionfs ' "$REPO/README.md" | head -n 1)
for l in "$man_line" "$readme_line"; do
	read -r -a f <<<"$l"
	assert_eq "an fstab line has six fields: $l" 6 "${#f[@]}"
	assert_eq "... its type is fuse.pisessionfs" fuse.pisessionfs "${f[2]:-}"
done

finish
