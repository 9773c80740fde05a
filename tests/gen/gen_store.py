#!/usr/bin/env python3
"""Generate a realistic synthetic pi session store, deterministically.

    tests/gen/gen_store.py --preset tiny|default|large --seed S --out DIR
                           [--jobs N] [--manifest FILE] [shape overrides]

The same preset, seed and overrides always give byte-identical files, no
matter how many worker processes write them (every session draws from its
own random generator, seeded from the seed, its project and its number).

What a store looks like (pi 1.6.0's format, docs: session-format.txt):

* project directories ``--home-user-<name>--``, each holding session files
  ``<ISO time with - for : and .>_<uuidv7>.jsonl``;
* each file: a version-3 header, then entries with ``type``, ``id`` (8 hex
  digits), ``parentId``, ``timestamp`` first, the way pi's SessionManager
  writes them: the start pi 1.6.0 writes (model_change,
  thinking_level_change, a system message with sections and toolsAdded),
  then turns: a user message, assistant messages with usage, thinking blocks
  (with signatures) and toolCall blocks, and toolResult messages whose text
  sizes follow a log-normal distribution (capped at pi's 50 KB truncation),
  some of them base64 PNG images (read tool) and a few user images; now and
  then bashExecution messages, model and thinking-level changes, labels
  (some on branch starts: named branches), session_info names, custom and
  custom_message entries, usage entries;
* branching: with probability --branch-p per step the conversation goes
  back to an earlier entry of the current path (a re-edited user message,
  sometimes after a branch_summary), so a session is a tree;
* compaction: when the path since the last compaction holds more than
  --compact-kb of text (times a random factor), a compaction entry with
  summary, firstKeptEntryId (a user message a few turns back on the path),
  tokensBefore, details and the systemMessage copy pi 1.6.0 adds.

Sizes: each project gets a byte budget that is split over its sessions with
a log-normal distribution; a session gets an entry count from its budget and
a per-session mean entry size, and tool outputs are scaled as it is written
so that both targets are met (within a few percent).  The "big" session is
one session with --big-entries entries and about --big-mb megabytes.

Presets:
  tiny     a few MB: a 40-session project, two 6-session projects, a 3 MB
           big session (seconds)
  large    5,000 sessions of about 1.9 GB in one project, two 100-session
           projects of 25 MB each, and one 50 MB session with 20,000
           entries in a project of its own (about 2 GB in all)
  default  the same as large

A manifest (JSON, default DIR.manifest.json, outside the store) records the
shape that was written: projects, sessions, bytes, the big session's path,
size and entry count, and a needle string that occurs in a known number of
tool outputs (for grep benchmarks).

Python 3 standard library only.
"""

import argparse
import base64
import hashlib
import json
import math
import multiprocessing
import os
import random
import sys
import time

GEN_VERSION = 1  # bump when the output for a given seed changes

NEEDLE = "pisessionfs-bench-needle"

PRESETS = {
    "tiny": {
        "projects": [
            # name, sessions, bytes
            ["webapp", 40, 2_500_000],
            ["infra", 6, 600_000],
            ["docs", 6, 600_000],
        ],
        "big_project": "monorepo",
        "big_entries": 2000,
        "big_mb": 3.0,
        "big_branch_p": 0.03,
    },
    "large": {
        "projects": [
            ["webapp", 5000, 1_900_000_000],
            ["infra", 100, 25_000_000],
            ["docs", 100, 25_000_000],
        ],
        "big_project": "monorepo",
        "big_entries": 20000,
        "big_mb": 50.0,
        "big_branch_p": 0.03,
    },
    # Issue 37: one long session, as long autonomous runs and sessions
    # never compacted make them (50,000 entries in 20 MB, about 40
    # branches), beside a few small ones.
    "long": {
        "projects": [
            ["webapp", 20, 1_000_000],
        ],
        "big_project": "monorepo",
        "big_entries": 50000,
        "big_mb": 20.0,
        "big_branch_p": 0.004,
    },
}
PRESETS["default"] = PRESETS["large"]

