#!/usr/bin/env python3
"""Checks session files after a stress run against what the writers logged.

    verify.py [--session FILE[=BASE]]... [--log FILE=LOG]... [--migrated FILE]...
              [--allow-foreign FILE]... [--store DIR]

For every --session FILE (a store file; BASE: a copy of it taken before the
run):

* the file ends with a newline and every line is one complete JSON object
  (python's json, line by line): no partial line, no blank line (reported
  apart), no two lines glued together;
* the first line is the session header; entry ids are unique; every
  parentId is null or names an EARLIER line;
* the file still starts with BASE, byte for byte (append-only), unless FILE is
  --migrated (a version 1/2 file the mount may migrate): then either the file
  is BASE unchanged, or its header is version 3 and it holds every entry of
  BASE (same id, same content);
* every write a writer acknowledged (writer.py's and pi_tool.mjs's "ack"
  records in LOG) is in FILE exactly once: an md text as the content of
  exactly one user message, a name as exactly one session_info, raw ids and
  pi's ids as exactly one line each (raw lines byte for byte as written);
* every write that was tried but not acknowledged is there at most once, and
  a raw batch (several lines in one write) entirely or not at all;
* every line after BASE was written by one of the writers (no stray entry),
  unless --allow-foreign FILE.

--store DIR: also reports leftover temporary files (*.pisessionfs-*) in the
store.  Prints "ok - ..." / "not ok - ..." lines and "# ..." notes; exits 1
when a check failed.
"""

import argparse
import json
import os
import sys
from collections import Counter, defaultdict

FAILS = 0


def ok(msg):
    print("ok - " + msg)


def bad(msg):
    global FAILS
    FAILS += 1
    print("not ok - " + msg)


def note(msg):
    print("# " + msg)


def read_log(path):
    recs = []
    with open(path, "rb") as f:
        for i, raw in enumerate(f):
            try:
                recs.append(json.loads(raw))
            except ValueError:
                # The writer may be killed mid-line only at the very end.
                recs.append({"ev": "broken", "line": i + 1})
    return recs


