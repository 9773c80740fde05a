#!/usr/bin/env python3
"""The man pages against the programs' own --help: every option the
daemon's --help lists (--store, -o NAME=, -f, ...) and every subcommand,
with its flags, that pisession --help lists must be in their man page.

Usage: tests/check-manpages.py PATH-OF-pisessionfs PATH-OF-pisession

One "ok - ..." or "not ok - ..." line per option or subcommand, then
"N passed, M failed"; exit 1 when any is missing.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def help_text(prog):
    r = subprocess.run([prog, "--help"], capture_output=True, text=True)
    return r.stdout + r.stderr


def man_text(name):
    """The page's words, roff's escapes taken out (\\fB, \\-, \\(em, ...)."""
    with open(os.path.join(ROOT, "docs", name), encoding="utf-8") as f:
        t = f.read()
    t = re.sub(r"\\f[BIRP]|\\f\([A-Z]{2}", "", t)
    t = t.replace("\\-", "-").replace("\\&", "").replace("\\e", "\\")
    t = re.sub(r"\\\([a-z]{2}", " ", t)
    return t


def daemon_options(text):
    """--long, -x and -o NAME from the option lines of the daemon's help
    (two spaces, then the option; "-h, --help ...;  -V, --version")."""
    out = []
    for line in text.splitlines():
        m = re.match(r"  (-o [a-z_]+|--?[A-Za-z][-A-Za-z]*)(?:, (--[a-z][-a-z]*))?", line)
        if not m:
            continue
        out += [o for o in m.groups() if o]
        out += [o for pair in re.findall(r";\s+(-[A-Za-z]), (--[a-z][-a-z]*)", line) for o in pair]
    return list(dict.fromkeys(out))


def tool_commands(text):
    """(subcommand, [flags]) from pisession's usage lines."""
    out = []
    for line in text.splitlines():
        m = re.match(r"(?:usage:)?\s+pisession ([a-z][-a-z]*)(.*)", line)
        if m:
            flags = re.findall(r"(--?[a-z][-a-z]*)", m.group(2))
            out.append((m.group(1), flags))
    return out


def main():
    daemon, tool = sys.argv[1], sys.argv[2]
    passed = failed = 0

    def check(what, ok):
        nonlocal passed, failed
        if ok:
            passed += 1
            print("ok - " + what)
        else:
            failed += 1
            print("not ok - " + what)

    dman = man_text("pisessionfs.1")
    opts = daemon_options(help_text(daemon))
    check("the daemon's --help lists options (%d)" % len(opts), len(opts) >= 15)
    for o in opts:
        if o.startswith("-o "):
            name = o[3:]
            check("pisessionfs.1 has -o %s" % name, re.search(r"\b%s\b" % re.escape(name), dman) is not None)
        else:
            check("pisessionfs.1 has %s" % o, re.search(r"(?<![-\w])%s\b" % re.escape(o), dman) is not None)

    tman = man_text("pisession.1")
    cmds = tool_commands(help_text(tool))
    check("pisession --help lists subcommands (%d)" % len(cmds), len(cmds) >= 10)
    for cmd, flags in cmds:
        check("pisession.1 has the subcommand %s" % cmd,
              re.search(r"pisession %s\b|^\.(?:TP|B|SS)?\s*%s\b" % (re.escape(cmd), re.escape(cmd)), tman, re.M)
              is not None or re.search(r"\n%s\b" % re.escape(cmd), tman) is not None)
        for fl in flags:
            check("pisession.1 has %s %s" % (cmd, fl), re.search(r"(?<![-\w])%s\b" % re.escape(fl), tman) is not None)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
