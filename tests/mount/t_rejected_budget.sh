#!/usr/bin/env bash
# The rejected texts kept in MOUNT/.pisessionfs/rejected (docs/layout.md
# "Refusals") are bounded: at most 64 of them and 64 MiB in all, the oldest
# dropped first; a text larger than that is kept cut to 64 MiB, ending in a
# note that says so, and the log line says so too.  -o rejected_kept=MIB
# sets the budget (the second half runs with 1 MiB).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

P=$STORE/--p--
mkdir -p "$P"
{ header; user_msg a null "hello"; } >"$P/s.jsonl"
cp "$P/s.jsonl" "$T_DIR/orig.jsonl"
mount_fs "$STORE" "$MNT"
S=$MNT/--p--/s/session.jsonl
R=$MNT/.pisessionfs/rejected
MIB=$((1 << 20))

# The interpreter itself, not a version manager's shim (slow to start).
PY=$(python3 -c 'import sys; print(sys.executable)')

# text NAME KIB [NAME KIB...]: files of one line that is not JSON, KIB KiB
# long.
text() {
	"$PY" -c 'import os, sys
for name, kib in zip(sys.argv[2::2], sys.argv[3::2]):
    n = int(kib) << 10
    tag = ("not json: %s " % name).encode()
    body = b"abcdefghijklmnopqrstuvwxyz" * (n // 26 + 1)
    with open(os.path.join(sys.argv[1], name), "wb") as f:
        f.write(tag + body[:n - len(tag) - 1] + b"\n")' "$T_DIR" "$@"
}

# append NAME...: appends each text to the session through the mount, one
# open/write/close each; every close must fail (EINVAL: not JSON).
append() {
	fsx_out "$PY" - "$S" "$@" <<'EOF'
import errno, os, sys
for name in sys.argv[2:]:
    data = open(os.path.join(os.environ["T_TEXTS"], name), "rb").read()
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
    done = 0
    while done < len(data):
        done += os.write(fd, data[done:])
    try:
        os.close(fd)
        print("accepted " + name)
    except OSError as e:
        if e.errno != errno.EINVAL:
            print("close: " + os.strerror(e.errno))
EOF
	assert_eq "appending $* is refused at close" "" "$OUT$ERR"
}
export T_TEXTS=$T_DIR

# kept: "N-NAME:SIZE" of every rejected text, by number.
kept() {
	local f
	for f in $(ls_names "$R" | sort -n); do
		printf '%s:%s ' "$f" "$(fsx stat -c %s "$R/$f")"
	done
}
# total: their bytes.
total() {
	local f sum=0
	for f in $(ls_names "$R"); do
		sum=$((sum + $(fsx stat -c %s "$R/$f")))
	done
	echo "$sum"
}

# --- the oldest go first when the bytes would pass 64 MiB -------------------
text A $((22 << 10)) B $((22 << 10)) C $((22 << 10))
append A B C
assert_eq "of 3 texts of 22 MiB, the latest 2 are kept" "2-session.jsonl:$((22 * MIB)) 3-session.jsonl:$((22 * MIB)) " "$(kept)"
assert_same_bytes "$T_DIR/B" "$R/2-session.jsonl"
assert_same_bytes "$T_DIR/C" "$R/3-session.jsonl"
assert_same_bytes "$T_DIR/orig.jsonl" "$P/s.jsonl"
umount_fs "$MNT"
rm -f "$T_DIR/A" "$T_DIR/B" "$T_DIR/C"

# --- a text larger than the budget is kept cut, with a note ----------------
mount_fs "$STORE" "$MNT" -o rejected_kept=1
text D 1500
append D
assert_eq "a 1500 KiB text is kept alone, cut to 1 MiB" "1-session.jsonl:$MIB " "$(kept)"
fsx tail -c 200 "$R/1-session.jsonl" >"$T_DIR/D.tail"
note=$(grep -a 'pisessionfs: the text was cut here' "$T_DIR/D.tail" || true)
keep=$(sed -n 's/.*cut here: \([0-9]*\) of its \([0-9]*\) bytes are kept.*/\1 \2/p' <<<"$note")
assert_eq "the note at its end says how much of it is kept" "$((1500 << 10))" "${keep#* }"
if [[ -n $keep ]]; then
	fsx head -c "${keep% *}" "$R/1-session.jsonl" >"$T_DIR/D.kept"
	assert_eq "what is kept is the text's beginning" "$(head -c "${keep% *}" "$T_DIR/D" | sha256sum)" "$(sha256sum <"$T_DIR/D.kept")"
	assert_eq "the note follows it" "$(printf '\n[pisessionfs: the text was cut here: %s of its %s bytes are kept]\n' "${keep% *}" "${keep#* }")" \
		"$(fsx tail -c +$((${keep% *} + 1)) "$R/1-session.jsonl")"
fi
assert_contains "the log says it was cut" \
	"(your text is kept in $MNT/.pisessionfs/rejected/1-session.jsonl, cut to its first ${keep% *} of $((1500 << 10)) bytes: the rejected texts kept are at most 1 MiB)" \
	"$(fsx cat "$MNT/.pisessionfs/log")"
rm -f "$T_DIR/D" "$T_DIR/D.kept"

# --- and never more than 64 texts -------------------------------------------
names=()
for i in $(seq 1 65); do
	printf 'not json %s\n' "$i" >"$T_DIR/small$i"
	names+=("small$i")
done
append "${names[@]}"
listed=$(ls_names "$R" | sort -n)
assert_eq "of 65 small texts the latest 64 are kept" "64 3-session.jsonl 66-session.jsonl" \
	"$(grep -c . <<<"$listed") $(head -1 <<<"$listed") $(tail -1 <<<"$listed")"
assert_eq "the last one holds its text" "not json 65" "$(fsx cat "$R/66-session.jsonl")"
if (($(total) <= MIB)); then pass; else fail "the rejected texts hold $(total) bytes"; fi
assert_same_bytes "$T_DIR/orig.jsonl" "$P/s.jsonl"
umount_fs "$MNT"

finish
