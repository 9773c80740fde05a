#!/usr/bin/env bash
# Parallel readers: two `grep -r` loops and two `find` loops over the whole
# mount (plus a reader of context.json files) for a few seconds, while
# another project is being appended to, must see exactly what sequential
# runs see.  Then the same with a session cache of one (every acquire
# evicts), and no daemon error either time.
# shellcheck disable=SC2317 # functions run by name (bash -c, background)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

FIXDIR=$(cd "$(dirname "$0")/../data/fixtures" && pwd)
DURATION=${CONCURRENCY_SECONDS:-3}
RUN_LIMIT=$(scaled 20) # one reader's run over the whole mount, seconds
for p in --a-- --b--; do
	mkdir -p "$STORE/$p"
	cp "$FIXDIR/pi-1.6.0-v3-branched.jsonl" "$STORE/$p/v3.jsonl"
	cp "$FIXDIR/pi-v1-large-session.jsonl" "$STORE/$p/v1-large.jsonl"
done
cp "$FIXDIR/pi-v1-before-compaction.jsonl" "$STORE/--a--/v1-compaction.jsonl"
# The project that grows while the readers run; the readers leave it out.
mkdir -p "$STORE/--growing--"
G=$STORE/--growing--/g.jsonl
{ header; user_msg g0 null "growing start"; } >"$G"

# The readers' commands; each prints a sorted result.  The growing session
# is left out, and so are the root's views, usage.csv and sessions.md,
# which follow it.
prune() { printf '%s\n' -path "$1/--growing--" -prune -o -path "$1/by-*" -prune -o -path "$1/recent" -prune \
	-o -path "$1/usage.csv" -prune -o -path "$1/sessions.md" -prune -o -path "$1/.pisessionfs" -prune -o; }
skip() { printf '%s\n' --exclude-dir=--growing-- --exclude-dir=by-id --exclude-dir=by-name --exclude-dir=by-cwd \
	--exclude-dir=recent --exclude-dir=.pisessionfs --exclude=usage.csv --exclude=sessions.md; }
grep_a() { local x; mapfile -t x < <(skip); grep -r "${x[@]}" -l "AgentSession" "$1" | sort; }
grep_b() { local x; mapfile -t x < <(skip); grep -r "${x[@]}" -c "tool-output" "$1" | sort; }
find_all() { local p; mapfile -t p < <(prune "$1"); find "$1" "${p[@]}" -print | sort; }
stat_all() { local p; mapfile -t p < <(prune "$1"); find "$1" "${p[@]}" -type f -printf '%s %p\n' | sort; }
ctx_all() { local p; mapfile -t p < <(prune "$1"); find "$1" "${p[@]}" -name context.json -exec cat {} + | sha256sum; }
export -f prune skip grep_a grep_b find_all stat_all ctx_all

# loop NAME CMD: runs `CMD $MNT` (each run bounded) until the deadline and
# counts runs and results that differ from the sequential baseline.
loop() {
	local name=$1 cmd=$2 runs=0 bad=0 rc
	local deadline=$(($(date +%s) + DURATION))
	while (($(date +%s) < deadline)); do
		rc=0
		timeout -s KILL "$RUN_LIMIT" bash -c "$cmd \"\$1\"" _ "$MNT" >"$T_DIR/$name.out" 2>"$T_DIR/$name.err" || rc=$?
		runs=$((runs + 1))
		if ((rc != 0)) || [[ -s $T_DIR/$name.err ]] || ! cmp -s "$T_DIR/$name.out" "$T_DIR/$cmd.base"; then
			bad=$((bad + 1))
			cp "$T_DIR/$name.out" "$T_DIR/$name.bad.$bad"
			{ echo "status $rc"; head -5 "$T_DIR/$name.err"; } >"$T_DIR/$name.bad.$bad.why"
		fi
	done
	echo "$runs $bad $cmd" >"$T_DIR/$name.result"
}

# grow: appends to the growing session until the deadline.
grow() {
	local i=0 parent=g0
	local deadline=$(($(date +%s) + DURATION))
	while (($(date +%s) < deadline)); do
		i=$((i + 1))
		user_msg "g$i" "$parent" "growing $i" >>"$G"
		parent=g$i
		sleep 0.01
	done
	echo "$i" >"$T_DIR/grow.result"
}

phase() {
	local label=$1 cmd name
	shift
	mount_fs "$STORE" "$MNT" "$@"
	# Sequential baselines.
	for cmd in grep_a grep_b find_all stat_all ctx_all; do
		fsx bash -c "$cmd \"\$1\"" _ "$MNT" >"$T_DIR/$cmd.base" 2>"$T_DIR/$cmd.err" || fail "$label: sequential $cmd failed: $(head -3 "$T_DIR/$cmd.err")"
	done
	if (($(grep -c . "$T_DIR/grep_a.base") > 100)); then pass; else fail "$label: the baseline grep found only $(grep -c . "$T_DIR/grep_a.base") files"; fi
	if (($(wc -l <"$T_DIR/find_all.base") > 2500)); then pass; else fail "$label: find saw only $(wc -l <"$T_DIR/find_all.base") paths"; fi
	# In parallel.
	local pids=()
	loop grep1 grep_a & pids+=($!)
	loop grep2 grep_b & pids+=($!)
	loop find1 find_all & pids+=($!)
	loop find2 stat_all & pids+=($!)
	loop ctx1 ctx_all & pids+=($!)
	grow & pids+=($!)
	local p
	for p in "${pids[@]}"; do
		wait "$p" || fail "$label: a background loop failed"
	done
	for name in grep1 grep2 find1 find2 ctx1; do
		read -r runs bad cmd <"$T_DIR/$name.result" || { fail "$label: $name left no result"; continue; }
		if ((runs >= 1)); then pass; else fail "$label: $name never ran"; fi
		if ((bad == 0)); then
			pass
		else
			fail "$label: $name: $bad of $runs parallel runs differ from the sequential one; first: $(cat "$T_DIR/$name.bad.1.why") $(diff "$T_DIR/$name.bad.1" "$T_DIR/$cmd.base" | head -5)"
		fi
	done
	# The growing session kept up.
	local n
	n=$(cat "$T_DIR/grow.result")
	assert_poll "$label: the growing session shows its last append" 2 test -f "$MNT/--growing--/g/$(printf '%04d' $((n + 1)))-user.g$n.md"
	# And sequential runs still agree afterwards.
	for cmd in grep_a find_all ctx_all; do
		fsx bash -c "$cmd \"\$1\"" _ "$MNT" >"$T_DIR/$cmd.after" 2>/dev/null || true
		assert_same_bytes "$T_DIR/$cmd.after" "$T_DIR/$cmd.base"
	done
	umount_fs "$MNT"
	{ header; user_msg g0 null "growing start"; } >"$G"
}

phase "default cache"
phase "cache of one session" -o cache_sessions=1

finish
