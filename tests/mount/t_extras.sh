#!/usr/bin/env bash
# transcript.md (readable, grows with the session, tail -f follows it),
# usage.json and usage.csv (sums checked independently), and images as
# files decoded from the entries' base64, linked from the entry files and
# transcripts (links checked by check_image_links.py) and kept by edits.
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
print(sum(int(r["input"]) for r in rows), ",".join(r["cost"] for r in rows))')
# Costs in cents, as ccusage prints them: 0.433 is 0.43.
assert_eq "usage.csv sums equal usage.json, the cost in cents" "$(cut -d' ' -f1 <<<"$expected") $(python3 -c 'import sys; print("%.2f" % float(sys.argv[1]))' "$(cut -d' ' -f6 <<<"$expected")")" "$sum"

# images
assert_contains "the entry with an image has an images directory" "0003-user.u2.images" "$(fsx ls "$S")"
assert_eq "the image is listed with its extension" "1.png" "$(fsx ls "$S/0003-user.u2.images")"
printf '%s' "$PNG_B64" | base64 -d >"$T_DIR/expected.png"
assert_same_bytes "$T_DIR/expected.png" "$S/0003-user.u2.images/1.png"
assert_missing "$S/0002-assistant.a1.images"

# --- image links in entry files and transcripts ------------------------------
# A session with images in a user message, in a branch whose id needs
# escaping (u/2 is listed as u%2F2), in a tool result and in a custom
# message.  check_image_links.py reads every link as a viewer would, from
# the directory the .md file is in, and compares the bytes it reaches with
# the base64 data in the raw file.
cp "$(dirname "$0")/check_image_links.py" "$T_DIR/links.py"
G=$P/img.jsonl
GIF_B64=$(printf 'GIF89a tiny \x00\x01\x02' | base64 -w0)
JPG_B64=$(printf '\xff\xd8\xff jpeg-ish bytes' | base64 -w0)
WEBP_B64=$(printf 'RIFF webp bytes \x7f' | base64 -w0)
IMG_ID=22222222-3333-4444-5555-666666666666
{
	header 3 "$IMG_ID"
	printf '{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"two pictures"},{"type":"image","data":"%s","mimeType":"image/png"},{"type":"image","data":"%s","mimeType":"image/gif"}],"timestamp":1}}\n' "$PNG_B64" "$GIF_B64"
	asst_msg a1 u1 "nice pictures"
	printf '{"type":"message","id":"u/2","parentId":"u1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":[{"type":"text","text":"another"},{"type":"image","data":"%s","mimeType":"image/jpeg"}],"timestamp":3}}\n' "$JPG_B64"
	printf '{"type":"message","id":"t1","parentId":"u/2","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"read a file"},{"type":"image","data":"%s","mimeType":"image/webp"}],"isError":false,"timestamp":4}}\n' "$WEBP_B64"
	printf '{"type":"custom_message","id":"c1","parentId":"t1","timestamp":"2026-01-01T00:00:05.000Z","customType":"screen","content":[{"type":"image","data":"%s","mimeType":"image/png"}],"display":true}\n' "$PNG_B64"
	asst_msg a2 a1 "done"
} >"$G"
chmod 644 "$G"
GS=$MNT/--w--/img
assert_poll "the image session shows" 3 test -f "$GS/0001-user.u1.md"
BR=$GS/0002~u%2F2

md=$(fsx cat "$GS/0001-user.u1.md")
assert_contains "the entry file links image 1 beside it" \
	$'<!-- pi:image mimeType="image/png" bytes=' "$md"
assert_contains "the entry file links image 1 beside it" $'\n![image 1](0001-user.u1.images/1.png)\n' "$md"
assert_contains "the entry file links image 2 beside it" $'\n![image 2](0001-user.u1.images/2.gif)' "$md"
# the name holds %2F: the link is a URL, so % is written %25
assert_contains "a link to a name with an escape is URL-escaped" \
	'![image 1](0002-user.u%252F2.images/1.jpg)' "$(fsx cat "$BR/0002-user.u%2F2.md")"
assert_contains "a tool result links its image" '![image 1](0003-toolResult-read.t1.images/1.webp)' \
	"$(fsx cat "$BR/0003-toolResult-read.t1.md")"
assert_contains "a custom message links its image" '![image 1](0004-custom_message.c1.images/1.png)' \
	"$(fsx cat "$BR/0004-custom_message.c1.md")"
for f in "$GS/0001-user.u1.md" "$BR/0002-user.u%2F2.md" "$BR/0004-custom_message.c1.md"; do
	assert_size "$f"
done

fsx_out python3 "$T_DIR/links.py" "$G" "$GS"
assert_eq "every link in the session directory reaches its image's bytes" \
	"0 entry-links 5 transcript-links 7" "$RC ${OUT%$'\n'}"
# the same files seen through a view: the links do not depend on the path
fsx_out python3 "$T_DIR/links.py" "$G" "$MNT/by-id/$IMG_ID"
assert_eq "the links resolve through by-id too" "0 entry-links 5 transcript-links 7" "$RC ${OUT%$'\n'}"
fsx_out python3 "$T_DIR/links.py" "$G" "$BR"
assert_eq "a branch directory's transcript links reach the images" "0 entry-links 3 transcript-links 5" \
	"$RC ${OUT%$'\n'}"
assert_contains "the branch transcript links up and down the tree" \
	'![image 1](../0002~u%252F2/0003-toolResult-read.t1.images/1.webp)' "$(fsx cat "$BR/transcript.md")"

