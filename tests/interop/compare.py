#!/usr/bin/env python3
"""Compares a session directory of the mount with what pi's SessionManager
read from (a copy of) the same session file (tests/interop/pi_open.mjs).

    compare.py MOUNTED_SESSION_DIR PI_OPEN.json [--leaf ID] [--name NAME]
               [--label ID=LABEL ...]

Prints one line per check, "PASS what" or "FAIL what: detail":
  pi loaded the file, and open() found nothing to fix (left it unchanged);
  leaf:    the id named by the mount's leaf symlink == pi's getLeafId();
  labels:  labels/NAME -> entry file of ID  <=>  pi's getLabel(ID) == NAME;
  name:    the mount's name file (minus its newline) == pi's getSessionName();
  context: context.json == pi's buildSessionContext() (as JSON values);
  entries: the ids listed in entries/ == pi's entry ids;
  problems: the mount's problems file is empty;
and, when given, the expected leaf id, name and exact set of labels.
Run it under a timeout: it reads the mount.
"""
import argparse
import json
import os
import sys


def entry_id(link):
    # .../NNNN-kind.ID.md
    base = os.path.basename(link)
    parts = base.split(".")
    return parts[-2] if len(parts) >= 3 and parts[-1] == "md" else None


def main():
    try:
        return compare()
    except Exception as e:  # a missing or unreadable mount file: one failure line
        print("FAIL reading the mount: %s: %s" % (type(e).__name__, e))
        return 1


def compare():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("pi_json")
    ap.add_argument("--leaf")
    ap.add_argument("--name")
    ap.add_argument("--label", action="append", default=[])
    a = ap.parse_args()
    with open(a.pi_json, encoding="utf-8") as f:
        pi = json.load(f)
    fails = 0

    def check(what, ok, detail=""):
        nonlocal fails
        if ok:
            print("PASS %s" % what)
        else:
            fails += 1
            print("FAIL %s: %s" % (what, detail))

    check("pi's SessionManager.open() loads it", pi.get("ok"), pi.get("error", "")[:500])
    if not pi.get("ok"):
        return 1
    check("pi's open() leaves the file byte-identical (nothing to migrate or repair)",
          pi.get("unchanged"), "open() rewrote the copy")

    leaf_link = os.readlink(os.path.join(a.dir, "leaf"))
    m_leaf = entry_id(leaf_link)
    check("leaf symlink names pi's leaf", m_leaf == pi["leafId"],
          "mount leaf -> %s, pi getLeafId() = %s" % (leaf_link, pi["leafId"]))

    m_labels = {}
    for name in sorted(os.listdir(os.path.join(a.dir, "labels"))):
        m_labels[entry_id(os.readlink(os.path.join(a.dir, "labels", name)))] = name
    check("labels/ == pi's getLabel() of every entry", m_labels == pi["labels"],
          "mount %s, pi %s" % (json.dumps(m_labels), json.dumps(pi["labels"])))

    with open(os.path.join(a.dir, "name"), encoding="utf-8") as f:
        m_name = f.read()
    m_name_v = m_name[:-1] if m_name.endswith("\n") else m_name
    check("name == pi's getSessionName()",
          (m_name_v or None) == pi["name"] and (m_name == "" or m_name.endswith("\n")),
          "mount %r, pi %r" % (m_name, pi["name"]))

    with open(os.path.join(a.dir, "context.json"), encoding="utf-8") as f:
        m_ctx = json.load(f)
    detail = ""
    if m_ctx != pi["context"]:
        mm, pm = m_ctx.get("messages", []), pi["context"].get("messages", [])
        detail = "%d vs %d messages" % (len(mm), len(pm))
        for i, (x, y) in enumerate(zip(mm, pm)):
            if x != y:
                detail += "; first difference at message %d: mount %s / pi %s" % (
                    i, json.dumps(x)[:300], json.dumps(y)[:300])
                break
        for k in ("thinkingLevel", "model"):
            if m_ctx.get(k) != pi["context"].get(k):
                detail += "; %s: mount %r, pi %r" % (k, m_ctx.get(k), pi["context"].get(k))
    check("context.json == pi's buildSessionContext()", m_ctx == pi["context"], detail)

    m_ids = sorted(n[:-5] for n in os.listdir(os.path.join(a.dir, "entries"))
                   if n.endswith(".json") and "~" not in n)
    check("entries/ lists pi's entry ids", m_ids == sorted(pi["entryIds"]),
          "mount %d ids, pi %d; only in mount %s, only in pi %s" % (
              len(m_ids), len(pi["entryIds"]),
              sorted(set(m_ids) - set(pi["entryIds"])), sorted(set(pi["entryIds"]) - set(m_ids))))

    with open(os.path.join(a.dir, "problems"), encoding="utf-8") as f:
        problems = f.read()
    check("problems is empty", problems == "", problems[:500])

    if a.leaf is not None:
        check("pi's leaf is the expected entry %s" % a.leaf, pi["leafId"] == a.leaf,
              "pi getLeafId() = %s" % pi["leafId"])
    if a.name is not None:
        check("pi's session name is %r" % a.name, pi["name"] == a.name, "pi %r" % pi["name"])
    if a.label:
        want = dict(l.split("=", 1) for l in a.label)
        check("pi's labels are %s" % json.dumps(want), pi["labels"] == want,
              "pi %s" % json.dumps(pi["labels"]))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
