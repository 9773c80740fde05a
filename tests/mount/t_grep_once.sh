#!/usr/bin/env bash
# What a recursive walk sees (docs/layout.md): grep -r, find, du, tar,
# rsync and cp -r meet each entry's text once, in its entry file, besides
# the session's context.json, transcript.md, tree.txt and session.jsonl and each
# fork's context.json.  entries/ and a fork's transcript.md answer by name
# and are left out of listings.
. "$(dirname "$0")/lib.sh" "$@"

here=$(cd "$(dirname "$0")" && pwd)
fixtures=$here/../data/fixtures
cp -r "$here/../../docs/examples/store/." "$STORE/"
mkdir -p "$STORE/--fixtures--"
cp "$fixtures"/*.jsonl "$STORE/--fixtures--/"
mount_fs "$STORE" "$MNT"

# Every message text of every session, walked through the mount with
# os.walk (readdir only, symlinks not followed, as grep -r does): each
# text is in exactly one entry file, and beyond it only in the files
# the rule allows.
TIMEOUT=$(scaled 120) fsx_out python3 - "$STORE" "$MNT" <<'EOF'
import json, os, re, sys
store, mnt = sys.argv[1:3]
entry_re = re.compile(r"^\d{4,}-.*\.md$")
bad, texts, files_read = [], 0, 0
for proj in sorted(os.listdir(store)):
    for f in sorted(os.listdir(os.path.join(store, proj))):
        stem = f[:-len(".jsonl")]
        top = os.path.join(mnt, proj, stem)
        seen = {}
        for d, dirs, names in os.walk(top):
            rel = os.path.relpath(d, top)
            rel = "" if rel == "." else rel
            if "entries" in dirs:
                bad.append("%s: entries/ listed" % d)
            if rel and "transcript.md" in names:
                bad.append("%s: a fork's transcript.md listed" % d)
            for n in names:
                if n.endswith((".png", ".jpg", ".gif", ".webp")) or os.path.islink(os.path.join(d, n)):
                    continue
                with open(os.path.join(d, n), "rb") as fh:
                    seen[os.path.join(rel, n)] = fh.read().decode("utf-8", "replace")
                files_read += 1
        lines = open(os.path.join(store, proj, f), encoding="utf-8").read().splitlines()
        wanted = []
        for line in lines[1:]:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            m = e.get("message") if isinstance(e, dict) else None
            if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
                continue
            c = m.get("content")
            parts = [c] if isinstance(c, str) else [b.get("text", "") for b in c or [] if isinstance(b, dict) and b.get("type") == "text"]
            for t in parts:
                first = t.strip().split("\n")[0].strip()
                if len(first) >= 16 and '"' not in first and "\\" not in first:
                    wanted.append(first)
        # Only texts that no other line holds (a tool's output pasted in
        # a message would be in two entry files, rightly).
        whole = "\n".join(lines)
        for t in wanted[::max(1, len(wanted) // 150)]:
            if whole.count(t) != 1:
                continue
            texts += 1
            hits = [p for p, body in seen.items() if t in body]
            entry_hits = [p for p in hits if entry_re.match(os.path.basename(p))]
            other = [p for p in hits if not entry_re.match(os.path.basename(p))
                     and p not in ("context.json", "transcript.md", "tree.txt", "session.jsonl")
                     and os.path.basename(p) != "context.json"]
            if len(entry_hits) != 1:
                bad.append("%s/%s: %r in %d entry files: %s" % (proj, stem, t[:40], len(entry_hits), entry_hits))
            if other:
                bad.append("%s/%s: %r also in %s" % (proj, stem, t[:40], other))
print("texts %d files %d" % (texts, files_read))
for b in bad[:20]:
    print("BAD " + b)
EOF
assert_eq "the checker ran" 0 "$RC"
assert_eq "every text once in an entry file, elsewhere only where allowed" "" "$(grep '^BAD' <<<"$OUT" || true)"
read -r _ texts _ files <<<"$(grep '^texts' <<<"$OUT")"
if ((${texts:-0} > 50)); then pass; else fail "only ${texts:-0} texts were checked: $OUT"; fi
echo "# $texts texts checked over $files files read"

S=$MNT/--home-user-demo-project--/2026-11-29T19-11-30-970Z_01a228b8-3699-77d4-8ab4-6586c2fad309
B=$S/0008~c34de545
F=$MNT/--fixtures--/$(basename "$(ls "$fixtures"/pi-1.6.0-v3-branched.jsonl)" .jsonl)

# grep -r over the whole mount: one question, and where it is found (the
# demo session and the fixture it was made from hold it).
fsx_out grep -rl "please run a command to list files" "$MNT"
assert_eq "grep -r over the mount: entry file, two contexts, transcript, tree, raw file" \
	"$(for d in "$S" "$F"; do printf '%s\n' "$d/0008~c34de545/context.json" "$d/0004-user.7bfd5a82.md" "$d/context.json" \
		"$d/session.jsonl" "$d/transcript.md" "$d/tree.txt"; done | sort)" "$(sort <<<"${OUT%$'\n'}")"

# The hidden names answer by name, for ls, cat, stat, cd and grep.
assert_true "ls entries/ lists" ls "$S/entries"
assert_eq "ls entries/ lists every entry" 13 "$(fsx ls "$S/entries" | wc -l)"
assert_eq "entries/<id>.json reads the stored line" "$(sed -n 5p "$STORE/--home-user-demo-project--/"*.jsonl)" "$(fsx cat "$S/entries/7bfd5a82.json")"
assert_true "stat of a fork's transcript.md" stat "$B/transcript.md"
assert_contains "a fork's transcript.md reads" "## User" "$(fsx cat "$B/transcript.md")"
assert_true "cd into entries/" bash -c "cd '$S/entries' && ls >/dev/null"
fsx_out grep -rl "please run a command to list files" "$S/entries"
assert_eq "grep -r of entries/ named on the command line walks it" "$S/entries/7bfd5a82.json" "${OUT%$'\n'}"
fsx_out ls -a "$S"
assert_eq "ls -a does not list entries either" "" "$(grep -x entries <<<"$OUT" || true)"

# The other walkers: find, du, tar, rsync, cp -r.
fsx_out find "$MNT" -path '*/entries*'
assert_eq "find meets no entries/" "" "$OUT"
fsx_out find "$MNT" -mindepth 4 -name transcript.md
assert_eq "find meets no fork's transcript.md" "" "$OUT"
assert_true "du -s of the mount" du -s "$MNT"
assert_true "tar of a session" tar -cf /dev/null -C "$S" .
assert_eq "tar holds no entries/ and no fork transcript" "" \
	"$(fsx tar -cf - -C "$S" . | tar -tf - | grep -E '^\./entries|~[^/]*/transcript\.md$' || true)"
mkdir -p "$T_DIR/copy"
assert_true "cp -r of a session" cp -r "$S" "$T_DIR/copy/"
assert_missing "$T_DIR/copy/$(basename "$S")/entries"
assert_exists "$T_DIR/copy/$(basename "$S")/0004-user.7bfd5a82.md"
fsx_out rsync -a --dry-run --out-format='%n' "$F/" "$T_DIR/rs/"
assert_eq "rsync -a of a branched session" 0 "$RC"
assert_eq "rsync sees no entries/ and no fork transcript" "" "$(grep -E '^entries|~[^/]*/transcript\.md$' <<<"$OUT" || true)"
forks=$(grep -c '~[^/]*/$' <<<"$OUT" || true)
if ((forks > 0)); then pass; else fail "the branched fixture shows no fork directory to rsync: $OUT"; fi

finish
