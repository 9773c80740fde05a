#!/usr/bin/env bash
# One session of 1,000,000 entries (--quick: 100,000), about 250 bytes a
# line (gen_million.py: a short main line, a fork that holds nearly every
# entry, side branches, labels, a name and one compaction near the end), on
# a real mount: the first listing (which indexes the file), a listing of the
# fork's directory (every entry a file), the leaf's context.json against
# what the generator computed and against the file's own last line, the
# leaf, the labels and the name; then an append outside the mount and one
# through it.  Every step has a time limit (a hang fails the test), the
# daemon must stay up and log no error, and the figures (generation, index,
# listing times, the daemon's peak and current RSS) are printed as notes.
#
#   t_million.sh DAEMON [--quick]      MILLION_ENTRIES=N overrides the size
# shellcheck disable=SC2016 # bash -c '...$1' on purpose
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh" "$@"

if ((QUICK)); then
	ENTRIES=${MILLION_ENTRIES:-100000}
else
	ENTRIES=${MILLION_ENTRIES:-1000000}
fi
# Time limits of the steps, seconds, for a million entries (times
# TIME_SCALE); a smaller session gets the same limits.  The listing of the
# fork's directory was the slow one (minutes) until readdir handed libfuse
# offsets: without them libfuse 3.14 walks its list of names from the start
# for every chunk the kernel asks for.  Now about a second.
LIMIT_INDEX=120
LIMIT_LIST=60
LIMIT_READ=120
LIMIT_APPEND=30
# The daemon's peak RSS must stay below this (MiB): it holds the index and,
# during the listing, libfuse's copy of every name with its attributes.
# AddressSanitizer's shadow memory and quarantine take about three times
# as much.
RSS_LIMIT_MB=$((ENTRIES / 2000 + 256))
if grep -qa __asan_init "$DAEMON"; then
	RSS_LIMIT_MB=$((RSS_LIMIT_MB * 4))
fi

P=--million--
F=$STORE/$P/big.jsonl
mkdir -p "$STORE/$P"
MAN=$T_DIR/manifest.json

# man KEY: a value of the generator's manifest.
man() {
	python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(" ".join(v) if isinstance(v, list) else v)' "$MAN" "$1"
}

# timed WHAT LIMIT CMD...: runs CMD under a time limit, stdout into $OUT;
# ELAPSED gets the milliseconds it took.  A failure or a timeout is a
# failed check.
timed() {
	local what=$1 limit rc=0 t0
	limit=$(scaled "$2")
	shift 2
	t0=$(now_ms)
	timeout -s KILL "$limit" "$@" >"$T_DIR/.timed" 2>"$T_DIR/.timed.err" || rc=$?
	ELAPSED=$(($(now_ms) - t0))
	OUT=$(cat "$T_DIR/.timed")
	if ((rc == 137)); then
		fail "$what: no answer within ${limit}s (hung?)"
	elif ((rc != 0)); then
		fail "$what: failed ($rc): $(head -c 600 "$T_DIR/.timed.err")"
	else
		pass "$what (${ELAPSED} ms)"
	fi
}

# rss: the daemon's VmHWM and VmRSS in MiB.
rss() {
	awk '/^VmHWM:/ { h = $2 } /^VmRSS:/ { r = $2 } END { printf "%d %d\n", h / 1024, r / 1024 }' "/proc/$PID/status"
}

t0=$(now_ms)
timeout -s KILL "$(scaled 300)" python3 "$STRESS_DIR/gen_million.py" "$F" "$ENTRIES" "$MAN" ||
	die "gen_million.py failed"
note "generated $(man entries) entries, $(($(stat -c %s "$F") / 1048576)) MiB, in $(($(now_ms) - t0)) ms"
RUN=$(man run_dir)

mount_fs "$STORE" "$MNT"
PID=$DAEMON_PID
S=$MNT/$P/big
note "daemon RSS at start: $(rss | awk '{ print $2 }') MiB"

# --- the first listing indexes the whole file -----------------------------------
timed "ls of the session directory (indexes the file)" $LIMIT_INDEX ls -A "$S"
T_INDEX=$ELAPSED
assert_contains "the fork is listed as its label" $'\n'"$RUN"$'\n' $'\n'"$OUT"$'\n'
assert_eq "the main line's entry files" 2002 "$(grep -c '^[0-9][0-9]*-.*\.md$' <<<"$OUT" || true)"
timed "ls of the session directory again" 30 ls -A "$S"
note "index: first ls ${T_INDEX} ms, second ${ELAPSED} ms; RSS after indexing (peak, now): $(rss) MiB"

# --- the fork's directory: every entry a file ------------------------------------
timed "stat of the fork's directory" 30 stat -c %F "$S/$RUN"
assert_eq "the fork is a directory" "directory" "$OUT"
timed "ls of the fork's directory" $LIMIT_LIST bash -c 'ls -A "$1" | wc -l' _ "$S/$RUN"
T_LIST=$ELAPSED
assert_eq "the fork's directory lists every entry, side branch and generated file" "$(man run_listing)" "$OUT"
note "ls of the fork's $(man run_listing) names: ${T_LIST} ms; RSS (peak, now): $(rss) MiB"

