#!/usr/bin/env python3
"""Self-test of check.py without a daemon: build, as a plain directory, the
tree docs/layout.md promises for the expectations gen.mjs wrote, check it
(everything must pass), then break it in one way per session and check that
every broken session is reported.

    fake_mount.py --store STORE --expect EXPECTATIONS.json --dir WORKDIR

Version-1 sessions get made-up ids ("v1-<line>") like the mount's derived
ones, which exercises the checker's mapping by stored line.
"""

import argparse
import json
import os
import posixpath
import random
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check  # noqa: E402


def build(store, doc, root):
    for s in doc["sessions"]:
        sdir = os.path.join(root, s["project"], s["session"])
        os.makedirs(sdir)
        with open(os.path.join(store, s["file"]), "rb") as f:
            raw = f.read()
        lines = raw.split(b"\n")[:-1]
        if s.get("idsFromMount"):
            m = {e["id"]: "v1-%d" % (i + 2) for i, e in enumerate(s["entries"])}
            s = dict(s)
            s["entries"] = [dict(e, id=m[e["id"]], parentId=m.get(e["parentId"])) for e in s["entries"]]
            s["leaf"] = m[s["leaf"]]
            s["labels"] = {m[k]: v for k, v in s["labels"].items()}
            s["roots"] = [m[x] for x in s["roots"]]

            def deep(v):
                if isinstance(v, str):
                    return m.get(v, v)
                if isinstance(v, list):
                    return [deep(x) for x in v]
                if isinstance(v, dict):
                    return {k: deep(x) for k, x in v.items()}
                return v
            s["messages"] = deep(s["messages"])
        top, dirs, where, _ = check.build_layout(s)
        ents = s["entries"]

        def ctx(i):
            c = s["contexts"][ents[i]["ctx"]]
            r = {"messages": [s["messages"][k] for k in c["m"]]}
            r.update({k: c[k] for k in ("thinkingLevel", "model") if k in c})
            return r

        def put(rel, data):
            with open(os.path.join(sdir, rel), "wb") as f:
                f.write(data if isinstance(data, bytes) else data.encode("utf-8"))

        pos = {e["id"]: i for i, e in enumerate(ents)}
        for d in dirs:
            if d.rel:
                os.makedirs(os.path.join(sdir, d.rel), exist_ok=True)
            for n, i in d.files.items():
                put(posixpath.join(d.rel, n), "# %s\n" % ents[i]["kind"])
            c = ctx(pos[s["leaf"]]) if d.rel == "" else ctx(d.tip)
            put(posixpath.join(d.rel, "context.json"), json.dumps(c, indent=2) + "\n")
        os.symlink(where[pos[s["leaf"]]], os.path.join(sdir, "leaf"))
        os.makedirs(os.path.join(sdir, "labels"))
        for ident, lab in s["labels"].items():
            n = check.esc(lab)
            if n in (".", "..") or os.path.lexists(os.path.join(sdir, "labels", n)):
                continue
            os.symlink("../" + where[pos[ident]], os.path.join(sdir, "labels", n))
        put("name", (s["name"] + "\n") if s["name"] else "")
        put("header.json", json.dumps(s["header"], indent=2) + "\n")
        os.makedirs(os.path.join(sdir, "entries"))
        for i, e in enumerate(ents):
            put("entries/%s.json" % check.esc(e["id"]), lines[i + 1] + b"\n")
        put("session.jsonl", raw)
        put("problems", b"")


def mutate(root, doc, rng):
    """Break every session in one random way; return how many were broken."""
    broken = 0
    for s in doc["sessions"]:
        sdir = os.path.join(root, s["project"], s["session"])
        kinds = ["ctx", "leaf", "name", "entryline", "move", "extra", "rmentry", "number"]
        if s["labels"]:
            kinds.append("label")
        if any(BR(n) for n in os.listdir(sdir)):
            kinds.append("rmbranch")
        k = rng.choice(kinds)
        if k == "ctx":
            p = os.path.join(sdir, "context.json")
            c = json.load(open(p))
            if c["messages"]:
                c["messages"][-1]["timestamp"] = (c["messages"][-1].get("timestamp") or 0) + 1
            else:
                c["thinkingLevel"] = "bogus"
            json.dump(c, open(p, "w"))
            open(p, "a").write("\n")
        elif k == "number":
            p = os.path.join(sdir, "context.json")
            c = json.load(open(p))
            c["thinkingLevel"] = True if c["thinkingLevel"] != True else 1  # noqa: E712
            open(p, "w").write(json.dumps(c) + "\n")
        elif k == "leaf":
            os.unlink(os.path.join(sdir, "leaf"))
            os.symlink(os.path.join(sdir, "context.json"), os.path.join(sdir, "leaf"))
        elif k == "name":
            open(os.path.join(sdir, "name"), "a").write(" ")
        elif k == "entryline":
            p = os.path.join(sdir, "entries", rng.choice(sorted(os.listdir(os.path.join(sdir, "entries")))))
            d = open(p, "rb").read()
            open(p, "wb").write(d[:-1])
        elif k == "move":
            files = sorted(n for n in os.listdir(sdir) if check.ENTRY_RE.match(n))
            n = files[-1]
            os.rename(os.path.join(sdir, n), os.path.join(sdir, "9" + n))
        elif k == "extra":
            open(os.path.join(sdir, "0001~deadbeef"), "w").close()
        elif k == "rmentry":
            files = sorted(n for n in os.listdir(sdir) if check.ENTRY_RE.match(n))
            os.unlink(os.path.join(sdir, rng.choice(files)))
        elif k == "label":
            labs = os.listdir(os.path.join(sdir, "labels"))
            if labs:
                os.unlink(os.path.join(sdir, "labels", rng.choice(labs)))
            else:
                open(os.path.join(sdir, "labels", "x"), "w").close()
        elif k == "rmbranch":
            b = rng.choice(sorted(n for n in os.listdir(sdir) if BR(n)))
            p = os.path.join(sdir, b)
            if os.path.islink(p):
                os.unlink(p)
            else:
                shutil.rmtree(p)
        broken += 1
    return broken


def BR(n):
    return check.BRANCH_RE.match(n) is not None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", required=True)
    ap.add_argument("--expect", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("-v", action="store_true", help="show the report on the broken tree")
    a = ap.parse_args()
    doc = json.load(open(a.expect, encoding="utf-8"))
    root = os.path.join(a.dir, "fake-mount")
    shutil.rmtree(root, ignore_errors=True)
    build(a.store, doc, root)
    me = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check.py")
    # A plain directory cannot hold the unlisted NNNN~<id> names of labelled branches.
    cmd = [sys.executable, me, "--mount", root, "--store", a.store, "--expect", a.expect, "--no-alias-check"]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, universal_newlines=True)
    last = r.stdout.strip().splitlines()[-1]
    n = len(doc["sessions"])
    if r.returncode != 0 or last != "%d passed, 0 failed" % n:
        print(r.stdout)
        print("SELF-TEST FAILED: the faithful fake mount did not pass")
        return 1
    print("faithful fake mount: %s" % last)
    broken = mutate(root, doc, random.Random(1))
    r = subprocess.run(cmd, stdout=subprocess.PIPE, universal_newlines=True)
    last = r.stdout.strip().splitlines()[-1]
    if r.returncode == 0 or last != "0 passed, %d failed" % broken:
        print(r.stdout)
        print("SELF-TEST FAILED: %d broken sessions, checker said %r" % (broken, last))
        return 1
    print("broken fake mount: %s (as expected)" % last)
    if a.v:
        print(r.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
