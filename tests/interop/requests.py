#!/usr/bin/env python3
"""Shows what pi sent to the fake server (tests/interop/fake_openai.py).

    requests.py REQUESTS.jsonl count
        the number of recorded requests
    requests.py REQUESTS.jsonl show N
        request N (1-based; negative counts from the end) as one line per
        message, in order:  "role: text" with the text JSON-escaped (so a
        newline shows as \\n), "assistant: call NAME ARGS" for each tool call
        (ARGS as compact JSON), "tool: text" for tool results.  The system
        prompt is shown as "system: ..." (its text is not compared).
"""
import json
import sys


def text_of(content):
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return json.dumps(content)


def esc(s):
    return json.dumps(s, ensure_ascii=False)[1:-1]


def main():
    path, cmd = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        reqs = [json.loads(line) for line in f if line.strip()]
    if cmd == "count":
        print(len(reqs))
        return 0
    n = int(sys.argv[3])
    req = reqs[n - 1] if n > 0 else reqs[n]
    body = req["body"]
    if not isinstance(body, dict):
        print("(not JSON: %s)" % esc(str(body)[:200]))
        return 0
    for m in body.get("messages", []):
        role = m.get("role")
        if role in ("system", "developer"):
            print("%s: ..." % role)
            continue
        text = text_of(m.get("content"))
        calls = m.get("tool_calls") or []
        if text or not calls:
            print("%s: %s" % (role, esc(text)))
        for c in calls:
            fn = c.get("function", {})
            try:
                args = json.dumps(json.loads(fn.get("arguments") or "{}"), separators=(",", ":"))
            except ValueError:
                args = fn.get("arguments")
            print("%s: call %s %s" % (role, fn.get("name"), args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
