#!/usr/bin/env python3
"""The mount's tree against pi, for the reliability tests.

    check_tree.py --mount MOUNT --store STORE --expect EXPECT.json [--op-timeout S]

EXPECT.json comes from `pi_tool.mjs expect` (gen.mjs's format).  Every
session in it is checked with tests/diff/check.py's SessionCheck (imported,
not copied): every entry id appears exactly once in the tree, in the
directory and with the depth and kind the layout rules give for pi's tree;
context.json of every tree directory equals pi's; leaf, labels/, name,
header.json, entries/, session.jsonl (byte for byte) and an empty problems
file.  Then the listing: the mount root lists the store's project
directories (besides .pisessionfs and the navigation views by-id, by-name,
by-cwd, recent) and each project directory its *.jsonl files, as
directories (files the daemon adds, such as usage.csv, are not compared).

Prints "ok - ..." / "not ok - ..." per session; exit status 1 on a failure.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "diff"))
import check  # noqa: E402  tests/diff/check.py

VIEWS = {".pisessionfs", "by-id", "by-name", "by-cwd", "recent", "search"}

# Names the daemon generates besides those of layout.md's tree (summary
# files that other features add, e.g. transcript.md, usage.json): tolerated
# (not required) in session and tree directories, and reported as a note.
EXTRA_SEEN = set()
_listdir = check.fs_listdir


def _filtered_listdir(p):
    names = _listdir(p)
    if os.path.basename(p.rstrip("/")) in ("labels", "entries"):
        return names
    out = []
    for n in names:
        if check.ENTRY_RE.match(n) or check.BRANCH_RE.match(n) or n in check.ROOT_EXTRA or n in check.SUB_EXTRA:
            out.append(n)
        elif "." in n and not n.startswith("."):
            EXTRA_SEEN.add(n)  # a generated summary file
        else:
            out.append(n)
    return out


check.fs_listdir = _filtered_listdir

# Blank lines (which pi skips) would shift check.py's line numbering: the
# store file's lines are taken without them (session.jsonl is still
# compared byte for byte).
_load_store = check.SessionCheck.load_store


def _load_store_skipping_blank(self):
    with open(self.store_file, "rb") as f:
        self.raw = f.read()
    self.lines = [l for l in self.raw.split(b"\n") if l.strip() != b""]
    if len(self.lines) != len(self.s["entries"]) + 1:
        raise RuntimeError("%s: %d lines, %d entries in expectations" % (self.store_file, len(self.lines), len(self.s["entries"])))


check.SessionCheck.load_store = _load_store_skipping_blank


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mount", required=True)
    ap.add_argument("--store", required=True)
    ap.add_argument("--expect", required=True)
    ap.add_argument("--op-timeout", type=float, default=20)
    a = ap.parse_args()
    sys.stdout.reconfigure(errors="backslashreplace")
    check.WD = check.Watchdog(a.op_timeout)
    check.WD.on_fire = lambda: print("not ok - a file-system call hung (see above)")
    with open(a.expect, encoding="utf-8") as f:
        sessions = json.load(f)["sessions"]
    fails = 0
    total = check.Stats()
    for sess in sessions:
        st = check.Stats()
        c = check.SessionCheck(sess, a.mount, a.store, st, False)
        c.alias_check = True
        try:
            c.run()
        except check.Failed:
            pass
        except OSError as ex:
            c.failures.append("I/O error: %s" % ex)
        tag = "%s/%s" % (sess["project"], sess["session"])
        if c.failures:
            fails += 1
            msgs = [m if len(m) < 700 else m[:700] + "...(%d chars)" % len(m) for m in c.failures]
            print("not ok - tree of %s (%d entries): %s" % (tag, len(sess["entries"]), " | ".join(msgs)))
        else:
            print("ok - tree of %s: %d entries, each once and where pi's tree puts it; %d contexts equal pi's" % (
                tag, len(sess["entries"]), st.contexts))
        for k in ("entries", "contexts", "files"):
            setattr(total, k, getattr(total, k) + getattr(st, k))

    # The listing (views and the daemon's own directory aside).
    want = {}
    for p in sorted(os.listdir(a.store)):
        pp = os.path.join(a.store, p)
        if os.path.isdir(pp) and not os.path.islink(pp):
            want[p] = sorted(f[:-6] for f in os.listdir(pp)
                             if f.endswith(".jsonl") and os.path.isfile(os.path.join(pp, f)) and not os.path.islink(os.path.join(pp, f)))
    isdir = lambda p: check.WD.call("isdir", p, os.path.isdir, p) and not os.path.islink(p)  # noqa: E731
    have = {n for n in _listdir(a.mount) if isdir(os.path.join(a.mount, n))} - VIEWS
    bad = ["%s listed, not in the store" % p for p in sorted(have - set(want))]
    bad += ["%s in the store, not listed" % p for p in sorted(set(want) - have)]
    for p in sorted(set(want) & have):
        got = {n for n in _listdir(os.path.join(a.mount, p)) if isdir(os.path.join(a.mount, p, n))} - {"search"}
        bad += ["%s/%s listed, no such session file" % (p, n) for n in sorted(got - set(want[p]))]
        bad += ["%s/%s: session file not listed" % (p, n) for n in sorted(set(want[p]) - got)]
    if bad:
        fails += 1
        print("not ok - the listing differs from the store: %s" % "; ".join(bad[:10]))
    else:
        print("ok - the mount lists the store's %d project directories and %d session files" % (len(want), sum(len(v) for v in want.values())))
    print("# checked %d entries, %d contexts, %d files read" % (total.entries, total.contexts, total.files))
    if EXTRA_SEEN:
        print("# generated files besides layout.md's tree, not checked: %s" % ", ".join(sorted(EXTRA_SEEN)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