# Editing the text of an entry file through the mount keeps its images: the
# appended sibling holds the same image blocks (data and mimeType).
lines_before=$(wc -l <"$G")
fsx_out python3 - "$GS/0001-user.u1.md" <<'PY'
import sys
p = sys.argv[1]
text = open(p).read()
assert "two pictures\n" in text
with open(p, "w") as f:
    f.write(text.replace("two pictures\n", "two pictures, edited\n"))
PY
assert_eq "the edit with the links kept is accepted" "0" "$RC$ERR"
# sed -i (writes a temporary, renames it over) in a branch whose name has
# an escape: the custom message holds nothing but its image
fsx_out sed -i 's/^display: true$/display: false/' "$BR/0004-custom_message.c1.md"
assert_eq "sed -i of a custom message with an image is accepted" "0" "$RC$ERR"
fsx_out python3 - "$BR/0003-toolResult-read.t1.md" <<'PY'
import sys
p = sys.argv[1]
text = open(p).read()
with open(p, "w") as f:
    f.write(text.replace("read a file\n", "read a file (edited)\n"))
PY
assert_eq "the edit of a tool result with an image is accepted" "0" "$RC$ERR"
got=$(python3 - "$G" "$lines_before" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
old, new = lines[: int(sys.argv[2])], lines[int(sys.argv[2]):]
by_id = {e.get("id"): e for e in old}
def images(e):
    c = e["message"]["content"] if e["type"] == "message" else e["content"]
    return [b for b in c if b.get("type") == "image"], [b.get("text") for b in c if b.get("type") == "text"]
out = []
for e in new:
    orig = [o for o in old if o.get("parentId") == e.get("parentId") and o.get("type") == e.get("type")
            and o.get("id") != e.get("id") and images(o)[0]]
    if len(orig) != 1:
        out.append(f"no single original for {e.get('id')}")
        continue
    oi, ot = images(orig[0])
    ni, nt = images(e)
    out.append(f"{orig[0]['id']}: images {'same' if ni == oi and len(ni) else 'DIFFER'}, text {nt}")
print("; ".join(out))
PY
)
assert_eq "the appended entries keep the original image blocks" \
	"u1: images same, text ['two pictures, edited']; c1: images same, text []; t1: images same, text ['read a file (edited)']" "$got"

# The new entries' own files link their own images (fresh names, same bytes).
fsx_out python3 "$T_DIR/links.py" "$G" "$GS"
assert_eq "after the edits every link still reaches its image" "0 entry-links 9 transcript-links 20" \
	"$RC ${OUT%$'\n'}"

# Refused edits leave the file alone: a marker deleted (its link would be
# text and the image lost), a link to another entry's image.
size_before=$(stat -c %s "$G")
fsx_out python3 - "$GS/0001-user.u1.md" "$BR/0002-user.u%2F2.md" <<'PY'
import errno, sys
u1, u2 = sys.argv[1], sys.argv[2]
text = open(u1).read()
lines = text.split("\n")
gif_marker = [l for l in lines if l.startswith('<!-- pi:image mimeType="image/gif"')]
cases = {
    "marker deleted": "\n".join(l for l in lines if l not in gif_marker),
    "foreign link": text.replace("![image 2](0001-user.u1.images/2.gif)",
                                 "![image 1](0002-user.u%252F2.images/1.jpg)"),
}
for what, body in cases.items():
    try:
        with open(u1, "w") as f:
            f.write(body)
        print(f"{what}: accepted")
    except OSError as e:
        print(f"{what}: {errno.errorcode.get(e.errno)}")
PY
assert_eq "edits that would lose or invent an image are refused" $'marker deleted: EINVAL\nforeign link: EINVAL\n' "$OUT"
assert_eq "the refused edits appended nothing" "$size_before" "$(stat -c %s "$G")"
log=$(fsx cat "$MNT/.pisessionfs/log")
assert_contains "the log says why (marker)" "the link of image 2 has lost its image marker line" "$log"
assert_contains "the log says why (foreign link)" "is not the link of one of this entry's images" "$log"

# A label on the branch's first entry renames it in listings (0002~pics);
# the transcripts' links go through the id name, which keeps resolving, so
# no transcript byte changes and tail -f stays right.
fsx cat "$BR/transcript.md" >"$T_DIR/br-before.md"
fsx cat "$GS/transcript.md" >"$T_DIR/root-before.md"
fsx_out ln -s ../0002~u%2F2/0002-user.u%2F2.md "$GS/labels/pics"
assert_eq "a label on the branch's first entry is accepted" "0" "$RC$ERR"
assert_poll "the branch is listed by its label" 3 test -d "$GS/0002~pics"
assert_true "and keeps resolving by its id" test -d "$GS/0002~u%2F2"
fsx cat "$GS/0002~pics/transcript.md" >"$T_DIR/br-after.md"
assert_same_bytes "$T_DIR/br-before.md" "$T_DIR/br-after.md"
fsx cat "$GS/transcript.md" >"$T_DIR/root-after.md"
assert_eq "the session transcript only grew (by the label's note)" \
	"$(cat "$T_DIR/root-before.md")" "$(head -c "$(stat -c %s "$T_DIR/root-before.md")" "$T_DIR/root-after.md")"
fsx_out python3 "$T_DIR/links.py" "$G" "$GS"
assert_eq "after the label every link still reaches its image" "0 entry-links 9 transcript-links 20" \
	"$RC ${OUT%$'\n'}"

finish
