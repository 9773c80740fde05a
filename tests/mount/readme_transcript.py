#!/usr/bin/env python3
"""The README's transcripts as a test (tests/mount/t_readme.sh).

  readme_transcript.py script README FIRST LAST OUT.sh
      writes a bash script that runs, in order, every command ("$ " lines)
      of the transcript blocks (``` fences whose first line starts with
      "$ ") between the headings "## FIRST" and "## LAST", each preceded
      by a marker line, its stderr with its stdout;
  readme_transcript.py update README FIRST LAST OUTPUT HOME STORE
      writes what each command printed into the README, under it (then
      review the diff: ls -l's owner and time and new ids are this run's,
      and what changed may be a bug rather than an old example);
  readme_transcript.py compare README FIRST LAST OUTPUT HOME STORE
      compares what each command printed (OUTPUT, split at the markers)
      with the lines the README shows under it, and prints "ok N CMD" or
      "not ok N CMD" and a diff for each.

What is not the same on every machine is made the same before comparing:
the README's home (/root) is HOME; in `ls -l` lines the owner, group and
time are dropped; and ids made while the transcript runs (8 hex digits
that are in no file of STORE) are numbered in the order they first
appear, in the README and in the output alike, so that a new entry's id
must be the same wherever the README repeats it.
"""
import difflib
import os
import re
import sys

MARK = "@@@readme-transcript@@@ "


def transcripts(readme, first, last):
    """[(line number, command, [expected lines])] in order."""
    out = []
    inside = False  # between the headings
    fence = False
    block = None
    with open(readme, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        if line.startswith("```"):
            if fence:
                fence = False
                block = None
            else:
                fence = True
                block = [] if inside else None
            continue
        if not fence:
            if line.startswith("## "):
                if line[3:].strip() == first:
                    inside = True
                elif inside and line[3:].strip() == last:
                    break
            continue
        if block is None:
            continue
        if line.startswith("$ "):
            out.append((n, line[2:], []))
            block.append(n)
        elif block:
            out[-1][2].append(line)
        else:
            block = None  # not a transcript: a block whose first line is no command
    return out


def write_script(cmds, path):
    with open(path, "w", encoding="utf-8") as f:
        f.write("set +e\nexec 2>&1\n")
        f.write("shopt -u nullglob\n")
        # ls to a terminal: columns of 80, names quoted for the shell.
        f.write('ls() { if [[ -p /dev/stdout ]]; then command ls "$@"; '
                'else command ls -C -w 80 -T 0 --quoting-style=shell-escape "$@"; fi; }\n')
        f.write("cd ~ || exit 1\n")
        for i, (n, cmd, _) in enumerate(cmds):
            f.write("printf '%%s\\n' %s\n" % shq(MARK + str(i)))
            f.write(cmd + "\n")


def shq(s):
    return "'" + s.replace("'", "'\\''") + "'"


LONG = re.compile(r"^([-dlcbps][-rwxsStT]{9}\S?) +(\d+) +\S+ +\S+ +(\d+) +\w{3} +\d+ +[\d:]+ (.*)$")
# What may be made on the way: a UUID, another run of 8 or more hex
# digits (an entry id, the end of a session id), a file name's time.
MADE = re.compile(r"(?<![0-9a-f])(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{8,})(?![0-9a-f])"
                  r"|\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z")


def store_text(store):
    """Every file of STORE, and its name, as one string."""
    parts = []
    for root, _, files in os.walk(store):
        for name in files:
            with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
                parts.append(f.read())
            parts.append(name)
    return "\n".join(parts)


class Ids:
    """Replaces what is in no file of the store by "<new N>", N counted
    from 1 in the order of first appearance."""

    def __init__(self, known):
        self.known = known
        self.new = {}

    def __call__(self, m):
        h = m.group(0)
        if h in self.known:
            return h
        if h not in self.new:
            self.new[h] = "<new %d>" % (len(self.new) + 1)
        return self.new[h]


def normal(lines, ids, home=None):
    out = []
    for line in lines:
        if home:
            line = line.replace(home, "/root")
        m = LONG.match(line)
        if m:
            line = "%s %s %s %s" % m.groups()
        out.append(MADE.sub(ids, line).rstrip())
    while out and out[-1] == "":
        out.pop()
    return out


def compare(cmds, output, home, store):
    with open(output, encoding="utf-8", errors="replace") as f:
        text = f.read()
    got = {}
    cur = None
    for line in text.split("\n"):
        if line.startswith(MARK):
            cur = int(line[len(MARK):])
            got[cur] = []
        elif cur is not None:
            got[cur].append(line)
    known = store_text(store)
    want_ids, got_ids = Ids(known), Ids(known)
    bad = 0
    for i, (n, cmd, want) in enumerate(cmds):
        w = normal(want, want_ids)
        g = normal(got.get(i, ["(the command never ran)"]), got_ids, home)
        if w == g:
            print("ok %d README.md:%d: %s" % (i + 1, n, cmd))
        else:
            bad += 1
            print("not ok %d README.md:%d: %s" % (i + 1, n, cmd))
            for d in difflib.unified_diff(w, g, "README", "the mount", lineterm="", n=1):
                print("    " + d)
    return bad


def update(readme, first, last, output, home, store):
    """Rewrites the README's lines under every command with what it
    printed (the home written /root again).  STORE is not read."""
    cmds = transcripts(readme, first, last)
    with open(output, encoding="utf-8", errors="replace") as f:
        text = f.read()
    got, cur = {}, None
    for line in text.split("\n"):
        if line.startswith(MARK):
            cur = int(line[len(MARK):])
            got[cur] = []
        elif cur is not None:
            got[cur].append(line.replace(home, "/root").rstrip())
    with open(readme, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for i in reversed(range(len(cmds))):
        n, cmd, want = cmds[i]
        g = got.get(i, [])
        while g and g[-1] == "":
            g.pop()
        lines[n:n + len(want)] = g
    with open(readme, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def main():
    if sys.argv[1] == "script":
        cmds = transcripts(sys.argv[2], sys.argv[3], sys.argv[4])
        if not cmds:
            sys.exit("no transcript between the headings")
        write_script(cmds, sys.argv[5])
    elif sys.argv[1] == "compare":
        cmds = transcripts(sys.argv[2], sys.argv[3], sys.argv[4])
        compare(cmds, sys.argv[5], sys.argv[6], sys.argv[7])
    elif sys.argv[1] == "update":
        update(*sys.argv[2:8])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
