#!/usr/bin/env bash
# Usage over time (#21 item 5): usage-daily.csv, usage-monthly.csv,
# usage-daily-models.csv and usage.svg at the root and in every project.
# Their rows per day (UTC, the day of the entry carrying the usage) and
# month and model, the same sums as usage.csv (summed over the days they
# are usage.csv's summed over the sessions), they follow an append, they
# hold only what the caller may read, a build after the first reads only the
# sessions that changed, and the picture is well-formed SVG
# that a real browser (headless Chromium) draws with each day's bar as tall
# as that day's cost.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
command -v setpriv >/dev/null || die "setpriv (util-linux) is needed"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[[ -n $CHROMIUM ]] || die "chromium is needed (tests/deps.sh --test installs it)"

# asst ID PARENT TIME MODEL INPUT OUTPUT CACHEREAD CACHEWRITE TOTAL COST
asst() {
	printf '{"type":"message","id":"%s","parentId":"%s","timestamp":"%s","message":{"role":"assistant","content":[{"type":"text","text":"answer"}],"api":"x","provider":"p","model":"%s","usage":{"input":%s,"output":%s,"cacheRead":%s,"cacheWrite":%s,"totalTokens":%s,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":%s}},"stopReason":"stop","timestamp":2}}\n' "$@"
}
# tool ID PARENT TIME INPUT COST: a tool result with usage of its own.
tool() {
	printf '{"type":"message","id":"%s","parentId":"%s","timestamp":"%s","message":{"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[{"type":"text","text":"ok"}],"isError":false,"usage":{"input":%s,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":%s,"cost":{"total":%s}},"timestamp":3}}\n' \
		"$1" "$2" "$3" "$4" "$(($4 + 1))" "$5"
}
mkdir -p "$STORE/--a--" "$STORE/--b--"
{
	header 3 11111111-2222-3333-4444-555555555551
	user_msg u1 null "one"
	asst a1 u1 2026-01-01T10:00:00.000Z m-alpha 100 10 1000 50 1160 1.25
	asst a2 a1 2026-01-02T23:30:00.000Z m-beta 200 20 0 0 220 0.5
} >"$STORE/--a--/s1.jsonl"
{
	header 3 11111111-2222-3333-4444-555555555552
	user_msg u1 null "two"
	asst a1 u1 2026-01-02T01:00:00.000Z m-alpha 300 30 0 100 430 2
	tool t1 a1 2026-01-02T01:05:00.000Z 10 0.25
	asst a2 t1 2026-02-03T12:00:00.000Z m-alpha 50 5 0 0 55 0.75
} >"$STORE/--a--/s2.jsonl"
{
	header 3 11111111-2222-3333-4444-555555555553
	user_msg u1 null "three"
	asst a1 u1 2026-01-01T05:00:00.000Z m-beta 1000 100 0 0 1100 3
} >"$STORE/--b--/s3.jsonl"
chmod 755 "$STORE" "$STORE"/*
let_others_reach "$MNT"
chmod 755 "$MNT"

# cache_sessions=1: a build that read its sessions would open their files
# again (the memo check below).
mount_fs "$STORE" "$MNT" -o allow_other -o cache_sessions=1

NEW="usage-daily.csv usage-daily-models.csv usage-monthly.csv usage.svg"
for d in "$MNT" "$MNT/--a--"; do
	names=$(ls_names "$d")
	for f in $NEW; do
		assert_contains "$d lists $f" "$f" "$names"
		assert_size "$d/$f"
	done
done

H='inputTokens,outputTokens,cacheCreationTokens,cacheReadTokens,totalTokens'
assert_file_content "$MNT/usage-daily.csv" "date,modelsUsed,$H,totalCost
2026-01-01,m-alpha;m-beta,1100,110,50,1000,2260,4.25
2026-01-02,m-alpha;m-beta;(tools/summaries),510,51,100,0,661,2.75
2026-02-03,m-alpha,50,5,0,0,55,0.75
"
assert_file_content "$MNT/usage-monthly.csv" "month,modelsUsed,$H,totalCost
2026-01,m-alpha;m-beta;(tools/summaries),1610,161,150,1000,2921,7.00
2026-02,m-alpha,50,5,0,0,55,0.75
"
assert_file_content "$MNT/usage-daily-models.csv" "date,modelName,$H,cost
2026-01-01,m-alpha,100,10,50,1000,1160,1.25
2026-01-01,m-beta,1000,100,0,0,1100,3.00
2026-01-02,m-alpha,300,30,100,0,430,2.00
2026-01-02,m-beta,200,20,0,0,220,0.50
2026-01-02,(tools/summaries),10,1,0,0,11,0.25
2026-02-03,m-alpha,50,5,0,0,55,0.75
"
assert_file_content "$MNT/--a--/usage-daily.csv" "date,modelsUsed,$H,totalCost
2026-01-01,m-alpha,100,10,50,1000,1160,1.25
2026-01-02,m-alpha;m-beta;(tools/summaries),510,51,100,0,661,2.75
2026-02-03,m-alpha,50,5,0,0,55,0.75
"
assert_file_content "$MNT/--b--/usage-monthly.csv" "month,modelsUsed,$H,totalCost
2026-01,m-beta,1000,100,0,0,1100,3.00
"

# sums_agree DIR: each token column summed over the rows of each new CSV
# is usage.csv's summed over its sessions; the costs within rounding.
sums_agree() {
	fsx python3 - "$1" <<'EOF'
import csv, sys
d = sys.argv[1]
def rows(name):
    with open(f"{d}/{name}", newline="") as f:
        return list(csv.DictReader(f))
sess = rows("usage.csv")
want = {k: sum(float(r[k]) for r in sess) for k in ("input", "output", "cacheWrite", "cacheRead", "cost")}
cols = {"input": "inputTokens", "output": "outputTokens", "cacheWrite": "cacheCreationTokens",
        "cacheRead": "cacheReadTokens"}
bad = []
for name, cost in (("usage-daily.csv", "totalCost"), ("usage-monthly.csv", "totalCost"),
                   ("usage-daily-models.csv", "cost")):
    got = rows(name)
    for k, c in cols.items():
        if sum(float(r[c]) for r in got) != want[k]:
            bad.append(f"{name} {c}")
    slack = 0.005 * (len(got) + len(sess)) + 1e-9
    if abs(sum(float(r[cost]) for r in got) - want["cost"]) > slack:
        bad.append(f"{name} {cost}")
print(" ".join(bad) or "ok")
EOF
}
for d in "$MNT" "$MNT/--a--" "$MNT/--b--"; do
	assert_eq "$d: the columns add up to usage.csv's" ok "$(sums_agree "$d")"
done

# --- the picture ---------------------------------------------------------------------
# svg_check SVG DAILY.CSV: well-formed XML, then drawn by Chromium: one bar
# per slot of the chart's time axis (day, week or month) that the daily
# file has usage in, at that slot's place on the calendar, each as tall
# (coloured pixels in its column of the plot) as its cost relative to the
# tallest, in as many colours as the slot has models.  Prints "ok" and
# the figures measured, or what is wrong.
svg_check() {
	local png=$T_DIR/shot.$RANDOM.png svg=$T_DIR/shot.svg
	fsx cat "$1" >"$svg" || { echo "cat $1 failed"; return; }
	local size
	size=$(python3 - "$svg" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
print(f"{root.get('width')},{root.get('height')}")
EOF
) || { echo "not well-formed XML"; return; }
	rm -rf "$T_DIR/chrome"
	timeout -s KILL "$(scaled_int 60)" "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--force-device-scale-factor=1 --user-data-dir="$T_DIR/chrome" --screenshot="$png" \
		--window-size="$size" "file://$svg" >"$T_DIR/chrome.log" 2>&1
	[[ -s $png ]] || { echo "chromium made no screenshot: $(tail -3 "$T_DIR/chrome.log")"; return; }
	python3 - "$svg" "$png" "$2" <<'EOF'
import csv, io, struct, sys, zlib, xml.etree.ElementTree as ET
svg, png, daily = sys.argv[1:4]
data = open(png, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
off, idat = 8, b""
while off < len(data):
    n, kind = struct.unpack(">I4s", data[off:off + 8])
    body = data[off + 8:off + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    off += 12 + n
assert depth == 8 and ctype in (2, 6) and not interlace, f"PNG kind {depth} {ctype} {interlace}"
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
px, prev = [], bytearray(stride)
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    px.append(line)
    prev = line
def rgb(x, y):
    return tuple(px[y][x * bpp:x * bpp + 3])
def coloured(x, y):
    r = rgb(x, y)
    return max(r) - min(r) > 40
if len({rgb(x, y) for x in range(0, w, 7) for y in range(0, h, 7)}) < 3:
    sys.exit("the screenshot is blank")
plot = next(e for e in ET.parse(svg).getroot().iter() if e.get("id") == "plot")
px0, py0 = int(plot.get("x")), int(plot.get("y"))
pw, ph = int(plot.get("width")), int(plot.get("height"))
heights, runs, cur = [], [], None
for x in range(px0, min(px0 + pw, w)):
    n = sum(coloured(x, y) for y in range(py0, min(py0 + ph + 1, h)))
    if n and cur is None:
        cur = [x, x, n]
    elif n:
        cur[1], cur[2] = x, max(cur[2], n)
    elif cur is not None:
        runs.append(cur)
        cur = None
if cur is not None:
    runs.append(cur)
# The daily rows summed into the chart's slots (days, weeks from Monday
# or months), each slot at its place on the calendar: a slot without
# usage is a gap as wide as a slot.
import datetime
unit, step = plot.get("data-unit"), int(plot.get("data-step"))
def slot(day):
    d = datetime.date.fromisoformat(day)
    if unit == "week":
        return (d - datetime.date(1970, 1, 5)).days // 7
    if unit == "month":
        return d.year * 12 + d.month - 1
    return d.toordinal()
slots = {}
for row in csv.DictReader(open(daily, newline="")):
    s = slots.setdefault(slot(row["date"]), [0.0, set(), row["date"]])
    s[0] += float(row["totalCost"])
    s[1].update(row["modelsUsed"].split(";"))
order = sorted(slots)
costs = [slots[k][0] for k in order]
if len(runs) != len(costs):
    sys.exit(f"{len(runs)} bars drawn for {len(costs)} {unit}s ({runs})")
top, ctop = max(r[2] for r in runs), max(costs)
worst = max(abs(r[2] / top - c / ctop) for r, c in zip(runs, costs))
if worst > 0.02:
    sys.exit(f"bar heights {[r[2] for r in runs]} do not follow the costs {costs}")
first = order[0]
for r, k in zip(runs, order):
    want = px0 + (k - first) * step + step / 2
    if abs((r[0] + r[1] + 1) / 2 - want) > 2:
        sys.exit(f"the bar of {slots[k][2]} is at x={(r[0] + r[1]) / 2}, its {unit} is at x={want}")
# A slot of several models is stacked: as many colours in its column.
for r, k in zip(runs, order):
    mid = (r[0] + r[1]) // 2
    colours = {rgb(mid, y) for y in range(py0, py0 + ph) if coloured(mid, y)}
    if len(colours) < len(slots[k][1]):
        sys.exit(f"{slots[k][2]}'s bar has colours {colours} for {sorted(slots[k][1])}")
print(f"ok unit={unit} heights={[r[2] for r in runs]} costs={costs} worst={worst:.4f} size={w}x{h}")
EOF
}
fsx cat "$MNT/usage-daily.csv" >"$T_DIR/daily.csv"
out=$(svg_check "$MNT/usage.svg" "$T_DIR/daily.csv" 2>&1 || true)
echo "svg check (root): $out"
assert_eq "chromium draws the root's usage.svg as usage-daily.csv says" ok "${out%% *}"
svg=$(fsx cat "$MNT/usage.svg")
assert_contains "the picture's title has the total" "total \$7.75" "$svg"
assert_contains "the legend names each model" "(tools/summaries) \$0.25" "$svg"

# --- each session's share is kept --------------------------------------------------
# By its file's stamp: building the files again opens no session file.
# opens_during CMD: how many times a session file of the store was opened or
# read while CMD ran (inotify on the project folders; as t_usage_size).
opens_during() {
	fsx python3 - "$1" "$STORE/--a--" "$STORE/--b--" <<'EOF'
import ctypes, os, struct, subprocess, sys
IN_ACCESS, IN_OPEN = 0x1, 0x20
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
for d in sys.argv[2:]:
    if fd < 0 or libc.inotify_add_watch(fd, os.fsencode(d), IN_ACCESS | IN_OPEN) < 0:
        sys.exit("inotify: " + os.strerror(ctypes.get_errno()))
if subprocess.run(["bash", "-c", sys.argv[1]]).returncode != 0:
    sys.exit("the command failed: " + sys.argv[1])
n = 0
while True:
    try:
        buf = os.read(fd, 65536)
    except BlockingIOError:
        break
    off = 0
    while off + 16 <= len(buf):
        wd, mask, cookie, size = struct.unpack_from("iIII", buf, off)
        name = buf[off + 16:off + 16 + size].rstrip(b"\0")
        off += 16 + size
        n += name.endswith(b".jsonl")
print(n)
EOF
}
NEWS=()
for f in $NEW; do
	NEWS+=("$MNT/$f" "$MNT/--a--/$f")
done
fsx cat "${NEWS[@]}" >/dev/null
# The file's time changes inside the counted window, by utimensat (which
# opens nothing): changed before it, the daemon's watcher may have read the
# file already (it re-reads a session it holds when it hears a change),
# and the build then has nothing left to read.
assert_eq "the opens counted are the daemon's (a build reads the session that changed)" yes \
	"$(n=$(opens_during "python3 -c 'import os, sys; os.utime(sys.argv[1])' '$STORE/--b--/s3.jsonl' &&
		cat '$MNT/usage-daily.csv' >/dev/null"); ((n > 0)) && echo yes || echo "no ($n)")"
assert_eq "a build after the first reads no unchanged session file" 0 "$(opens_during "cat ${NEWS[*]} >/dev/null")"

# --- appends are followed ------------------------------------------------------------
asst a3 a2 2026-01-05T08:00:00.000Z m-alpha 10 1 0 0 11 4.5 >>"$STORE/--a--/s1.jsonl"
day='^2026-01-05,m-alpha,10,1,0,0,11,4.50$'
assert_poll "the root's usage-daily.csv follows an append" 10 grep -q "$day" "$MNT/usage-daily.csv"
assert_poll "the project's usage-daily.csv follows an append" 10 grep -q "$day" "$MNT/--a--/usage-daily.csv"
assert_poll "usage-monthly.csv follows an append" 10 grep -q "^2026-01,.*,11.50$" "$MNT/usage-monthly.csv"
assert_poll "usage.svg follows an append" 10 grep -qF "total \$12.25" "$MNT/usage.svg"
for d in "$MNT" "$MNT/--a--"; do
	for f in $NEW; do
		assert_size "$d/$f"
	done
	assert_eq "$d: after the append the columns still add up" ok "$(sums_agree "$d")"
done
fsx cat "$MNT/--a--/usage-daily.csv" >"$T_DIR/daily.csv"
out=$(svg_check "$MNT/--a--/usage.svg" "$T_DIR/daily.csv" 2>&1 || true)
echo "svg check (--a-- after the append): $out"
assert_eq "chromium draws the project's usage.svg as its usage-daily.csv says" ok "${out%% *}"

# --- only what the caller may read -----------------------------------------------------
OWNER=52011
OTHER=52012
mkdir -p "$STORE/--c--"
{
	header 3 11111111-2222-3333-4444-555555555554
	user_msg u1 null "secret"
	asst a1 u1 2026-03-01T10:00:00.000Z m-secret 7 7 0 0 14 9
} >"$STORE/--c--/secret.jsonl"
chown "$OWNER:$OWNER" "$STORE/--c--/secret.jsonl"
chmod 600 "$STORE/--c--/secret.jsonl"
chmod 755 "$STORE/--c--"
assert_poll "the owner sees the session in usage-daily.csv" 10 \
	setpriv --reuid=$OWNER --regid=$OWNER --clear-groups -- grep -q m-secret "$MNT/usage-daily.csv"
for f in $NEW; do
	fsx_out setpriv --reuid=$OTHER --regid=$OTHER --clear-groups -- cat "$MNT/$f"
	assert_eq "another user reads $f" 0 "$RC"
	assert_eq "another user's $f has nothing of the session he may not read" "" "$(grep -E 'm-secret|2026-03' <<<"$OUT" || true)"
	fsx_out setpriv --reuid=$OTHER --regid=$OTHER --clear-groups -- cat "$MNT/--c--/$f"
	assert_eq "another user's --c--/$f has nothing of it" "" "$(grep -E 'm-secret|2026-03' <<<"$OUT" || true)"
done
fsx_out setpriv --reuid=$OWNER --regid=$OWNER --clear-groups -- cat "$MNT/--c--/usage-daily-models.csv"
assert_contains "the owner's --c--/usage-daily-models.csv has it" "2026-03-01,m-secret,7,7,0,0,14,9.00" "$OUT"

# --- a time axis ------------------------------------------------------------------------
# Days spaced by the calendar (--a--: 2026-01-01 .. 2026-02-03, empty days
# between are gaps, checked above); a span of a year in weeks, one of
# three years in months, each said in the title.
mkdir -p "$STORE/--year--" "$STORE/--years--"
{
	header 3 11111111-2222-3333-4444-555555555561
	user_msg u1 null "a year"
	asst a1 u1 2025-02-03T10:00:00.000Z m-alpha 1 1 0 0 2 1
	asst a2 a1 2025-02-05T10:00:00.000Z m-beta 1 1 0 0 2 2
	asst a3 a2 2025-06-10T10:00:00.000Z m-alpha 1 1 0 0 2 0.5
	asst a4 a3 2026-01-20T10:00:00.000Z m-alpha 1 1 0 0 2 4
} >"$STORE/--year--/y.jsonl"
{
	header 3 11111111-2222-3333-4444-555555555562
	user_msg u1 null "years"
	asst a1 u1 2023-03-03T10:00:00.000Z m-alpha 1 1 0 0 2 1
	asst a2 a1 2023-03-30T10:00:00.000Z m-alpha 1 1 0 0 2 1
	asst a3 a2 2026-01-20T10:00:00.000Z m-beta 1 1 0 0 2 3
} >"$STORE/--years--/y.jsonl"
assert_poll "a year's usage.svg is drawn in weeks" 10 grep -qF "Cost per week (UTC, from Monday)" "$MNT/--year--/usage.svg"
fsx cat "$MNT/--year--/usage-daily.csv" >"$T_DIR/daily.csv"
out=$(svg_check "$MNT/--year--/usage.svg" "$T_DIR/daily.csv" 2>&1 || true)
echo "svg check (--year--): $out"
assert_eq "chromium draws a year by weeks, on the calendar" ok "${out%% *}"
assert_contains "two days of one week are one bar" "unit=week" "$out"
assert_poll "three years' usage.svg is drawn in months" 10 grep -qF "Cost per month (UTC)" "$MNT/--years--/usage.svg"
fsx cat "$MNT/--years--/usage-daily.csv" >"$T_DIR/daily.csv"
out=$(svg_check "$MNT/--years--/usage.svg" "$T_DIR/daily.csv" 2>&1 || true)
echo "svg check (--years--): $out"
assert_eq "chromium draws three years by months, on the calendar" ok "${out%% *}"
assert_contains "--a-- is drawn in days" "Cost per day (UTC)" "$(fsx cat "$MNT/--a--/usage.svg")"

finish
