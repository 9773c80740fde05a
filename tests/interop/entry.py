#!/usr/bin/env python3
"""One line of a session file, summarized for tests/interop/run.sh.

    entry.py FILE N      line N (1-based; negative counts from the end)
    entry.py FILE ids    the id of every entry line, one a line, file order

prints the tab-separated fields
    type  id  parentId  role  text
parentId "null" for a root; role "-" when the entry is not a message; text is
the message text (string content, or its text blocks joined; tool calls as
"call NAME ARGS"), "TARGET=LABEL" for a label, the name for session_info,
"-" otherwise, JSON-escaped (a newline shows as \\n).  A line that does not
exist prints "(no line N: ...)", status 0, so that comparisons just fail.
"""
import json
import sys


def esc(s):
    return json.dumps(s, ensure_ascii=False)[1:-1]


def text_of(msg):
    c = msg.get("content")
    if isinstance(c, str):
        return c
    parts = []
    for b in c or []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text":
            parts.append(b.get("text", ""))
        elif b.get("type") == "toolCall":
            parts.append("call %s %s" % (b.get("name"), json.dumps(b.get("arguments"), separators=(",", ":"))))
    return "".join(parts)


def main():
    path, which = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        lines = [json.loads(l) for l in f.read().splitlines() if l.strip()]
    entries = [e for e in lines if e.get("type") != "session"]
    if which == "ids":
        for e in entries:
            print(e.get("id"))
        return 0
    n = int(which)
    if not (-len(lines) <= n <= len(lines)) or n == 0:
        print("(no line %d: the file has %d)" % (n, len(lines)))
        return 0
    e = lines[n - 1] if n > 0 else lines[n]
    role, text = "-", "-"
    if e.get("type") == "message":
        role = e["message"].get("role", "-")
        text = esc(text_of(e["message"]))
    elif e.get("type") == "label":
        text = esc("%s=%s" % (e.get("targetId"), e.get("label") or ""))
    elif e.get("type") == "session_info":
        text = esc(e.get("name") or "")
    parent = e.get("parentId")
    print("\t".join([str(e.get("type")), str(e.get("id")), "null" if parent is None else str(parent), role, text]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
