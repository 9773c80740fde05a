#!/usr/bin/env bash
# transcript.md (readable, grows with the session, tail -f follows it),
# usage.json and usage.csv (sums checked independently), and images as
# files decoded from the entries' base64.
. "$(dirname "$0")/lib.sh" "$@"

P=$STORE/--w--
mkdir -p "$P"
F=$P/s.jsonl
PNG_B64=$(printf 'not really a png but bytes \x00\x01\xff' | base64 -w0)
{
	header 3
	user_msg u1 null "first question"
	printf '{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"first answer"}],"api":"x","provider":"prov","model":"m1","usage":{"input":10,"output":5,"cacheRead":2,"cacheWrite":1,"totalTokens":18,"cost":{"input":0.1,"output":0.2,"cacheRead":0.01,"cacheWrite":0.02,"total":0.33}},"stopReason":"stop","timestamp":1}}\n'
	printf '{"type":"message","id":"u2","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":[{"type":"text","text":"look at this"},{"type":"image","data":"%s","mimeType":"image/png"}],"timestamp":2}}\n' "$PNG_B64"
	printf '{"type":"message","id":"a2","parentId":"u2","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"seen"}],"api":"x","provider":"prov2","model":"m2","usage":{"input":7,"output":3,"cacheRead":0,"cacheWrite":0,"totalTokens":10,"cost":{"input":0.07,"output":0.03,"cacheRead":0,"cacheWrite":0,"total":0.1}},"stopReason":"stop","timestamp":3}}\n'
} >"$F"
chmod 644 "$F"

mount_fs "$STORE" "$MNT"
S=$MNT/--w--/s
assert_contains "the transcript links the image file" "(0003-user.u2.images/1.png)" "$(fsx cat "$S/transcript.md")"
printf '{"type":"message","id":"a3","parentId":"u1","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"assistant","content":[{"type":"text","text":"other branch"}],"api":"x","provider":"prov","model":"m1","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0.001,"output":0.002,"cacheRead":0,"cacheWrite":0,"total":0.003}},"stopReason":"stop","timestamp":4}}\n' >>"$F"

# transcript.md
assert_poll "the root transcript follows the new leaf" 2 grep -q "other branch" "$S/transcript.md"
t=$(fsx cat "$S/0002~a3/transcript.md")
assert_contains "a branch's transcript holds its path" "first question" "$t"

# tail -f follows a growing transcript (the session root follows the leaf).
TAIL_OUT=$T_DIR/tail.out
timeout -s KILL 6 tail -F -n +1 -s 0.2 "$S/transcript.md" >"$TAIL_OUT" 2>/dev/null &
TAIL_PID=$!
sleep 0.6
printf '{"type":"message","id":"u9","parentId":"a3","timestamp":"2026-01-01T00:00:09.000Z","message":{"role":"user","content":"appended from outside","timestamp":9}}\n' >>"$F"
assert_poll "tail -f sees the entry appended by another process" 4 grep -q "appended from outside" "$TAIL_OUT"
kill "$TAIL_PID" 2>/dev/null || true
wait "$TAIL_PID" 2>/dev/null || true

# usage.json: every assistant message of every branch
expected=$(python3 - "$F" <<'PY'
import json, sys
t = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": 0.0}
for line in open(sys.argv[1]):
    e = json.loads(line)
    m = e.get("message") or {}
    if e.get("type") == "message" and m.get("role") == "assistant":
        u = m["usage"]
        for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens"):
            t[k] += u[k]
        t["cost"] += u["cost"]["total"]
print(t["input"], t["output"], t["cacheRead"], t["cacheWrite"], t["totalTokens"], round(t["cost"], 9))
PY
)
got=$(fsx cat "$S/usage.json" | python3 -c 'import json,sys; t=json.load(sys.stdin)["total"]; print(t["input"], t["output"], t["cacheRead"], t["cacheWrite"], t["totalTokens"], round(t["cost"], 9))')
assert_eq "usage.json totals equal an independent sum over the file" "$expected" "$got"
models=$(fsx cat "$S/usage.json" | python3 -c 'import json,sys; print(" ".join(sorted(m["provider"]+"/"+m["model"] for m in json.load(sys.stdin)["byModel"])))')
assert_eq "usage.json by provider and model" "prov/m1 prov2/m2" "$models"
csv=$(fsx cat "$MNT/--w--/usage.csv")
assert_eq "the project's usage.csv has a header and one row" 2 "$(printf '%s\n' "$csv" | wc -l)"
root_csv=$(fsx cat "$MNT/usage.csv")
assert_contains "the root usage.csv lists the session" "--w--,s," "$root_csv"
sum=$(printf '%s\n' "$root_csv" | python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
print(sum(int(r["input"]) for r in rows), round(sum(float(r["cost"]) for r in rows), 9))')
assert_eq "usage.csv sums equal usage.json" "$(cut -d' ' -f1 <<<"$expected") $(cut -d' ' -f6 <<<"$expected")" "$sum"

# images
assert_contains "the entry with an image has an images directory" "0003-user.u2.images" "$(fsx ls "$S")"
assert_eq "the image is listed with its extension" "1.png" "$(fsx ls "$S/0003-user.u2.images")"
printf '%s' "$PNG_B64" | base64 -d >"$T_DIR/expected.png"
assert_same_bytes "$T_DIR/expected.png" "$S/0003-user.u2.images/1.png"
assert_missing "$S/0002-assistant.a1.images"

finish
