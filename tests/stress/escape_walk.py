#!/usr/bin/env python3
"""Walks a whole mount and checks that no path leads outside the store.

    escape_walk.py MOUNT [--forbid TEXT]... [--op-timeout S]

* every name is a proper name (never "." or "..", no "/", no NUL) and every
  name inside a session directory other than the fixed ones is written in
  layout.md's escaped alphabet (A-Z a-z 0-9 _ - . ~ and %XX upper-case),
  except labels (labels/*) and branch names (NNNN~*), shown as typed: those
  hold no control character and no more than 255 bytes;
* every symlink is relative; inside a session directory it resolves (lexically,
  from its own directory) to a path inside that session directory, in a
  navigation view (by-id, by-name, by-cwd, recent) to a session directory
  of the mount; and it resolves through the mount to something that exists;
* os.path.realpath() of every path stays inside MOUNT;
* no regular file's content contains any --forbid TEXT (e.g. a line of
  /etc/passwd that the store has no reason to hold).

Every file-system call is bounded by --op-timeout (tests/diff/check.py's
watchdog).  Prints "ok - ..." / "not ok - ..." lines.
"""

import argparse
import os
import posixpath
import re
import stat
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "diff"))
import check  # noqa: E402

VIEWS = {"by-id", "by-name", "by-cwd", "recent", "search"}
FIXED = {"context.json", "leaf", "labels", "name", "loadout.json", "header.json", "entries", "session.jsonl", "problems", "error",
         "transcript.md", "tree.txt", "usage.json"}
ESCAPED = re.compile(r"^(?:[A-Za-z0-9_.~-]|%[0-9A-F]{2})+$")
BRANCH = re.compile(r"^[0-9]{4,}~")


def typed_ok(n):
    """A label or branch name as typed (layout.md "Escaping")."""
    b = os.fsencode(n)
    return len(b) <= 255 and not any(c < 0x20 or c == 0x7f for c in b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mount")
    ap.add_argument("--forbid", action="append", default=[])
    ap.add_argument("--op-timeout", type=float, default=10)
    a = ap.parse_args()
    check.WD = check.Watchdog(a.op_timeout)
    check.WD.on_fire = lambda: print("not ok - a file-system call hung")
    mnt = os.path.abspath(a.mount)
    bad = {"names": [], "escape": [], "links": [], "real": [], "content": []}
    counts = {"dirs": 0, "files": 0, "links": 0, "bytes": 0}
    forbid = [f.encode() for f in a.forbid]

    def session_root(rel_parts):
        # MOUNT/project/session/... -> the session directory, if any
        if len(rel_parts) >= 2 and rel_parts[0] not in VIEWS and rel_parts[0] != ".pisessionfs":
            return posixpath.join(mnt, rel_parts[0], rel_parts[1])
        return None

    stack = [mnt]
    seen = 0
    while stack:
        d = stack.pop()
        counts["dirs"] += 1
        try:
            names = check.fs_listdir(d)
        except OSError as ex:
            bad["names"].append("%s: cannot list: %s" % (d, ex))
            continue
        rel = os.path.relpath(d, mnt)
        parts = [] if rel == "." else rel.split("/")
        # Names that answer by name only (docs/layout.md "What a recursive
        # walk sees") are walked too: their names are shown all the same.
        if len(parts) >= 2 and parts[0] not in VIEWS and parts[0] != ".pisessionfs" and parts[1] != "search":
            for hidden in ("entries", "transcript.md"):
                hp = posixpath.join(d, hidden)
                if hidden not in names and check.WD.call("lexists", hp, os.path.lexists, hp):
                    names = list(names) + [hidden]
        for n in names:
            p = posixpath.join(d, n)
            seen += 1
            if n in (".", "..") or "/" in n or "\0" in n or not n:
                bad["names"].append("%r in %s" % (n, d))
                continue
            in_session = len(parts) >= 2 and parts[0] not in VIEWS and parts[0] != ".pisessionfs"
            typed = in_session and (parts[-1] == "labels" and len(parts) == 3 or BRANCH.match(n))
            if typed and not typed_ok(n):
                bad["escape"].append("%s: %r holds a control character or is over 255 bytes" % (rel, n))
            elif in_session and not typed and n not in FIXED and not ESCAPED.match(n):
                bad["escape"].append("%s: %r is not in the escaped alphabet" % (rel, n))
            try:
                st = check.fs_lstat(p)
            except OSError as ex:
                bad["names"].append("%s: listed but lstat fails: %s" % (p, ex))
                continue
            if stat.S_ISLNK(st.st_mode):
                counts["links"] += 1
                t = check.fs_readlink(p)
                if t.startswith("/"):
                    bad["links"].append("%s -> %s: absolute" % (os.path.relpath(p, mnt), t))
                    continue
                lexical = posixpath.normpath(posixpath.join(d, t))
                sroot = session_root(parts)
                if sroot is not None:
                    if not (lexical + "/").startswith(sroot + "/"):
                        bad["links"].append("%s -> %s resolves to %s, outside its session directory" % (os.path.relpath(p, mnt), t, lexical))
                        continue
                else:
                    lp = os.path.relpath(lexical, mnt).split("/")
                    if lexical == mnt or not (lexical + "/").startswith(mnt + "/") or len(lp) != 2 or lp[0] in VIEWS:
                        bad["links"].append("%s -> %s resolves to %s, not a session directory of the mount" % (os.path.relpath(p, mnt), t, lexical))
                        continue
                real = check.WD.call("realpath", p, os.path.realpath, p)
                if not (real + "/").startswith(mnt + "/"):
                    bad["real"].append("%s -> %s: realpath %s is outside the mount" % (os.path.relpath(p, mnt), t, real))
                elif not check.WD.call("exists", p, os.path.exists, p):
                    bad["links"].append("%s -> %s does not resolve through the mount" % (os.path.relpath(p, mnt), t))
            elif stat.S_ISDIR(st.st_mode):
                real = check.WD.call("realpath", p, os.path.realpath, p)
                if not (real + "/").startswith(mnt + "/"):
                    bad["real"].append("%s: realpath %s is outside the mount" % (os.path.relpath(p, mnt), real))
                else:
                    stack.append(p)
            elif stat.S_ISREG(st.st_mode):
                counts["files"] += 1
                if forbid and parts[:1] != [".pisessionfs"]:
                    try:
                        _, data = check.fs_read(p)
                    except OSError as ex:
                        bad["names"].append("%s: cannot read: %s" % (p, ex))
                        continue
                    counts["bytes"] += len(data)
                    for f in forbid:
                        if f in data:
                            bad["content"].append("%s holds %r" % (os.path.relpath(p, mnt), f))
            else:
                bad["names"].append("%s: neither file, directory nor symlink (mode %o)" % (p, st.st_mode))
    labels = {
        "names": "every name is a proper name that can be looked up",
        "escape": "every name inside a session directory is in the escaped alphabet",
        "links": "every symlink is relative and resolves inside its session directory (views: to a session directory)",
        "real": "realpath() of every directory and symlink stays inside the mount",
        "content": "no file holds any of the forbidden texts %r" % a.forbid,
    }
    for k, what in labels.items():
        if bad[k]:
            print("not ok - %s: %d violations: %s" % (what, len(bad[k]), "; ".join(bad[k][:6])))
        else:
            print("ok - %s" % what)
    print("# walked %d directories, %d files (%d bytes read), %d symlinks" % (counts["dirs"], counts["files"], counts["bytes"], counts["links"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