SHAPE_DEFAULTS = {
    "branch_p": 0.015,      # per step: go back to an earlier entry
    "compact_kb": 600,      # text on the path before a compaction (x 0.5..1.5)
    "image_p": 0.01,        # per tool result: a read of an image (base64 PNG)
    "user_image_p": 0.004,  # per user message: an attached image
    "label_p": 0.01,        # per step: a label entry
    "tool_median": 700,     # bytes, median tool output (before scaling)
    "tool_sigma": 1.4,      # log-normal sigma of tool output sizes
    "tool_cap": 51200,      # pi truncates tool output at 50 KB
    "session_sigma": 1.1,   # log-normal sigma of session sizes in a project
    "entry_mean": 2400,     # bytes, mean entry size (per-session, log-normal)
}

# ---------------------------------------------------------------- text corpus

WORDS = (
    "the a to of and in is for that it with on as this be are by from at or an not we can if "
    "function return const let var import export class interface type async await new throw try catch "
    "error warning info debug trace request response handler server client config option value key "
    "file path dir module package build test spec assert expect mock fixture deploy release version "
    "user session token cache index buffer stream reader writer parse render context message entry "
    "branch tree node parent child leaf label name header line offset length size count total "
    "src lib util core api http json yaml toml sql query table column row schema migration "
    "docker kubernetes pod service ingress volume secret env variable flag default timeout retry "
    "commit merge rebase diff patch hunk staged unstaged remote origin main feature fix refactor "
    "\u00e9t\u00e9 na\u00efve caf\u00e9 \u2192 \u2713 \u2026"
).split()

CODE_SNIPPETS = [
    'if (err) {\n\treturn -1;\n}\n',
    'for (size_t i = 0; i < n; i++)\n\tsum += a[i];\n',
    'const x = await fetch(`${base}/api/v1/items?limit=${n}`);\n',
    'def handler(event, ctx):\n    return {"statusCode": 200, "body": json.dumps(event)}\n',
    'export function parse(input: string): Node[] {\n  return tokenize(input).map(toNode);\n}\n',
    '  "dependencies": {\n    "react": "^18.2.0",\n    "typescript": "~5.4.0"\n  },\n',
    'SELECT id, name FROM users WHERE created_at > NOW() - INTERVAL \'7 days\';\n',
    'FAIL src/parser.test.ts\n  \u25cf parse \u203a handles escapes\n    expect(received).toBe(expected)\n',
    '    at Object.<anonymous> (/home/user/work/src/index.js:42:13)\n',
    'drwxr-xr-x  5 user user  4096 Nov 29 19:11 src\n-rw-r--r--  1 user user  1523 Nov 29 19:11 README.md\n',
    '@@ -12,7 +12,9 @@ export class Store {\n-  private cache = new Map();\n+  private cache = new LRU(256);\n',
    'warning: unused variable `buf` [-Wunused-variable]\n',
    'PASS  tests/unit/session.test.ts (4.213 s)\n',
    '\t"path\\\\with\\\\backslashes": "C:\\\\Users\\\\x",\n',
]


def make_corpus(size, seed):
    """A deterministic block of code-, log- and prose-like text."""
    rng = random.Random("corpus:%s" % seed)
    parts = []
    total = 0
    words = WORDS
    while total < size:
        r = rng.random()
        if r < 0.35:
            s = rng.choice(CODE_SNIPPETS)
        elif r < 0.5:
            s = "%s:%d:%d: %s %s\n" % (
                "/".join(rng.choice(words) for _ in range(rng.randint(2, 4))) + ".ts",
                rng.randint(1, 900), rng.randint(1, 80), rng.choice(("error", "warning", "note")),
                " ".join(rng.choice(words) for _ in range(rng.randint(4, 12))))
        else:
            n = rng.randint(5, 25)
            s = " ".join(rng.choice(words) for _ in range(n))
            s = s[0].upper() + s[1:] + (".\n" if rng.random() < 0.6 else ". ")
        parts.append(s)
        total += len(s)
    return "".join(parts)


