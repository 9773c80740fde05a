#!/usr/bin/env python3
"""Where the entries written during a run hang, per writer (t_sshfs.sh).

    branches.py --session FILE --base BASE --log NAME=LOG... [--stale-ok NAME]...

Every line of FILE after BASE (a copy taken before the run) is given to
the writer that wrote it (writer.py's md texts and raw ids, pi_tool.mjs's
ids, from their logs).  A line *continues* the tree when its parent had no
child before it in the file, and *forks* when its parent already had one:
an md file written into a session directory is meant to hang under the
directory's tip, so an md line that forks was appended by a daemon whose
view of the file's end was stale (or that lost a race to another writer
between re-reading the end and writing): an unintended branch.  pi keeps
its own leaf and never re-reads the file, so its lines fork whenever
somebody else appended after its last one: expected, counted apart.

Prints "# " notes with the counts and one "@branches NAME=FORKS/LINES ..."
line; lines that are not JSON objects (torn or glued) are counted as
"torn".  Exits 0: the counts are figures, not checks (the checks are
verify.py's and t_sshfs.sh's own).
"""

import argparse
import json
import sys
from collections import Counter


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--session", required=True)
    ap.add_argument("--base", required=True)
    ap.add_argument("--log", action="append", default=[])
    a = ap.parse_args()

    with open(a.base, "rb") as f:
        n_base = f.read().count(b"\n")
    with open(a.session, "rb") as f:
        lines = f.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()

    owner_text = {}
    owner_head = []
    owner_id = {}
    for spec in a.log:
        name, _, path = spec.partition("=")
        with open(path) as f:
            for raw in f:
                try:
                    r = json.loads(raw)
                except ValueError:
                    continue
                if r.get("ev") != "try":
                    continue
                if r.get("kind") == "md":
                    if r.get("big"):
                        owner_head.append((r["head"], name))
                    else:
                        owner_text[r["text"]] = name
                for i in r.get("ids") or []:
                    owner_id[i] = name

    children = Counter()
    forks = Counter()
    total = Counter()
    torn = 0
    first_forks = []
    for ln, raw in enumerate(lines):
        try:
            o = json.loads(raw)
            if not isinstance(o, dict):
                raise ValueError
        except ValueError:
            if ln >= n_base:
                torn += 1
            continue
        if o.get("type") == "session":
            continue
        p = o.get("parentId")
        earlier = children[p]
        children[p] += 1
        if ln < n_base:
            continue
        who = owner_id.get(o.get("id"))
        c = (o.get("message") or {}).get("content") if isinstance(o.get("message"), dict) else None
        if who is None and isinstance(c, str):
            who = owner_text.get(c)
            if who is None:
                who = next((n for h, n in owner_head if c.startswith(h)), None)
        who = who or "other"
        total[who] += 1
        if earlier:
            forks[who] += 1
            if len(first_forks) < 3 and who != "PI":
                first_forks.append("%s line %d (%s under %s)" % (who, ln + 1, o.get("id"), p))
    names = sorted(total)
    print("# branches: " + ", ".join("%s %d of %d lines fork" % (n, forks[n], total[n]) for n in names) +
          ("; %d torn lines" % torn if torn else ""))
    if first_forks:
        print("# first unintended forks: " + "; ".join(first_forks))
    print("@branches " + " ".join("%s=%d/%d" % (n, forks[n], total[n]) for n in names) + " torn=%d" % torn)
    return 0


if __name__ == "__main__":
    sys.exit(main())
