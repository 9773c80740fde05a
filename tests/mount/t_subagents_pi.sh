#!/usr/bin/env bash
# Subagent runs written by pi itself (tests/gen/gen_subagents.mjs: children
# made with pi's SessionManager in RUNID/run-N/session.jsonl, a fork made
# with createBranchedSession in forks/, artifacts named as pi-subagents
# 0.67.0's getArtifactPaths names them), against pi:
#   - every child's context.json deep-equals pi's buildSessionContext() of
#     its file, and its session.jsonl is the file byte for byte;
#   - every project lists exactly the session files pi's /resume lists (the
#     ones directly in the folder), and recent/ and sessions.md as many;
#   - the store's usage files add up to the sum over every session file,
#     top-level and nested, each counted once: usage.csv's cost column,
#     usage-monthly.csv's total, and usage.json's withSubagents;
#   - each run's output.md is the artifact's bytes.
. "$(dirname "$0")/lib.sh" "$@"
need_pi

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
fsx_out timeout -s KILL 120 "$PI_NODE" "$ROOT/tests/gen/gen_subagents.mjs" --sm "$PI_SESSION_MANAGER" \
	--store "$STORE" --seed 4242
assert_eq "the generator ran" 0 "$RC"
printf '%s' "$OUT" >"$T_DIR/gen.json"
mount_fs "$STORE" "$MNT"

# pi's context of every session file below a family folder, by header id.
: >"$T_DIR/pi.jsonl"
while IFS= read -r f; do
	pi_open "$f"
	printf '%s\n' "$OUT" | python3 -c 'import json,sys; o=json.load(sys.stdin); h=json.loads(open(sys.argv[1]).readline()); print(json.dumps({"id": h["id"], "file": sys.argv[1], "ok": o.get("ok"), "context": o.get("context")}))' "$f" >>"$T_DIR/pi.jsonl"
done < <(find "$STORE" -mindepth 3 -name '*.jsonl' -path '*/run-*/*' -o -mindepth 3 -name '*.jsonl' -path '*/forks/*' | sort)

cat >"$T_DIR/check.py" <<'EOF'
import json, os, sys
store, mnt, pi_file, gen_file = sys.argv[1:]
pi = {}
for line in open(pi_file):
    o = json.loads(line)
    pi[o["id"]] = o
gen = json.load(open(gen_file))
bad = []
def check(cond, what):
    if not cond:
        bad.append(what)

# Every child the mount shows, found through each parent's subagents/.
seen = {}
def walk(d, depth):
    sub = os.path.join(d, "subagents")
    if not os.path.isdir(sub):
        return
    for name in sorted(os.listdir(sub)):
        p = os.path.join(sub, name)
        if not os.path.isdir(p):
            continue
        h = json.load(open(os.path.join(p, "header.json")))
        seen[h["id"]] = p
        walk(p, depth + 1)
projects = [p for p in sorted(os.listdir(store)) if os.path.isdir(os.path.join(store, p))]
for proj in projects:
    top = sorted(f[:-6] for f in os.listdir(os.path.join(store, proj)) if f.endswith(".jsonl"))
    listed = sorted(n for n in os.listdir(os.path.join(mnt, proj)) if os.path.isdir(os.path.join(mnt, proj, n)) and n not in ("search", "subagent-artifacts"))
    check(listed == top, "%s lists %s, pi lists %s" % (proj, listed, top))
    for s in top:
        walk(os.path.join(mnt, proj, s), 1)
check(len(seen) == len(pi), "the mount shows %d children, the store has %d" % (len(seen), len(pi)))
contexts = 0
for cid, o in pi.items():
    p = seen.get(cid)
    if not p:
        bad.append("child %s (%s) is not under its parent's subagents/" % (cid, o["file"]))
        continue
    check(o["ok"], "pi could not open %s" % o["file"])
    got = json.load(open(os.path.join(p, "context.json")))
    check(got == o["context"], "%s/context.json differs from pi's buildSessionContext()" % p)
    contexts += 1
    check(open(os.path.join(p, "session.jsonl"), "rb").read() == open(o["file"], "rb").read(),
          "%s/session.jsonl is not the file's bytes" % p)

# The sum over every session file of the store, nested ones included.
def cost_of(path):
    total = 0.0
    for line in open(path):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        m = e.get("message") if e.get("type") == "message" else None
        if m and m.get("role") == "assistant":
            c = ((m.get("usage") or {}).get("cost") or {}).get("total")
            if isinstance(c, (int, float)):
                total += c
    return total
files = []
for dp, dn, fn in os.walk(store):
    if "subagent-artifacts" in dp.split(os.sep):
        continue
    files += [os.path.join(dp, f) for f in fn if f.endswith(".jsonl")]
raw = sum(cost_of(f) for f in files)
check(abs(raw - gen["total"]) < 1e-9, "the raw sum %r is not the generator's %r" % (raw, gen["total"]))
rows = [l.rstrip("\n").split(",") for l in open(os.path.join(mnt, "usage.csv"))][1:]
check(len(rows) == len(files), "usage.csv has %d rows for %d session files" % (len(rows), len(files)))
check(abs(sum(float(r[-1]) for r in rows) - raw) <= 0.005 * len(rows), "usage.csv's costs do not add up to %r" % raw)
monthly = [l.rstrip("\n").split(",") for l in open(os.path.join(mnt, "usage-monthly.csv"))][1:]
check(abs(sum(float(r[-1]) for r in monthly) - raw) <= 0.005 * len(monthly), "usage-monthly.csv's total is not %r" % raw)
with_sub = 0.0
for proj in projects:
    for f in os.listdir(os.path.join(store, proj)):
        if f.endswith(".jsonl"):
            u = json.load(open(os.path.join(mnt, proj, f[:-6], "usage.json")))
            with_sub += u.get("withSubagents", u["total"])["cost"]
check(abs(with_sub - raw) < 1e-9, "the top sessions' usage.json withSubagents add up to %r, not %r" % (with_sub, raw))
print("%d contexts compared, %d files, $%.6f" % (contexts, len(files), raw))
for b in bad:
    print("BAD: " + b)
EOF
fsx_out python3 "$T_DIR/check.py" "$STORE" "$MNT" "$T_DIR/pi.jsonl" "$T_DIR/gen.json"
assert_eq "the check ran" "0 " "$RC $ERR"
checked=$OUT
assert_eq "every child is pi's, and the usage adds up" "" "$(grep '^BAD' <<<"$checked")"
assert_contains "contexts were compared" "6 contexts compared, 9 files" "$checked"

# A run's output.md is the artifact's bytes.
art=$(find "$STORE" -path '*subagent-artifacts/*_output.md' | sort | head -n 1)
fsx_out grep -rlF --include='*.output.md' "$(head -c 40 "$art")" "$MNT"
assert_contains "a run's output.md is found under its parent" "/subagents/" "$OUT"
finish