def parse_lines(data, name):
    """Lines of a session file; reports partial and non-JSON lines."""
    good = True
    if data and not data.endswith(b"\n"):
        bad("%s: the file does not end with a newline (partial last line: %r)" % (name, data[data.rfind(b"\n") + 1:][:120]))
        good = False
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    objs = []
    badlines = []
    blank = [i + 1 for i, l in enumerate(lines) if l.strip() == b""]
    if blank:
        good = False
        bad("%s: %d blank lines (pi skips them; a JSONL file has none), first at line %d, between %r and %r" % (
            name, len(blank), blank[0], lines[blank[0] - 2][-60:] if blank[0] > 1 else b"", lines[blank[0]][:60] if blank[0] < len(lines) else b""))
    for i, l in enumerate(lines):
        if l.strip() == b"":
            objs.append(None)
            continue
        try:
            v = json.loads(l)
            if not isinstance(v, dict):
                raise ValueError("not an object")
            objs.append(v)
        except ValueError as ex:
            badlines.append((i + 1, str(ex), l[:100], len(l)))
            objs.append(None)
    if badlines:
        good = False
        for ln, why, head, n in badlines[:5]:
            bad("%s: line %d is not a JSON object (%s; %d bytes: %r...)" % (name, ln, why, n, head))
        if len(badlines) > 5:
            bad("%s: %d more lines are not JSON objects" % (name, len(badlines) - 5))
    return lines, objs, good


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--session", action="append", default=[])
    ap.add_argument("--log", action="append", default=[])
    ap.add_argument("--migrated", action="append", default=[])
    ap.add_argument("--allow-foreign", action="append", default=[])
    ap.add_argument("--store")
    a = ap.parse_args()

    logs = defaultdict(list)
    for spec in a.log:
        f, _, lg = spec.partition("=")
        logs[os.path.realpath(f)].append(lg)

    totals = Counter()
    for spec in a.session:
        f, _, base = spec.partition("=")
        name = os.path.basename(os.path.dirname(f)) + "/" + os.path.basename(f)
        with open(f, "rb") as fh:
            data = fh.read()
        base_data = None
        if base:
            with open(base, "rb") as fh:
                base_data = fh.read()
        lines, objs, good = parse_lines(data, name)
        if good:
            ok("%s: %d lines, every one a complete JSON object" % (name, len(lines)))
        if not objs or not isinstance(objs[0], dict) or objs[0].get("type") != "session":
            bad("%s: the first line is not a session header" % name)
            continue

        # Append-only (or a migration).
        n_base = 0
        if base_data is not None:
            if data.startswith(base_data):
                n_base = base_data.count(b"\n")
                ok("%s: starts with its %d bytes from before the run" % (name, len(base_data)))
            elif f in a.migrated or os.path.realpath(f) in map(os.path.realpath, a.migrated):
                blines, bobjs, _ = parse_lines(base_data, name + " (before)")
                by_id = {o.get("id"): o for o in objs[1:] if isinstance(o, dict)}
                missing = [o.get("id") for o in bobjs[1:] if isinstance(o, dict) and by_id.get(o.get("id")) != o]
                if objs[0].get("version") != 3:
                    bad("%s: changed, but its header is not version 3: %r" % (name, objs[0]))
                elif missing:
                    bad("%s: migrated, but %d entries of the original are missing or changed (first: %s)" % (name, len(missing), missing[0]))
                else:
                    ok("%s: migrated to version 3 with all %d entries of the original" % (name, len(bobjs) - 1))
                n_base = len(blines)
            else:
                k = next((i for i, (x, y) in enumerate(zip(base_data, data)) if x != y), min(len(base_data), len(data)))
                bad("%s: the bytes from before the run changed (first difference at byte %d of %d; now %d bytes)" % (name, k, len(base_data), len(data)))
                n_base = base_data.count(b"\n")

        # Ids and parents.
        seen = {}
        dups = []
        forward = []
        for i, o in enumerate(objs[1:], start=2):
            if not isinstance(o, dict):
                continue
            ident = o.get("id")
            if ident in seen:
                dups.append((ident, seen[ident], i))
            p = o.get("parentId")
            if p is not None and p not in seen:
                forward.append((ident, p, i))
            seen.setdefault(ident, i)
        if dups:
            bad("%s: %d duplicate ids, first %r at lines %d and %d" % (name, len(dups), dups[0][0], dups[0][1], dups[0][2]))
        else:
            ok("%s: %d entry ids, all distinct" % (name, len(seen)))
        if forward:
            bad("%s: %d parentIds do not name an earlier line, first %r -> %r at line %d" % (name, len(forward), forward[0][0], forward[0][1], forward[0][2]))
        else:
            ok("%s: every parentId names an earlier line" % name)

        # What the writers did.
        md_text = Counter()
        md_big = Counter()
        names = Counter()
        raw_ids = Counter()
        raw_line = {}
        for i, o in enumerate(objs):
            if i == 0 or not isinstance(o, dict):
                continue
            raw_ids[o.get("id")] += 1
            raw_line.setdefault(o.get("id"), lines[i])
            if o.get("type") == "message" and isinstance(o.get("message"), dict) and o["message"].get("role") == "user":
                c = o["message"].get("content")
                if isinstance(c, str):
                    md_text[c] += 1
                    if len(c) >= 200:
                        md_big[(c[:64], len(c))] += 1
            if o.get("type") == "session_info":
                names[o.get("name")] += 1

        acked = Counter()
        tried_only = Counter()
        claimed = set()  # line indexes explained by a writer
        text_lines = defaultdict(list)
        for i, o in enumerate(objs):
            if i and isinstance(o, dict):
                if o.get("type") == "message" and isinstance(o.get("message"), dict) and isinstance(o["message"].get("content"), str):
                    text_lines[o["message"]["content"]].append(i)
                if o.get("type") == "session_info":
                    text_lines[("name", o.get("name"))].append(i)
        id_line = {}
        for i, o in enumerate(objs):
            if i and isinstance(o, dict):
                id_line.setdefault(o.get("id"), i)
        problems = []
        hung = []
        for lg in logs.get(os.path.realpath(f), []):
            recs = read_log(lg)
            tries = {}
            acks = {}
            for r in recs:
                if r.get("ev") == "try":
                    tries[(r.get("kind"), r.get("n"))] = r
                elif r.get("ev") == "ack":
                    acks[(r.get("kind"), r.get("n"))] = r
                elif r.get("ev") == "hung":
                    hung.append("%s: %s" % (os.path.basename(lg), r.get("op")))
            for key, t in tries.items():
                kind = t.get("kind")
                is_ack = key in acks
                r = acks.get(key, t)
                if kind == "md":
                    if t.get("big"):
                        cnt = md_big[(t["head"], acks[key]["length"])] if is_ack else sum(v for (h, _), v in md_big.items() if h == t["head"])
                        for i in text_lines_for_head(objs, t["head"]):
                            claimed.add(i)
                    else:
                        cnt = md_text[t["text"]]
                        claimed.update(text_lines.get(t["text"], []))
                    what = "md %r" % (t.get("text") or t["head"] + "...")
                elif kind == "name":
                    cnt = names[t["name"]]
                    claimed.update(text_lines.get(("name", t["name"]), []))
                    what = "name %r" % t["name"]
                elif kind in ("raw", "pi"):
                    ids = t["ids"]
                    cnts = [raw_ids[x] for x in ids]
                    for x in ids:
                        if x in id_line:
                            claimed.add(id_line[x])
                    what = "%s %s" % (kind, ",".join(ids))
                    if kind == "raw" and len(set(cnts)) > 1:
                        problems.append("%s: a batch of %d lines is only partly in the file (%s)" % (what, len(ids), cnts))
                    if kind == "raw":
                        for x, line in zip(ids, t["lines"]):
                            if x in raw_line and raw_line[x] != line.encode():
                                problems.append("%s: line %s is not byte for byte what was written" % (what, x))
                    if kind == "pi":
                        for x in ids:
                            i = id_line.get(x)
                            if i is not None:
                                m = objs[i].get("message") or {}
                                if m.get("content") != t.get("text") and not (isinstance(m.get("content"), list) and m["content"] and m["content"][0].get("text") == t.get("text")):
                                    problems.append("%s: the entry holds %r, pi wrote %r" % (what, m.get("content"), t.get("text")))
                    cnt = max(cnts) if cnts else 0
                else:
                    continue
                if is_ack:
                    totals["acked"] += 1
                    totals["acked_" + kind] += 1
                    if cnt != 1:
                        problems.append("acknowledged %s is in the file %d times" % (what, cnt))
                else:
                    totals["unacked"] += 1
                    if cnt > 1:
                        problems.append("unacknowledged %s is in the file %d times" % (what, cnt))
                    elif cnt == 1:
                        totals["unacked_present"] += 1
        if hung:
            bad("%s: a writer hung (daemon did not answer): %s" % (name, "; ".join(hung[:3])))
        if problems:
            for p in problems[:8]:
                bad("%s: %s" % (name, p))
            if len(problems) > 8:
                bad("%s: ... and %d more write problems" % (name, len(problems) - 8))
        elif logs.get(os.path.realpath(f)):
            ok("%s: every acknowledged write is there exactly once, no unacknowledged one twice, no raw batch in part" % name)
        if logs.get(os.path.realpath(f)) and f not in a.allow_foreign:
            stray = [i for i in range(max(n_base, 1), len(objs)) if i not in claimed and lines[i].strip() != b""]
            if stray:
                bad("%s: %d lines written during the run belong to no writer, first line %d: %r" % (name, len(stray), stray[0] + 1, lines[stray[0]][:160]))
            else:
                ok("%s: every line written during the run belongs to a writer's attempt" % name)
        totals["lines"] += len(lines)

    if a.store:
        litter = []
        for d, _, fs in os.walk(a.store):
            for x in fs:
                if ".pisessionfs" in x:
                    litter.append(os.path.join(d, x))
        if litter:
            bad("temporary files left in the store: %s" % ", ".join(os.path.relpath(x, a.store) for x in litter[:5]))
        else:
            ok("no temporary file left in the store")
    note("figures: %d acknowledged writes checked (%s), %d unacknowledged attempts (%d of them landed), %d lines in %d files" % (
        totals["acked"], ", ".join("%s %d" % (k[6:], v) for k, v in sorted(totals.items()) if k.startswith("acked_")),
        totals["unacked"], totals["unacked_present"], totals["lines"], len(a.session)))
    print("@figures acked=%d unacked=%d landed=%d lines=%d" % (totals["acked"], totals["unacked"], totals["unacked_present"], totals["lines"]))
    return 1 if FAILS else 0


def text_lines_for_head(objs, head):
    out = []
    for i, o in enumerate(objs):
        if i and isinstance(o, dict) and o.get("type") == "message":
            c = (o.get("message") or {}).get("content")
            if isinstance(c, str) and c.startswith(head) and len(c) >= 200:
                out.append(i)
    return out


if __name__ == "__main__":
    sys.exit(main())