CORPUS = None
CORPUS_LEN = 0
IMAGES = None


def init_pools(seed):
    global CORPUS, CORPUS_LEN, IMAGES
    if CORPUS is None:
        CORPUS = make_corpus(3 << 20, seed)
        CORPUS_LEN = len(CORPUS)
        rng = random.Random("images:%s" % seed)
        IMAGES = []
        for size in (12_000, 30_000, 60_000, 90_000, 150_000, 220_000):
            png = b"\x89PNG\r\n\x1a\n" + bytes(rng.getrandbits(8) for _ in range(size))
            IMAGES.append(base64.b64encode(png).decode("ascii"))


def text(rng, n):
    """n characters (about) of corpus text starting at a random place."""
    if n <= 0:
        return ""
    n = int(n)
    if n >= CORPUS_LEN:
        reps = n // CORPUS_LEN + 1
        return (CORPUS * reps)[:n]
    off = rng.randrange(0, CORPUS_LEN - n)
    return CORPUS[off:off + n]


ENC = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode

# ---------------------------------------------------------------- pi-like pieces

TOOLS_ADDED = [
    {"name": "read", "description": "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files.",
     "parameters": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string", "description": "Path to the file to read (relative or absolute)"}, "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"}, "limit": {"type": "number", "description": "Maximum number of lines to read"}}},
     "constrainedSampling": {"type": "json_schema", "strict": "prefer"}},
    {"name": "bash", "description": "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first).",
     "parameters": {"type": "object", "required": ["command"], "properties": {"command": {"type": "string", "description": "Shell command to execute"}, "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"}}},
     "constrainedSampling": {"type": "json_schema", "strict": "prefer"}},
    {"name": "edit", "description": "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file.",
     "parameters": {"type": "object", "required": ["path", "edits"], "properties": {"path": {"type": "string"}, "edits": {"type": "array", "items": {"type": "object", "required": ["oldText", "newText"], "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}}}}}},
     "constrainedSampling": {"type": "json_schema", "strict": "prefer"}},
    {"name": "write", "description": "Write content to a file. Creates the file if it doesn't exist, overwrites if it does.",
     "parameters": {"type": "object", "required": ["path", "content"], "properties": {"path": {"type": "string"}, "content": {"type": "string"}}},
     "constrainedSampling": {"type": "json_schema", "strict": "prefer"}},
]


def system_message(cwd, ts_ms, first):
    sections = {
        "preamble": "You are a coding assistant running inside pi, a coding agent harness. Help users inspect files, run commands, and modify code.",
        "tools": "<tools>\n- read: Read file contents\n- bash: Execute bash commands (ls, grep, find, etc.)\n- edit: Make precise file edits with exact text replacement\n- write: Create or overwrite files\n\nAdditional tools may be available.\n</tools>",
        "rules": "<rules>\n- Use bash for file operations like ls, rg, find\n- Use read to examine files instead of cat or sed.\n- Use edit for targeted changes. Batch changes to one file in a single call.\n- Use write only for new files or complete rewrites.\n- Be concise in your responses\n- Show file paths clearly when working with files\n</rules>",
        "docs": "<docs>\nPi documentation (read only when the user asks about the harness itself):\n- Main documentation: /usr/lib/node_modules/@earendil-works/pi-coding-agent/README.md\n- Additional docs: /usr/lib/node_modules/@earendil-works/pi-coding-agent/docs\n</docs>",
        "cwd": "<cwd>\n%s\n</cwd>" % cwd,
    }
    m = {"role": "system", "content": "", "sections": sections, "timestamp": ts_ms}
    if first:
        m["toolsAdded"] = TOOLS_ADDED
    return m


PROVIDERS = [
    ("anthropic", "anthropic-messages", "claude-sonnet-4-5"),
    ("anthropic", "anthropic-messages", "claude-opus-4-1"),
    ("openai", "openai-responses", "gpt-5"),
    ("google", "google-generative-ai", "gemini-2.5-pro"),
]
LEVELS = ["off", "minimal", "low", "medium", "high"]
LABELS = ["checkpoint", "good", "try-b", "before-refactor", "wip", "bisect", "todo"]
NAMES = ["Refactor auth module", "Fix flaky tests", "Add caching layer", "Investigate OOM",
         "Port parser to Rust", "Upgrade dependencies", "Write docs", "Debug CI"]
FILES = ["src/index.ts", "src/store.ts", "src/parser/lexer.ts", "tests/store.test.ts", "README.md",
         "package.json", "src/server/http.ts", "docs/design.md", "Makefile", "src/util/lru.ts"]
HEX = "0123456789abcdef"
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def iso(ms):
    s, m = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + ".%03dZ" % m


def usage(rng, provider):
    inp = rng.randint(200, 60000)
    out = rng.randint(20, 4000)
    cr = rng.randint(0, 120000) if rng.random() < 0.7 else 0
    cw = rng.randint(0, 8000) if rng.random() < 0.3 else 0
    ci, co, ccr, ccw = inp * 3e-6, out * 15e-6, cr * 3e-7, cw * 3.75e-6
    u = {"input": inp, "output": out, "cacheRead": cr, "cacheWrite": cw}
    if provider != "anthropic":
        u["reasoning"] = rng.randint(0, out)
    u["totalTokens"] = inp + out + cr + cw
    u["cost"] = {"input": round(ci, 8), "output": round(co, 8), "cacheRead": round(ccr, 8),
                 "cacheWrite": round(ccw, 8), "total": round(ci + co + ccr + ccw, 8)}
    return u


class Session:
    """Writes one session file; entries are produced as pi would append them."""

    def __init__(self, rng, shape, cwd, start_ms, n_entries, n_bytes):
        self.rng = rng
        self.shape = shape
        self.cwd = cwd
        self.now = start_ms
        self.target_entries = max(4, n_entries)
        self.target_bytes = max(4000, n_bytes)
        self.lines = []
        self.bytes = 0
        self.ids = set()
        self.path = []            # ids on the current path, root first
        self.kinds = {}           # id -> "user"/"assistant"/... (for firstKept choice)
        self.path_text = 0        # text since the last compaction on this path
        self.compact_at = shape["compact_kb"] * 1024 * rng.uniform(0.5, 1.5)
        self.call_no = 0
        self.needles = 0
        prov = rng.choice(PROVIDERS)
        self.provider, self.api, self.model = prov
        self.level = rng.choice(LEVELS)
        self.starts = []          # first entries of branches
        self.pending_start = False

    # -- low level
    def tick(self, lo=200, hi=20000):
        self.now += self.rng.randint(lo, hi)
        return self.now

    def new_id(self):
        rng = self.rng
        while True:
            i = "%08x" % rng.getrandbits(32)
            if i not in self.ids:
                self.ids.add(i)
                return i

    def append(self, typ, fields, kind):
        eid = self.new_id()
        parent = self.path[-1] if self.path else None
        e = {"type": typ, "id": eid, "parentId": parent, "timestamp": iso(self.tick())}
        e.update(fields)
        line = ENC(e)
        self.lines.append(line)
        self.bytes += len(line) + 1
        self.path.append(eid)
        self.kinds[eid] = kind
        self.path_text += len(line)
        if self.pending_start:
            self.starts.append(eid)
            self.pending_start = False
        return eid

    def scale(self):
        """Factor for content sizes so the file lands on its byte target."""
        left_e = self.target_entries - len(self.lines)
        left_b = self.target_bytes - self.bytes
        if left_e <= 0:
            return 1.0
        want = left_b / left_e
        return min(20.0, max(0.05, want / self.shape["entry_mean_base"]))

    def out_size(self, f):
        sh = self.shape
        n = self.rng.lognormvariate(math.log(sh["tool_median"]), sh["tool_sigma"]) * f
        return int(min(sh["tool_cap"], max(8, n)))

    # -- entries
    def start(self):
        ms = self.now
        if self.rng.random() < 0.9:
            self.append("model_change", {"provider": self.provider, "modelId": self.model}, "model_change")
        if self.rng.random() < 0.8:
            self.append("thinking_level_change", {"thinkingLevel": self.level}, "thinking_level_change")
        self.append("message", {"message": system_message(self.cwd, ms, True)}, "system")
        if self.rng.random() < 0.5:
            self.append("session_info", {"name": self.rng.choice(NAMES)}, "session_info")

    def user(self, f):
        rng = self.rng
        content = [{"type": "text", "text": text(rng, max(20, int(rng.lognormvariate(math.log(160), 1.0) * min(f, 3))))}]
        if rng.random() < self.shape["user_image_p"] * min(f, 2):
            content.append({"type": "image", "data": rng.choice(IMAGES), "mimeType": "image/png"})
        return self.append("message", {"message": {"role": "user", "content": content, "timestamp": self.now}}, "user")

    def assistant(self, f, with_tools):
        rng = self.rng
        content = []
        if self.level != "off" and rng.random() < 0.7:
            b = {"type": "thinking", "thinking": text(rng, int(rng.lognormvariate(math.log(300), 0.9) * min(f, 3)))}
            if self.provider == "anthropic":
                b["thinkingSignature"] = "".join(rng.choice(ALNUM) for _ in range(rng.randint(120, 400)))
            content.append(b)
        if not with_tools or rng.random() < 0.5:
            content.append({"type": "text", "text": text(rng, int(rng.lognormvariate(math.log(400), 1.0) * min(f, 4)))})
        calls = []
        if with_tools:
            for _ in range(1 if rng.random() < 0.8 else rng.randint(2, 3)):
                self.call_no += 1
                cid = "toolu_%s" % "".join(rng.choice(ALNUM) for _ in range(24))
                r = rng.random()
                if r < 0.45:
                    name, args = "bash", {"command": text(rng, rng.randint(10, 120)).replace("\n", " ")}
                elif r < 0.75:
                    name, args = "read", {"path": rng.choice(FILES)}
                    if rng.random() < 0.3:
                        args["offset"] = rng.randint(1, 400)
                        args["limit"] = rng.randint(20, 400)
                elif r < 0.93:
                    name, args = "edit", {"path": rng.choice(FILES), "edits": [
                        {"oldText": text(rng, rng.randint(20, 400)), "newText": text(rng, rng.randint(20, 600))}]}
                else:
                    name, args = "write", {"path": rng.choice(FILES), "content": text(rng, int(rng.randint(200, 4000) * min(f, 4)))}
                content.append({"type": "toolCall", "id": cid, "name": name, "arguments": args})
                calls.append((cid, name))
        m = {"role": "assistant", "content": content, "api": self.api, "provider": self.provider,
             "model": self.model, "usage": usage(rng, self.provider),
             "stopReason": "toolUse" if with_tools else "stop", "timestamp": self.now,
             "responseId": "msg_%s" % "".join(rng.choice(ALNUM) for _ in range(20)),
             "durationMs": rng.randint(300, 60000)}
        self.append("message", {"message": m}, "assistant")
        return calls

    def tool_result(self, f, cid, name):
        rng = self.rng
        details = None
        is_error = rng.random() < 0.05
        if name == "read" and rng.random() < self.shape["image_p"] * min(f, 3):
            content = [{"type": "text", "text": "Read image file [image/png]"},
                       {"type": "image", "data": rng.choice(IMAGES), "mimeType": "image/png"}]
        else:
            out = text(rng, self.out_size(f))
            if rng.random() < 0.01:
                out = out[: len(out) // 2] + "\n" + NEEDLE + " " + out[len(out) // 2:]
                self.needles += 1
            content = [{"type": "text", "text": out}]
            if name == "edit" and not is_error:
                content = [{"type": "text", "text": "Successfully replaced 1 block(s) in %s." % rng.choice(FILES)}]
                details = {"diff": out, "firstChangedLine": rng.randint(1, 500)}
            elif name == "bash" and rng.random() < 0.05:
                details = {"truncation": {"truncated": True, "truncatedBy": "bytes", "totalLines": rng.randint(2000, 90000)},
                           "fullOutputPath": "/tmp/pi-bash-%08x.log" % rng.getrandbits(32)}
        m = {"role": "toolResult", "toolCallId": cid, "toolName": name, "content": content}
        if details is not None:
            m["details"] = details
        m["isError"] = is_error
        m["durationMs"] = rng.randint(5, 30000)
        m["timestamp"] = self.now
        self.append("message", {"message": m}, "toolResult")

    def turn(self):
        rng = self.rng
        f = self.scale()
        self.user(f)
        rounds = 0 if rng.random() < 0.15 else min(12, int(rng.expovariate(1 / 3.0)) + 1)
        for _ in range(rounds):
            calls = self.assistant(f, True)
            for cid, name in calls:
                self.tick(50, 30000)
                self.tool_result(f, cid, name)
            if len(self.lines) >= self.target_entries:
                return
        self.assistant(f, False)

    def branch(self):
        """Go back to an earlier entry of the path (a re-edited prompt)."""
        rng = self.rng
        n = len(self.path)
        if n < 4:
            return
        back = min(n - 2, int(rng.expovariate(1 / 12.0)) + 2) if rng.random() < 0.85 else rng.randint(1, n - 2)
        k = n - 1 - back
        old_tip = self.path[-1]
        self.path = self.path[: k + 1]
        self.path_text = 0  # close enough: compaction pressure restarts
        self.pending_start = True
        if rng.random() < 0.3:
            self.append("branch_summary", {"fromId": old_tip, "summary": text(rng, rng.randint(200, 1500))}, "branch_summary")
        self.turn()  # the re-edited prompt and its answer
        if rng.random() < 0.3 and self.starts:
            # a named branch: a label on the branch's first entry
            self.append("label", {"targetId": self.starts[-1], "label": rng.choice(LABELS) + "-%d" % rng.randint(1, 99)}, "label")

    def compaction(self):
        rng = self.rng
        users = [i for i in self.path[-60:-2] if self.kinds.get(i) == "user"]
        first = rng.choice(users[-4:]) if users else self.path[-1]
        fields = {"summary": text(rng, rng.randint(800, 6000)), "firstKeptEntryId": first,
                  "tokensBefore": rng.randint(60000, 190000),
                  "details": {"readFiles": rng.sample(FILES, 3), "modifiedFiles": rng.sample(FILES, 2)}}
        if rng.random() < 0.3:
            fields["usage"] = usage(rng, self.provider)
        fields["systemMessage"] = system_message(self.cwd, self.now, False)
        self.append("compaction", fields, "compaction")
        self.path_text = 0
        self.compact_at = self.shape["compact_kb"] * 1024 * rng.uniform(0.5, 1.5)

    def misc(self):
        rng = self.rng
        r = rng.random()
        if r < 0.2:
            self.provider, self.api, self.model = rng.choice(PROVIDERS)
            self.append("model_change", {"provider": self.provider, "modelId": self.model}, "model_change")
        elif r < 0.35:
            self.level = rng.choice(LEVELS)
            self.append("thinking_level_change", {"thinkingLevel": self.level}, "thinking_level_change")
        elif r < 0.55:
            out = text(rng, self.out_size(self.scale()))
            self.append("message", {"message": {"role": "bashExecution", "command": text(rng, 40).replace("\n", " "),
                                                "output": out, "exitCode": rng.choice((0, 0, 0, 1, 2)),
                                                "cancelled": False, "truncated": False, "timestamp": self.now}}, "bashExecution")
        elif r < 0.65:
            self.append("session_info", {"name": rng.choice(NAMES)}, "session_info")
        elif r < 0.75:
            self.append("custom", {"customType": "my-extension", "data": {"count": rng.randint(0, 99), "note": text(rng, 30)}}, "custom")
        elif r < 0.85:
            self.append("custom_message", {"customType": "reminder", "content": text(rng, rng.randint(40, 600)),
                                           "display": rng.random() < 0.5}, "custom_message")
        else:
            self.append("usage", {"kind": "title", "provider": self.provider, "model": self.model,
                                  "usage": usage(rng, self.provider)}, "usage")

    def label(self):
        rng = self.rng
        target = rng.choice(self.path[-40:])
        self.append("label", {"targetId": target, "label": rng.choice(LABELS)}, "label")

    def run(self, header):
        self.lines.append(ENC(header))
        self.bytes += len(self.lines[0]) + 1
        self.start()
        rng = self.rng
        sh = self.shape
        while len(self.lines) - 1 < self.target_entries:
            r = rng.random()
            if self.path_text > self.compact_at:
                self.compaction()
            elif r < sh["branch_p"]:
                self.branch()
            elif r < sh["branch_p"] + sh["label_p"]:
                self.label()
            elif r < sh["branch_p"] + sh["label_p"] + 0.04:
                self.misc()
            else:
                self.turn()
        return "\n".join(self.lines) + "\n"


def uuid7(rng, ms):
    b = bytearray(rng.getrandbits(8) for _ in range(16))
    b[0:6] = ms.to_bytes(6, "big")
    b[6] = 0x70 | (b[6] & 0x0F)
    b[8] = 0x80 | (b[8] & 0x3F)
    h = b.hex()
    return "%s-%s-%s-%s-%s" % (h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])


def write_session(job):
    """Worker: job = (seed, shape, project_dir, cwd, index, start_ms, entries, bytes, out_root)."""
    seed, shape, pdir, cwd, index, start_ms, n_entries, n_bytes, out_root = job
    init_pools(seed)
    rng = random.Random("session:%s:%s:%d" % (seed, pdir, index))
    sid = uuid7(rng, start_ms)
    ts = iso(start_ms)
    header = {"type": "session", "version": 3, "id": sid, "timestamp": ts, "cwd": cwd}
    s = Session(rng, shape, cwd, start_ms, n_entries, n_bytes)
    data = s.run(header).encode("utf-8")
    name = "%s_%s.jsonl" % (ts.replace(":", "-").replace(".", "-"), sid)
    path = os.path.join(out_root, pdir, name)
    with open(path, "wb") as fh:
        fh.write(data)
    mtime = (start_ms + 3_600_000) / 1000.0
    os.utime(path, (mtime, mtime))
    return (pdir, name, len(data), len(s.lines) - 1, s.needles, len(s.starts))


def plan(args, preset):
    """Every session's job, in a fixed order."""
    shape = dict(SHAPE_DEFAULTS)
    for k in SHAPE_DEFAULTS:
        v = getattr(args, k, None)
        if v is not None:
            shape[k] = v
    # Mean size of an entry at scale 1 (measured once for these defaults);
    # the writer scales content so every session lands on its byte target.
    shape["entry_mean_base"] = 2400.0
    base_ms = 1_767_225_600_000  # 2026-01-01T00:00:00Z
    jobs = []
    projects = []
    prng = random.Random("plan:%s" % args.seed)
    scale = args.scale
    for name, n, nbytes in preset["projects"]:
        n = max(1, int(round(n * (args.sessions_scale or 1.0))))
        nbytes = int(nbytes * scale)
        pdir = "--home-user-work-%s--" % name
        cwd = "/home/user/work/%s" % name
        w = [prng.lognormvariate(0, shape["session_sigma"]) for _ in range(n)]
        tot = sum(w)
        projects.append({"dir": pdir, "sessions": n, "target_bytes": nbytes})
        for i in range(n):
            b = max(6000, int(nbytes * w[i] / tot))
            b = min(b, 40_000_000)
            mean = shape["entry_mean"] * prng.lognormvariate(0, 0.35)
            e = max(6, int(b / mean))
            start = base_ms + i * 3_600_000 + prng.randint(0, 3_000_000)
            jobs.append([args.seed, shape, pdir, cwd, i, start, e, b, args.out])
    big = None
    if preset.get("big_entries"):
        name = preset["big_project"]
        pdir = "--home-user-work-%s--" % name
        cwd = "/home/user/work/%s" % name
        bshape = dict(shape)
        bshape["branch_p"] = preset.get("big_branch_p", shape["branch_p"])
        e = int(preset["big_entries"] * (args.big_scale or 1.0))
        b = int(preset["big_mb"] * 1e6 * (args.big_scale or 1.0))
        projects.append({"dir": pdir, "sessions": 1, "target_bytes": b, "big": True})
        big = [args.seed, bshape, pdir, cwd, 0, base_ms + 86_400_000, e, b, args.out]
        jobs.insert(0, big)  # the longest job first
    return jobs, projects, big


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="tiny", choices=sorted(PRESETS))
    ap.add_argument("--seed", default="1")
    ap.add_argument("--out", required=True, help="store directory (created; must not exist or be empty)")
    ap.add_argument("--manifest", help="where to write the manifest (default OUT.manifest.json)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every project's byte budget")
    ap.add_argument("--sessions-scale", type=float, default=None, help="multiply every project's session count")
    ap.add_argument("--big-scale", type=float, default=None, help="multiply the big session's entries and bytes")
    for k, v in SHAPE_DEFAULTS.items():
        ap.add_argument("--" + k.replace("_", "-"), dest=k, type=type(v), default=None,
                        help="shape: %s (default %s)" % (k, v))
    args = ap.parse_args()
    args.out = os.path.abspath(args.out)
    preset = PRESETS[args.preset]
    t0 = time.time()
    if os.path.exists(args.out) and os.listdir(args.out):
        sys.exit("gen_store: %s exists and is not empty" % args.out)
    jobs, projects, big = plan(args, preset)
    for p in projects:
        os.makedirs(os.path.join(args.out, p["dir"]), exist_ok=True)
    init_pools(args.seed)
    results = []
    if args.jobs > 1:
        ctx = multiprocessing.get_context("fork") if hasattr(os, "fork") else multiprocessing
        with ctx.Pool(args.jobs) as pool:
            for r in pool.imap_unordered(write_session, jobs, chunksize=4):
                results.append(r)
    else:
        for j in jobs:
            results.append(write_session(j))
    by_dir = {p["dir"]: p for p in projects}
    for p in projects:
        p.update(bytes=0, entries=0, needles=0)
    big_info = None
    for pdir, name, nbytes, nent, needles, branches in results:
        p = by_dir[pdir]
        p["bytes"] += nbytes
        p["entries"] += nent
        p["needles"] += needles
        if p.get("big"):
            big_info = {"project": pdir, "session": name[:-len(".jsonl")], "file": "%s/%s" % (pdir, name),
                        "bytes": nbytes, "entries": nent, "branches": branches}
    h = hashlib.sha256()
    for pdir, name, nbytes, nent, _, _ in sorted(results):
        h.update(("%s/%s %d %d\n" % (pdir, name, nbytes, nent)).encode())
    manifest = {
        "generator": "tests/gen/gen_store.py", "gen_version": GEN_VERSION,
        "preset": args.preset, "seed": args.seed, "scale": args.scale,
        "store": args.out, "needle": NEEDLE,
        "projects": projects, "big": big_info,
        "sessions": len(results), "bytes": sum(r[2] for r in results),
        "entries": sum(r[3] for r in results),
        "listing_sha256": h.hexdigest(),
        "seconds": round(time.time() - t0, 1),
    }
    mpath = args.manifest or args.out.rstrip("/") + ".manifest.json"
    with open(mpath, "w") as fh:
        json.dump(manifest, fh, indent=2)
        fh.write("\n")
    print("gen_store: %d sessions, %.1f MB, %d entries in %.1f s -> %s" % (
        manifest["sessions"], manifest["bytes"] / 1e6, manifest["entries"], manifest["seconds"], args.out),
        file=sys.stderr)


if __name__ == "__main__":
    main()