# --- the leaf and its context ---------------------------------------------------------
timed "readlink leaf" 30 readlink "$S/leaf"
assert_eq "the leaf is the last entry" "$RUN/$(man leaf_name)" "$OUT"
timed "cat context.json" $LIMIT_READ cat "$S/context.json"
T_CTX=$ELAPSED
printf '%s\n' "$OUT" >"$T_DIR/ctx.json"
# The expectation: the generator's count and first kept entry, and the
# file's own line of the last message on the path (the leaf, or just before
# it when the leaf is an extension's custom entry).
tail -n 1 "$F" >"$T_DIR/leaf.line"
tail -n 20 "$F" | grep -F "\"id\":\"$(man last_id)\"" >"$T_DIR/last.line" || true
py_checks python3 - "$T_DIR/ctx.json" "$MAN" "$T_DIR/last.line" <<'EOF'
import json, sys
ctx = json.load(open(sys.argv[1]))
man = json.load(open(sys.argv[2]))
last = json.loads(open(sys.argv[3]).read())
m = ctx.get("messages", [])
def check(what, ok, detail=""):
    print(("ok - " if ok else "not ok - ") + what + ("" if ok else ": " + detail))
check("context.json: the number of messages", len(m) == man["context_messages"],
      f"{len(m)} messages, expected {man['context_messages']}")
check("context.json: the compaction's summary comes first",
      bool(m) and m[0].get("role") == "compactionSummary" and man["first_kept"] in m[0].get("summary", "") and
      m[0].get("tokensBefore") == 123456, repr(m[:1])[:300])
check("context.json: the last message is the leaf's", bool(m) and m[-1] == last["message"],
      f"{json.dumps(m[-1:])[:300]} vs {json.dumps(last['message'])[:300]}")
check("context.json: the model and thinking level", ctx.get("model", {}).get("modelId") == "m" and
      ctx.get("thinkingLevel") == "medium", f"{ctx.get('model')!r} {ctx.get('thinkingLevel')!r}")
EOF
note "cat context.json ($(man context_messages) messages, $(wc -c <"$T_DIR/ctx.json") bytes): ${T_CTX} ms; RSS (peak, now): $(rss) MiB"
timed "the leaf's stored line" 30 cat "$S/entries/$(man leaf_id).json"
assert_eq "entries/<leaf>.json is the file's last line" "$(cat "$T_DIR/leaf.line")" "$OUT"
timed "labels" 30 ls "$S/labels"
assert_eq "the labels" "$(man labels | tr ' ' '\n' | sort)" "$(sort <<<"$OUT")"
timed "name" 30 cat "$S/name"
assert_eq "the name" "$(man name)" "$OUT"

# --- appends: outside the mount, then through it ------------------------------------
leaf=$(man leaf_id)
depth=$(man leaf_name)
depth=$((10#${depth%%-*}))
user_msg outside1 "$leaf" "appended outside" >>"$F"
t0=$(now_ms)
assert_poll "outside append: context.json ends with it" $LIMIT_APPEND bash -c 'tail -c 400 "$1" | grep -q "appended outside"' _ "$S/context.json"
note "outside append shown in context.json after $(($(now_ms) - t0)) ms; RSS (peak, now): $(rss) MiB"
timed "readlink leaf after the outside append" 30 readlink "$S/leaf"
assert_eq "outside append: the leaf" "$RUN/$(printf %04d $((depth + 1)))-user.outside1.md" "$OUT"

lines=$(wc -l <"$F")
timed "write a new entry through the mount" $LIMIT_APPEND bash -c 'echo "appended through the mount" >"$1"' _ "$S/$RUN/new.md"
T_WRITE=$ELAPSED
assert_eq "through the mount: one line appended" $((lines + 1)) "$(wc -l <"$F")"
note "write through the mount: ${T_WRITE} ms; RSS (peak, now): $(rss) MiB"
py_checks python3 - "$F" <<'EOF'
import json, sys
with open(sys.argv[1], "rb") as f:
    f.seek(-4096, 2)
    last = json.loads(f.read().split(b"\n")[-2])
ok = last.get("parentId") == "outside1" and last.get("message", {}).get("content") == "appended through the mount"
print(("ok - " if ok else "not ok - ") + "through the mount: a user message under the outside append" + ("" if ok else ": " + json.dumps(last)[:300]))
EOF
new_id=$(tail -n 1 "$F" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["id"])')
timed "readlink leaf after the write" 30 readlink "$S/leaf"
assert_eq "through the mount: the leaf" "$RUN/$(printf %04d $((depth + 2)))-user.$new_id.md" "$OUT"
timed "cat context.json after the appends" $LIMIT_READ bash -c 'python3 -c "import json,sys; m=json.load(sys.stdin)[\"messages\"]; print(len(m), m[-2][\"content\"], \"|\", m[-1][\"content\"])" <"$1"' _ "$S/context.json"
assert_eq "context.json after the appends" "$(($(man context_messages) + 2)) appended outside | appended through the mount" "$OUT"

# --- memory ---------------------------------------------------------------------------
read -r hwm now < <(rss)
note "daemon RSS: peak ${hwm} MiB, now ${now} MiB (limit ${RSS_LIMIT_MB} MiB)"
if ((hwm < RSS_LIMIT_MB)); then
	pass "peak RSS ${hwm} MiB is below ${RSS_LIMIT_MB} MiB"
else
	fail "peak RSS ${hwm} MiB is not below ${RSS_LIMIT_MB} MiB"
fi
if daemon_alive "$PID"; then pass "the daemon is alive"; else fail "the daemon died"; fi
finish
