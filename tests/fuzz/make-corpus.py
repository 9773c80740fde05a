#!/usr/bin/env python3
"""Regenerates the seed corpora in tests/fuzz/corpus/<harness>/ from the test data:
tests/data/fixtures/*.jsonl (lines, and small whole sessions) and
tests/golden/render/*/ (input.json, expected.md), plus hand-made corner
cases.  Deterministic; kept small (a few hundred KB in all).

    python3 tests/fuzz/make-corpus.py          (from the repository root)
"""
import glob
import hashlib
import json
import os
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")
FIXTURES = sorted(glob.glob(os.path.join(ROOT, "tests/data/fixtures/*.jsonl")))
GOLDEN = sorted(glob.glob(os.path.join(ROOT, "tests/golden/render/*/")))
GOLDEN_PARSE = sorted(glob.glob(os.path.join(ROOT, "tests/golden/parse/*/")))
MAX_LINE = 3000


def write(harness, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(OUT, harness)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def fixture_lines():
    """(path, line bytes) of every fixture line, newline stripped."""
    for path in FIXTURES:
        with open(path, "rb") as f:
            for line in f:
                yield path, line.rstrip(b"\n")


def kind_of(line):
    try:
        v = json.loads(line)
    except ValueError:
        return "?"
    if not isinstance(v, dict):
        return "?"
    msg = v.get("message")
    role = msg.get("role") if isinstance(msg, dict) else None
    blocks = ()
    content = msg.get("content") if isinstance(msg, dict) else v.get("content")
    if isinstance(content, list):
        blocks = tuple(sorted({b.get("type", "?") for b in content if isinstance(b, dict)}))
    return (v.get("type"), role, msg.get("toolName") if isinstance(msg, dict) else None, blocks)


def pick_lines(per_kind):
    """A few short lines of each kind (type, role, tool, block types)."""
    seen = {}
    out = []
    for path, line in fixture_lines():
        if len(line) > MAX_LINE:
            continue
        k = kind_of(line)
        if seen.get(k, 0) >= per_kind:
            continue
        seen[k] = seen.get(k, 0) + 1
        out.append(line)
    return out


HANDMADE_LINES = [
    b'{}',
    b' { "type" : "message" , "id" : "a" , "parentId" : null } ',
    b'{"type":"message","id":"a","parentId":"b","timestamp":"2026-01-01T00:00:00Z","message":{"role":"toolResult","toolName":"bash","content":"x"}}',
    b'{"type":"message","id":"a","message":{"role":"user"},"message":{"toolName":"t"}}',
    b'{"type":"message","id":"a","message":{"r\\u006fle":"user","toolN\\u0061me":"bash"}}',
    b'{"typ\\u0065":"label","id":"l","targetId":"a","label":"x"}',
    b'{"type":"m\\u00e9ssage","id":"\\ud83d\\ude00","parentId":"\\u0000"}',
    b'{"type":"x","id":"a","k":"\\ud800"}',
    b'{"type":"x","id":"a","k":{"a\\u0000":1}}',
    b'{"type":"x","id":"a","n":1e400,"m":123456789012345678901234567890}',
    b'{"type":"x","id":"a","n":-0.0e-5,"t":true,"f":false,"z":null,"a":[],"o":{}}',
    b'{"type":"x","id":"a","s":"\xff\xfe invalid \xc3"}',
    b'{"type":"x","id":"a\xe2\x82"}',
    b'{"a":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00ff"}',
    b'{"a":01}', b'{"a":1.}', b'{"a":.5}', b'{"a":+1}', b'{"a":tru}', b'{"a" 1}', b'{"a":1,}', b'{,}',
    b'[1,2]', b'"s"', b'', b'   ', b'{"a":"\t"}', b'{"a":1} x',
]


def deep(n, inner=b"1"):
    return b'{"type":"x","id":"d","v":' + b"[" * n + inner + b"]" * n + b"}"


def seeds_scan():
    # fuzz_jparse reads the same lines: both are checked against jansson
    for harness in ("fuzz_scan", "fuzz_jparse"):
        for line in pick_lines(3):
            write(harness, line)
        for line in HANDMADE_LINES:
            write(harness, line)
        # around the nesting limit (2048, jansson's and the scanner's)
        for n in (2045, 2046, 2047, 2048):
            write(harness, deep(n))
            write(harness, deep(n, b""))


def session_seed(ctl, cut, body):
    if isinstance(body, str):
        body = body.encode()
    return bytes([ctl, cut]) + body


def first_lines(path, n, limit):
    out = []
    with open(path, "rb") as f:
        for line in f:
            if len(line) > MAX_LINE:
                continue
            out.append(line)
            if len(out) >= n or sum(map(len, out)) > limit:
                break
    return b"".join(out)


SPEC_SESSION = """\
{"type":"session","version":3,"id":"uuid","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/path/to/project"}
{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"Hello"}}
{"type":"message","id":"b2c3d4e5","parentId":"a1b2c3d4","timestamp":"2024-12-03T14:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Hi!"}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"stop"}}
{"type":"message","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":"2024-12-03T14:00:03.000Z","message":{"role":"toolResult","toolCallId":"call_123","toolName":"bash","content":[{"type":"text","text":"output"}],"isError":false}}
{"type":"model_change","id":"d4e5f6g7","parentId":"c3d4e5f6","timestamp":"2024-12-03T14:05:00.000Z","provider":"openai","modelId":"gpt-4o"}
{"type":"thinking_level_change","id":"e5f6g7h8","parentId":"d4e5f6g7","timestamp":"2024-12-03T14:06:00.000Z","thinkingLevel":"high"}
{"type":"compaction","id":"f6g7h8i9","parentId":"e5f6g7h8","timestamp":"2024-12-03T14:10:00.000Z","summary":"User discussed X, Y, Z...","firstKeptEntryId":"c3d4e5f6","tokensBefore":50000}
{"type":"branch_summary","id":"g7h8i9j0","parentId":"a1b2c3d4","timestamp":"2024-12-03T14:15:00.000Z","fromId":"f6g7h8i9","summary":"Branch explored approach A..."}
{"type":"custom","id":"h8i9j0k1","parentId":"g7h8i9j0","timestamp":"2024-12-03T14:20:00.000Z","customType":"my-extension","data":{"count":42}}
{"type":"custom_message","id":"i9j0k1l2","parentId":"h8i9j0k1","timestamp":"2024-12-03T14:25:00.000Z","customType":"my-extension","content":"Injected context...","display":true}
{"type":"label","id":"j0k1l2m3","parentId":"i9j0k1l2","timestamp":"2024-12-03T14:30:00.000Z","targetId":"a1b2c3d4","label":"checkpoint-1"}
{"type":"session_info","id":"k1l2m3n4","parentId":"j0k1l2m3","timestamp":"2024-12-03T14:35:00.000Z","name":"Refactor auth module"}
{"type":"compaction","id":"f6g7h8i0","parentId":"k1l2m3n4","timestamp":"2024-12-03T14:10:00.000Z","summary":"again","tokensBefore":50000,"retainedTail":[{"role":"user","content":"latest request"},{"role":"assistant","content":[{"type":"text","text":"latest reply"}],"stopReason":"stop"}]}
"""

# Labels, clashing labels, duplicate ids, orphans, extra roots, a label
# cleared and set again, a second header, malformed lines, a partial line.
TRICKY_SESSION = """\
{"type":"message","id":"r1","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"one"}}
{"type":"message","id":"r2","parentId":"r1","timestamp":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":"two"}]}}
{"type":"message","id":"b1","parentId":"r1","timestamp":"2026-01-01T00:00:03Z","message":{"role":"user","content":"fork"}}
{"type":"message","id":"b2","parentId":"r1","timestamp":"2026-01-01T00:00:04Z","message":{"role":"user","content":"fork 2"}}
{"type":"label","id":"l1","parentId":"r2","targetId":"b1","label":"same"}
{"type":"label","id":"l2","parentId":"l1","targetId":"b2","label":"same"}
{"type":"label","id":"l3","parentId":"l2","targetId":"r1","label":"a/b c"}
{"type":"label","id":"l4","parentId":"l3","targetId":"r1","label":""}
{"type":"label","id":"l5","parentId":"l4","targetId":"r1","label":"back"}
{"type":"message","id":"r2","parentId":"b1","message":{"role":"user","content":"duplicate id"}}
{"type":"message","id":"o1","parentId":"nowhere","message":{"role":"user","content":"orphan"}}
{"type":"message","id":"x1","parentId":null,"message":{"role":"toolResult","toolName":"a.b/c","content":"root 2"}}
{"type":"session","version":3,"id":"second"}
not json
{"type":"message","id":"","message":{}}
{"type":"session_info","id":"n1","parentId":"o1","name":"  named  "}
{"type":"message","id":"r3","parentId":"r2","timestamp":"2026-01-01T00:00:05Z","message":{"role":"user","content":"partial
"""

V1_SESSION = """\
{"type":"session","id":"v1-sess","timestamp":"2025-12-09T00:53:29.825Z","cwd":"/x"}
{"type":"message","timestamp":"2025-12-09T00:53:30.000Z","message":{"role":"user","content":"hi"}}
{"type":"message","timestamp":"2025-12-09T00:53:31.000Z","message":{"role":"hookMessage","content":"hook"}}
{"type":"compaction","timestamp":"2025-12-09T00:53:32.000Z","summary":"s","firstKeptEntryIndex":1,"tokensBefore":5}
{"type":"message","timestamp":"2025-12-09T00:53:33.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}
"""


def seeds_session():
    for i, path in enumerate(FIXTURES):
        body = first_lines(path, 12, 12000)
        for cut in (0, 97, 255):
            write("fuzz_session", session_seed(0, (cut + 31 * i) % 256, body))
    write("fuzz_session", session_seed(0, 128, SPEC_SESSION))
    write("fuzz_session", session_seed(0, 200, SPEC_SESSION))
    for ctl in (1, 3, 5, 7):
        write("fuzz_session", session_seed(ctl, 77, TRICKY_SESSION))
    write("fuzz_session", session_seed(0, 140, V1_SESSION))
    write("fuzz_session", session_seed(0, 0, ""))
    write("fuzz_session", session_seed(1, 0, ""))
    write("fuzz_session", session_seed(0, 60, "garbage\n{\"type\":\"x\"}\n"))


# Message lines where sessioninfo's fast path must give what jansson gives
# (or decline): escapes, surrogates, text that is no string, duplicate and
# escaped keys, timestamps of every kind, invalid UTF-8, cases to lower.
INFO_LINES = [
    r'{"type":"message","timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"a\"b\\c\/d\b\f\n\r\t\u00e9\u20ac\ud83d\ude00 \ud800 \udc00 \ud800\ud800\udc00 \u0000 end"}}',
    r'{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"one"},{"type":"thinking","thinking":"t\"}"},{"type":"toolCall","arguments":{"a":[1,{"b":"]}"}]}},{"type":"text","text":"two"}],"timestamp":1767225600123}}',
    r'{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":5},{"type":"text","text":true},{"type":"text","text":[1,null,[2]]},{"type":"text","text":{}},{"type":"text","text":null},{"type":"text"},{"type":"text","text":-0.0}]}}',
    r'{"type":"message","message":{"role":"user","content":[null,{"type":"text","text":"x"}]}}',
    r'{"type":"message","message":{"role":"user","content":[1,"s",[{"type":"text","text":"nested"}],{"type":"image","data":"AAAA"},{"type":"text","text":"kept"}]}}',
    r'{"type":"message","message":{"role":"user","content":null}}',
    r'{"type":"message","message":{"role":"user","content":{"type":"text","text":"obj"}}}',
    r'{"type":"message","message":{"role":"user","content":42}}',
    r'{"type":"message","message":{"role":"user"}}',
    r'{"type":"message","message":{"role":"user","content":"first","content":[{"type":"text","text":"second","text":"third","type":"text"}]}}',
    r'{"type":"message","message":{"role":"user","content":"a"},"message":{"role":"assistant","content":"b"}}',
    r'{"type":"message","message":{"role":"user","content":[{"t\u0065xt":"esc key","type":"text"},{"type":"t\u0065xt","text":"esc type"}]}}',
    r'{"type":"message","message":{"role":"user","c\u006fntent":"esc","content":"plain"}}',
    r'{"type":"message","message":{"role":"us\u0065r","content":"escaped role"}}',
    r'{"type":"message","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":"t","timestamp":"2026-01-01T00:00:03Z"}}',
    r'{"type":"message","timestamp":1767225600000,"message":{"role":"user","content":"num entry time"}}',
    r'{"type":"message","timestamp":null,"message":{"role":"user","content":"null time","timestamp":-0}}',
    r'{"type":"message","timestamp":"2026-01-0\u0031T00:00:00Z","message":{"role":"user","content":"esc time"}}',
    r'{"type":"message","timestamp":true,"message":{"role":"user","content":"x","timestamp":1e400}}',
    r'{"type":"message","message":{"role":"user","content":"x","timestamp":123456789012345678901234567890}}',
    r'{"type":"message","message":{"role":"user","content":"x","usage":{"big":1E+309}}}',
    r'{"type":"message","message":{"role":"user","content":"x","args":{"k\u0000":1}}}',
    '{"type":"message","message":{"role":"user","content":"bad \xff\xc3 utf8"}}',
    '{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","arguments":{"a":"\xff"}},{"type":"text","text":"ok"}]}}',
    r'{"type":"message","message":{"role":"user","content":"\u0130STANBUL \u03a3\u039f\u03a3 \u00c9T\u00c9 ABC"}}',
    '{"type":"message","message":{"role":"user","content":"\xc4\xb0STANBUL \xce\xa3\xce\x9f\xce\xa3 \xc3\x89T\xc3\x89 ABC"}}',
    r'{"type":"message","message":{"role":"user","content":""}}',
    r'{"type":"message","message":{"role":"user","content":[]}}',
    r'{"type":"message","message":{"role":"user","content":[{"type":"text","text":""},{"type":"text","text":""}]}}',
    r' { "type" : "message" , "message" : { "role" : "user" , "content" : [ { "type" : "text" , "text" : "spaced" } , 7 ] , "timestamp" : 5 } } ',
    r'{"type":"session_info","name":"  a name  "}',
    r'{"type":"message","message":{"role":"toolResult","content":"tool"}}',
    # What a skim (search_query_rules_out) must not miss: a query's letters
    # spelled by escapes, U+212A or U+0130, a slash written \/, a name.
    r'{"type":"message","message":{"role":"user","content":"\u006b \u212a \u0130 x\/y hi\u0020there"}}',
    '{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"\xe2\x84\xaa \xc4\xb0 zq 1"}]}}',
    r'{"type":"message","message":{"role":"toolResult","content":"ok text k i a b zq 1 x/y"}}',
    r'{"type":"session_info","name":"ok text"}',
]


def seeds_sessioninfo():
    for i, path in enumerate(FIXTURES):
        body = first_lines(path, 12, 12000)
        write("fuzz_sessioninfo", session_seed(0, (97 + 31 * i) % 256, body))
    lines = [l.encode("latin-1") for l in INFO_LINES]
    for i, line in enumerate(lines):
        write("fuzz_sessioninfo", session_seed(1, 128, line + b"\n"))
    body = b"\n".join(lines) + b"\n"
    write("fuzz_sessioninfo", session_seed(1, 100, body))
    write("fuzz_sessioninfo", session_seed(1, 200, body.replace(b"\n", b"\r\n")))
    write("fuzz_sessioninfo", session_seed(1, 50, body.replace(b"\n", b"\r")))
    write("fuzz_sessioninfo", session_seed(0, 128, SPEC_SESSION))
    write("fuzz_sessioninfo", session_seed(1, 77, TRICKY_SESSION))
    write("fuzz_sessioninfo", session_seed(0, 140, V1_SESSION))


def golden_inputs():
    for d in GOLDEN:
        p = os.path.join(d, "input.json")
        if os.path.exists(p):
            with open(p, "rb") as f:
                yield d, f.read()


def read(path):
    with open(path, "rb") as f:
        return f.read()


def golden_parse_cases():
    """(input.md, original.json or None) of tests/golden/parse, small ones."""
    for d in GOLDEN_PARSE:
        md = os.path.join(d, "input.md")
        orig = os.path.join(d, "original.json")
        if not os.path.exists(md) or os.path.getsize(md) > 16000:
            continue
        yield read(md), read(orig) if os.path.exists(orig) else None


def seeds_render_parse():
    for md, orig in golden_parse_cases():
        if orig is not None:
            # an edit of the original
            write("fuzz_render_parse", orig.rstrip(b"\n") + b"\0" + md)
    for d, data in golden_inputs():
        write("fuzz_render_parse", data)
        md = os.path.join(d, "expected.md")
        if os.path.exists(md):
            with open(md, "rb") as f:
                # JSON NUL Markdown: the Markdown is parsed as an edit of the JSON
                write("fuzz_render_parse", data.rstrip(b"\n") + b"\0" + f.read())
    for line in pick_lines(2):
        write("fuzz_render_parse", line)
    for line in HANDMADE_LINES[:14]:
        write("fuzz_render_parse", line)
    for v in ("null", "[1,\"a\"]", "\"just a string\"", "3.0", "-0.0", "1e21"):
        write("fuzz_render_parse", v)


def seeds_parse():
    for md, orig in golden_parse_cases():
        if orig is None:
            write("fuzz_parse", md)
    for d in GOLDEN:
        p = os.path.join(d, "expected.md")
        if os.path.exists(p):
            with open(p, "rb") as f:
                data = f.read()
            write("fuzz_parse", data)
            write("fuzz_parse", data.replace(b"\n", b"\r\n"))
    for text in ("hello\n", "---\n", "---\r\nx\r\n", "   \n", "---\ntype: x\n---\n",
                 "---\ntype: message\nrole: user\ncontent: string\n---\nhi\n",
                 "---\ntype: x\n\"odd key\": 1\nentry.a: [1]\nmessage.b: {}\n---\n<!-- pi:json x -->\n```json\n{}\n```\n"):
        write("fuzz_parse", text)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    seeds_scan()
    seeds_session()
    seeds_render_parse()
    seeds_parse()
    seeds_sessioninfo()
    for h in sorted(os.listdir(OUT)):
        files = os.listdir(os.path.join(OUT, h))
        size = sum(os.path.getsize(os.path.join(OUT, h, f)) for f in files)
        print(f"{h}: {len(files)} files, {size} bytes")


if __name__ == "__main__":
    main()
