#!/usr/bin/env python3
"""Differential test, part 2: compare a pisessionfs mount with pi's own view.

    check.py --mount MOUNT --store STORE --expect EXPECTATIONS.json [--verbose]

EXPECTATIONS.json is written by gen.mjs (pi 1.6.0 reading every session file
back). For every session, the mounted session directory is walked as
docs/layout.md describes it and compared with what pi says:

* entry files `NNNN-<kind>.<id>.md` (escaped): every id of the file appears
  exactly once, in the tree directory and with the depth (NNNN) and kind
  that the layout rules give for pi's tree (first child in file order stays in
  the directory, later children start `NNNN~<label or id>` directories, other
  roots and orphans are `0001~...` at the session root); no extra names;
* every tree directory's `context.json` deep-equals pi's
  buildSessionContext() for the directory's tip (the last entry of its
  chain); the session root's equals pi's context for pi's leaf;
* a branch listed by label still resolves as `NNNN~<id>` (not listed);
* `leaf` is a relative symlink to the entry file of pi's leaf;
* `labels/` holds one relative symlink per live label (pi's getLabel()) to the
  labelled entry's file (labels and branch names shown as typed, docs/layout.md
  "Escaping"; when several entries carry the same label, any of them is
  accepted as `<label>`, and the others may be listed as `<label>~<id>`);
* `name` is pi's getSessionName() + "\\n", or empty;
* `header.json` equals the first line; `entries/<id>.json` and `session.jsonl`
  equal the stored bytes; `problems` is present, and empty for files pi
  wrote (not for gen.mjs's hand-written edge sessions, which hold an orphan);
  every regular file reads back exactly st_size bytes.

Besides, the mount root must list exactly the store's project directories,
and each project directory exactly its *.jsonl files (as session
directories); a failure there is reported as "store listing" and makes the
exit status non-zero.

Sessions are checked by --jobs threads at once (the daemon serves requests
concurrently); reports come out in the order of the expectations.

Deep-equal compares parsed JSON values; numbers compare by value as doubles
(as pi's JavaScript sees them), so 1 == 1.0, but true != 1.

Sessions written by pi before version 2 have no ids (gen.mjs marks them
idsFromMount): pi's migration invents random ids, the mount derives its own.
Those are compared by structure: the mounted `entries/<id>.json` files are
matched to lines of the stored file (each holds its exact line), which maps
pi's id of every line to the mount's id; pi's expectations (tree, labels, and
every id inside context messages) are then translated and checked in full,
exactly like any other session.

Every file-system call runs under a watchdog: if one call takes longer than
--op-timeout seconds (a hung daemon), the checker reports the path and exits
non-zero. The caller should additionally run it under `timeout -s KILL`.

The last line is exactly "N passed, M failed" (sessions); the exit status is
non-zero when any session failed.
"""

import argparse
import difflib
import json
import math
import os
import posixpath
import re
import stat as statmod
import sys
import threading
import time
import traceback

# The usage-over-time files every folder of the mount has beside usage.csv.
GENERATED_OVERVIEW = {"usage-daily.csv", "usage-monthly.csv", "usage-daily-models.csv", "usage.svg"}

# docs/layout.md: "every byte outside A-Z a-z 0-9 _ - written as %XX (upper-case hex)".
SAFE_DOC = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
SAFE = frozenset(SAFE_DOC)


def esc(s):
    """docs/layout.md escaping: every byte outside the safe set as %XX."""
    b = s.encode("utf-8", "surrogatepass")
    return "".join(chr(c) if c in SAFE else "%%%02X" % c for c in b)


def typed(s):
    """docs/layout.md escaping of labels and branch names, shown as typed:
    only '/', control characters, the dots of "." and "..", a '%' before two
    upper-case hex digits (and a '~' that would read as a cut name's mark)
    are written %XX.  The generator's labels are short: no name is cut."""
    b = s.encode("utf-8", "surrogatepass")
    dots = b in (b".", b"..")
    out = bytearray()
    for i, c in enumerate(b):
        pct = c == 0x25 and re.fullmatch(rb"[0-9A-F]{2}", b[i + 1:i + 3]) is not None
        if c == 0x2F or c < 0x20 or c == 0x7F or dots or pct:
            out += b"%%%02X" % c
        else:
            out.append(c)
    name = out.decode("utf-8", "surrogatepass")
    if re.search(r"~h[0-9a-f]{16}$", name):
        name = name[:-18] + "%7E" + name[-17:]
    return name


def unesc(s):
    out = bytearray()
    i = 0
    raw = s.encode("utf-8", "surrogateescape")
    while i < len(raw):
        if raw[i] == 0x25 and i + 2 < len(raw) and re.match(rb"[0-9A-Fa-f]{2}", raw[i + 1:i + 3]):
            out.append(int(raw[i + 1:i + 3], 16))
            i += 3
        else:
            out.append(raw[i])
            i += 1
    return out.decode("utf-8", "surrogateescape")


def depth_str(d):
    return "%04d" % d


# ---------------------------------------------------------------- watchdog

class Watchdog:
    """Exits the process when one file-system call (in any thread) hangs."""

    def __init__(self, limit):
        self.limit = limit
        self.ops = {}  # thread id -> (description, start)
        self.lock = threading.Lock()
        self.on_fire = None
        if limit > 0:
            t = threading.Thread(target=self._run, daemon=True)
            t.start()

    def _run(self):
        while True:
            time.sleep(0.5)
            now = time.monotonic()
            with self.lock:
                stuck = [op for op, since in self.ops.values() if now - since > self.limit]
            if stuck:
                sys.stdout.write("\nTIMEOUT: %s did not return within %gs: the daemon hangs\n" % (stuck[0], self.limit))
                if self.on_fire:
                    try:
                        self.on_fire()
                    except Exception:  # noqa: BLE001 - last words only
                        pass
                sys.stdout.flush()
                os._exit(3)

    def call(self, what, path, fn, *a):
        me = threading.get_ident()
        with self.lock:
            self.ops[me] = ("%s(%r)" % (what, path), time.monotonic())
        try:
            return fn(*a)
        finally:
            with self.lock:
                self.ops.pop(me, None)


WD = None


def fs_listdir(p):
    return WD.call("listdir", p, os.listdir, p)


def fs_lstat(p):
    return WD.call("lstat", p, os.lstat, p)


def fs_readlink(p):
    return WD.call("readlink", p, os.readlink, p)


def fs_isfile(p):
    return WD.call("stat", p, os.path.isfile, p)


def fs_isdir(p):
    return WD.call("stat", p, os.path.isdir, p)


def _read(p):
    st = os.stat(p)
    with open(p, "rb") as f:
        data = f.read()
    return st.st_size, data


def fs_read(p):
    return WD.call("read", p, _read, p)


# ---------------------------------------------------------------- JSON comparison

def _num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _asfloat(x):
    try:
        return float(x)
    except OverflowError:
        return math.copysign(math.inf, x)


def jdiff(exp, act, path="$"):
    """First difference between two parsed JSON values, or None."""
    if isinstance(exp, bool) or isinstance(act, bool):
        if type(exp) is not type(act) or exp != act:
            return path, exp, act
        return None
    if _num(exp) or _num(act):
        if not (_num(exp) and _num(act)):
            return path, exp, act
        a, b = _asfloat(exp), _asfloat(act)
        if a != b and not (math.isnan(a) and math.isnan(b)):
            return path, exp, act
        return None
    if exp is None or act is None or isinstance(exp, str) or isinstance(act, str):
        if type(exp) is not type(act) or exp != act:
            return path, exp, act
        return None
    if isinstance(exp, list):
        if not isinstance(act, list):
            return path, exp, act
        for i, (x, y) in enumerate(zip(exp, act)):
            d = jdiff(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        if len(exp) != len(act):
            return "%s (length)" % path, len(exp), len(act)
        return None
    if isinstance(exp, dict):
        if not isinstance(act, dict):
            return path, exp, act
        missing = [k for k in exp if k not in act]
        extra = [k for k in act if k not in exp]
        if missing:
            return "%s.%s" % (path, missing[0]), exp[missing[0]], "<missing key>"
        if extra:
            return "%s.%s" % (path, extra[0]), "<no such key in pi>", act[extra[0]]
        for k in exp:
            d = jdiff(exp[k], act[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    return path, exp, act


def short(v, n=300):
    s = v if isinstance(v, str) and v.startswith("<") and v.endswith(">") else json.dumps(v, ensure_ascii=False)
    return s if len(s) <= n else s[:n] + "...(%d chars)" % len(s)


def notable(v):
    """Things in a value that a C JSON library may treat differently."""
    found = set()

    def walk(x):
        if isinstance(x, str):
            if re.search("[\ud800-\udfff]", x):
                found.add("a lone surrogate")
            if "\x00" in x:
                found.add("a NUL character")
        elif isinstance(x, list):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)
    walk(v)
    return " (it holds %s)" % " and ".join(sorted(found)) if found else ""


def msg_summary(m):
    if not isinstance(m, dict):
        return short(m, 160) + notable(m)
    return "%s %s%s" % (m.get("role"), short(m, 160), notable(m))


def _canon(x):
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, (int, float)):
        return _asfloat(x)
    if isinstance(x, list):
        return [_canon(y) for y in x]
    if isinstance(x, dict):
        return {k: _canon(v) for k, v in x.items()}
    return x


def explain_messages(exp, act):
    """When message lists differ: which of pi's messages are missing, which
    are extra, which changed (an alignment of the two lists)."""
    em, am = exp.get("messages"), act.get("messages") if isinstance(act, dict) else None
    if not isinstance(em, list) or not isinstance(am, list):
        return "", False
    key = lambda m: json.dumps(_canon(m), sort_keys=True)  # noqa: E731
    sm = difflib.SequenceMatcher(None, [key(m) for m in em], [key(m) for m in am], autojunk=False)
    ops = [op for op in sm.get_opcodes() if op[0] != "equal"]
    if not ops:
        return "", False
    out = ["      pi has %d messages, the mount %d" % (len(em), len(am))]
    shifted = all(op[0] in ("delete", "insert") for op in ops)
    for tag, i1, i2, j1, j2 in ops[:4]:
        if tag == "delete":
            for i in range(i1, min(i2, i1 + 3)):
                out.append("      the mount LACKS pi's message %d: %s" % (i, msg_summary(em[i])))
        elif tag == "insert":
            for j in range(j1, min(j2, j1 + 3)):
                out.append("      the mount has an EXTRA message at %d: %s" % (j, msg_summary(am[j])))
        else:
            out.append("      pi's messages %d..%d differ from the mount's %d..%d; the first:" % (i1, i2 - 1, j1, j2 - 1))
            out.append("      pi:    %s" % msg_summary(em[i1]))
            out.append("      mount: %s" % msg_summary(am[j1]))
    if len(ops) > 4:
        out.append("      ... and %d more differences" % (len(ops) - 4))
    return "\n" + "\n".join(out), shifted


def bytes_diff(exp, act):
    k = next((i for i, (a, b) in enumerate(zip(exp, act)) if a != b), min(len(exp), len(act)))
    lo = max(0, k - 60)
    return ("    first difference at byte %d (stored %d bytes, mount %d bytes)\n"
            "      stored: %r\n      mount:  %r" % (k, len(exp), len(act), exp[lo:k + 60], act[lo:k + 60]))


def describe_diff(d, expected_doc=None):
    path, e, a = d
    lines = ["    at %s" % path, "      pi:    %s" % short(e), "      mount: %s" % short(a)]
    m = re.match(r"\$\.messages\[(\d+)\]", path)
    if m and expected_doc is not None:
        i = int(m.group(1))
        msgs = expected_doc.get("messages", [])
        if i < len(msgs):
            role = msgs[i].get("role") if isinstance(msgs[i], dict) else None
            lines.append("      (pi's message %d of %d has role %r)" % (i, len(msgs), role))
    return "\n".join(lines)


# ---------------------------------------------------------------- expected layout

class Dir:
    __slots__ = ("rel", "files", "dirs", "alias", "tip", "start")

    def __init__(self, rel, start):
        self.rel = rel          # path relative to the session directory ("" = itself)
        self.files = {}         # entry file name -> entry index
        self.dirs = {}          # listed branch dir name -> Dir
        self.alias = {}         # listed label name -> unlisted NNNN~<id> name
        self.tip = None
        self.start = start


def entry_name(e):
    return "%s-%s.%s.md" % (depth_str(e["depth"]), esc(e["kind"]), esc(e["id"]))


def build_layout(sess):
    """Expected tree directories of a session, from pi's entries and labels."""
    ents = sess["entries"]
    labels = sess["labels"]
    pos = {}
    parent = []
    for i, e in enumerate(ents):
        p = e["parentId"]
        parent.append(pos[p] if p is not None and p in pos else None)
        pos[e["id"]] = i
    children = [[] for _ in ents]
    roots = []
    for i, p in enumerate(parent):
        (roots if p is None else children[p]).append(i)
    where = {}  # entry index -> path of its file relative to the session dir
    dirs = []

    def add_branch(d, c):
        e = ents[c]
        prefix = depth_str(e["depth"]) + "~"
        by_id = prefix + esc(e["id"])
        name = by_id
        lab = labels.get(e["id"])
        if lab:
            cand = prefix + typed(lab)
            if cand not in d.dirs:
                name = cand
        if name in d.dirs:
            raise RuntimeError("generator produced an ambiguous layout: %s/%s" % (d.rel, name))
        sub = Dir(posixpath.join(d.rel, name), c)
        d.dirs[name] = sub
        if name != by_id:
            d.alias[name] = by_id
        return sub

    stack = []
    if roots:
        top = Dir("", roots[0])
        stack.append(top)
        for r in roots[1:]:
            stack.append(add_branch(top, r))
    else:
        top = Dir("", None)
        top.tip = None
    # Chains are walked iteratively: sessions can be 10000+ deep.
    while stack:
        d = stack.pop()
        dirs.append(d)
        i = d.start
        while True:
            name = entry_name(ents[i])
            d.files[name] = i
            where[i] = posixpath.join(d.rel, name)
            for c in children[i][1:]:
                stack.append(add_branch(d, c))
            if not children[i]:
                break
            i = children[i][0]
        d.tip = i
    if not roots:
        dirs.append(top)
    dirs.sort(key=lambda x: x.rel)
    return top, dirs, where, roots


# ---------------------------------------------------------------- one session

ROOT_EXTRA = {"context.json", "leaf", "labels", "name", "loadout.json", "header.json", "session.jsonl", "problems",
              "transcript.md", "tree.txt", "usage.json"}
SUB_EXTRA = {"context.json"}
# Names that answer by name but are not listed (docs/layout.md "What a
# recursive walk sees"), with whether each is a directory.
ROOT_HIDDEN = {"entries": True}
SUB_HIDDEN = {"transcript.md": False}
ENTRY_RE = re.compile(r"^\d{4,}-.*\.md$")
BRANCH_RE = re.compile(r"^\d{4,}~")


class Failed(Exception):
    pass


class Stats:
    def __init__(self):
        self.sessions = 0
        self.entries = 0
        self.contexts = 0
        self.files = 0
        self.bytes = 0


class SessionCheck:
    MAX_FAILURES = 8

    def __init__(self, sess, mount, store, stats, verbose):
        self.s = sess
        self.sdir = os.path.join(mount, sess["project"], sess["session"])
        self.store_file = os.path.join(store, sess["file"])
        self.stats = stats
        self.verbose = verbose
        self.failures = []

    def fail(self, msg):
        self.failures.append(msg)
        if len(self.failures) >= self.MAX_FAILURES:
            raise Failed()

    def p(self, rel):
        return os.path.join(self.sdir, rel) if rel else self.sdir

    def read(self, rel):
        size, data = fs_read(self.p(rel))
        self.stats.files += 1
        self.stats.bytes += len(data)
        if size != len(data):
            self.fail("%s: st_size is %d but %d bytes were read" % (rel, size, len(data)))
        return data

    def read_json(self, rel, pretty=False):
        data = self.read(rel)
        if pretty:
            # "Pretty-printed with two-space indentation and a final newline."
            if not data.endswith(b"\n"):
                self.fail("%s: no final newline" % rel)
            lines = data.split(b"\n", 2)
            if len(lines) > 2 and not re.match(rb'^  "', lines[1]):
                self.fail("%s: not pretty-printed with two-space indentation: %r" % (rel, data[:80]))
        try:
            return json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            self.fail("%s: not valid JSON (%s); starts with %r" % (rel, e, data[:200]))
            return None

    # -- the store file and the id translation of version-1 sessions
    def load_store(self):
        with open(self.store_file, "rb") as f:
            self.raw = f.read()
        lines = self.raw.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        self.lines = lines
        if len(lines) != len(self.s["entries"]) + 1:
            raise RuntimeError("%s: %d lines, %d entries in expectations" % (self.store_file, len(lines), len(self.s["entries"])))

    def map_ids_from_mount(self):
        """Translate pi's (random) ids into the mount's ids, line by line."""
        by_line = {}
        for i, l in enumerate(self.lines[1:]):
            by_line.setdefault(l + b"\n", []).append(i)
        names = fs_listdir(self.p("entries"))
        idmap = {}
        for n in sorted(names):
            if not n.endswith(".json") or "~" in n:
                continue
            mid = unesc(n[:-5])
            data = self.read("entries/" + n)
            idx = by_line.get(data)
            if not idx:
                self.fail("entries/%s: content is not a line of the stored file: %r" % (n, data[:200]))
                continue
            if len(idx) > 1:
                self.fail("entries/%s: the line is not unique in the file, cannot map ids by line" % n)
                continue
            pid = self.s["entries"][idx[0]]["id"]
            if pid in idmap:
                self.fail("entries/%s and entries/%s hold the same line %d" % (n, esc(idmap[pid]) + ".json", idx[0] + 2))
            idmap[pid] = mid
        missing = [i + 2 for i, e in enumerate(self.s["entries"]) if e["id"] not in idmap]
        if missing:
            self.fail("no entries/<id>.json holds line(s) %s%s of the stored file" % (", ".join(map(str, missing[:10])), "..." if len(missing) > 10 else ""))
            raise Failed()
        tr = lambda x: idmap.get(x, x) if isinstance(x, str) else x  # noqa: E731
        s = dict(self.s)
        s["entries"] = [dict(e, id=tr(e["id"]), parentId=tr(e["parentId"])) for e in self.s["entries"]]
        s["leaf"] = tr(self.s["leaf"])
        s["labels"] = {tr(k): v for k, v in self.s["labels"].items()}
        s["roots"] = [tr(x) for x in self.s["roots"]]

        def deep(v):
            if isinstance(v, str):
                return idmap.get(v, v)
            if isinstance(v, list):
                return [deep(x) for x in v]
            if isinstance(v, dict):
                return {k: deep(x) for k, x in v.items()}
            return v
        s["messages"] = [deep(m) for m in self.s["messages"]]
        self.s = s

    def context_of(self, idx):
        c = self.s["contexts"][self.s["entries"][idx]["ctx"]]
        msgs = self.s["messages"]
        ctx = {"messages": [msgs[i] for i in c["m"]]}
        # JSON.stringify drops undefined: pi's context has no thinkingLevel when a
        # thinking_level_change has none, and model may be {} or lack modelId.
        for k in ("thinkingLevel", "model"):
            if k in c:
                ctx[k] = c[k]
        return ctx

    def compare_context(self, rel, idx, what):
        act = self.read_json(rel, pretty=True)
        if act is None:
            return
        exp = self.context_of(idx)
        self.stats.contexts += 1
        d = jdiff(exp, act)
        if d:
            e = self.s["entries"][idx]
            why, shifted = explain_messages(exp, act)
            self.fail("%s differs from pi's buildSessionContext() for %s %s (%s, depth %d):\n%s"
                      % (rel, what, e["id"], e["kind"], e["depth"], why.lstrip("\n") if shifted else describe_diff(d, exp) + why))

    def run(self):
        s = self.s
        if not fs_isdir(self.sdir):
            self.fail("session directory %s is missing" % self.sdir)
            raise Failed()
        self.load_store()
        if s.get("idsFromMount"):
            self.map_ids_from_mount()
            s = self.s
        ents = s["entries"]
        top, dirs, where, roots = build_layout(s)
        pos = {e["id"]: i for i, e in enumerate(ents)}

        # Sanity: the layout's roots are pi's roots.
        if [ents[i]["id"] for i in roots] != s["roots"]:
            raise RuntimeError("layout roots %s differ from pi's getTree() roots %s" % ([ents[i]["id"] for i in roots], s["roots"]))

        # 1. Walk the mounted tree: every entry file, every branch directory.
        known = {}  # escaped-id suffix -> id, to name entry files in messages
        for e in ents:
            known[esc(e["id"])] = e["id"]
        found = {}  # id -> [paths]
        walked = []
        stack = [("", top)]
        while stack:
            rel, d = stack.pop()
            walked.append(rel)
            try:
                names = fs_listdir(self.p(rel))
            except OSError as ex:
                self.fail("%s/: cannot list: %s" % (rel or ".", ex))
                continue
            allowed = ROOT_EXTRA if rel == "" else SUB_EXTRA
            for n in sorted(names):
                if ENTRY_RE.match(n):
                    m = re.match(r"^(\d{4,})-(.*)\.md$", n)
                    ident = None
                    body = m.group(2)
                    for k in range(len(body)):
                        if body[k] == "." and body[k + 1:] in known:
                            ident = known[body[k + 1:]]
                            break
                    if ident is None:
                        self.fail("%s: an entry file whose id is not in the session" % posixpath.join(rel, n))
                        continue
                    found.setdefault(ident, []).append(posixpath.join(rel, n))
                elif BRANCH_RE.match(n):
                    sub = d.dirs.get(n) if d is not None else None
                    if sub is None:
                        # Still walk it, to say where its entries went.
                        self.fail("%s: unexpected branch directory%s" % (posixpath.join(rel, n), self.guess_dir(d, n)))
                        stack.append((posixpath.join(rel, n), None))
                    else:
                        stack.append((sub.rel, sub))
                elif n.endswith(".images") and n[:-len(".images")] + ".md" in names:
                    pass  # an entry's images (checked by the mount tests)
                elif n not in allowed:
                    self.fail("%s: unexpected name" % posixpath.join(rel, n))
            if d is not None:
                for n in sorted(set(d.dirs) - set(names)):
                    self.fail("%s: branch directory missing (first entry %s, %s)" % (
                        posixpath.join(rel, n), ents[d.dirs[n].start]["id"], ents[d.dirs[n].start]["kind"]))
                for n in sorted(allowed - set(names)):
                    self.fail("%s: missing" % posixpath.join(rel, n))
            for n, is_dir in sorted((ROOT_HIDDEN if rel == "" else SUB_HIDDEN).items()):
                if n in names:
                    self.fail("%s: listed, but it should answer by name only" % posixpath.join(rel, n))
                elif not (fs_isdir if is_dir else fs_isfile)(self.p(posixpath.join(rel, n))):
                    self.fail("%s: does not answer by name" % posixpath.join(rel, n))

        for i, e in enumerate(ents):
            got = found.get(e["id"], [])
            if len(got) == 1 and got[0] == where[i]:
                continue
            if not got:
                self.fail("entry %s (%s, line %d): no entry file anywhere; expected %s" % (e["id"], e["kind"], i + 2, where[i]))
            elif len(got) > 1:
                self.fail("entry %s: %d entry files: %s" % (e["id"], len(got), ", ".join(got)))
            else:
                self.fail("entry %s (%s, line %d, depth %d): found at %s, expected %s" % (
                    e["id"], e["kind"], i + 2, e["depth"], got[0], where[i]))
        self.stats.entries += len(ents)

        # 2. Entry files read back (contents are tested elsewhere: readable, non-empty).
        for i in range(len(ents)):
            if where[i] in found.get(ents[i]["id"], []):
                data = self.read(where[i])
                if not data:
                    self.fail("%s: empty entry file" % where[i])

        # 3. context.json of every tree directory, and the hidden id names of labelled branches.
        for d in dirs:
            if d.rel not in walked:
                continue
            if d.rel == "":
                self.compare_context("context.json", pos[s["leaf"]], "the leaf")
            else:
                self.compare_context(posixpath.join(d.rel, "context.json"), d.tip, "the tip")
            for label_name, id_name in sorted(d.alias.items()) if self.alias_check else ():
                alias = posixpath.join(d.rel, id_name)
                if not fs_isdir(self.p(alias)):
                    self.fail("%s: labelled branch %s does not resolve by id" % (alias, posixpath.join(d.rel, label_name)))
                else:
                    a = sorted(fs_listdir(self.p(alias)))
                    b = sorted(fs_listdir(self.p(posixpath.join(d.rel, label_name))))
                    if a != b:
                        self.fail("%s and %s list different names" % (alias, posixpath.join(d.rel, label_name)))

        # 4. leaf
        self.check_link("leaf", where[pos[s["leaf"]]], "pi's leaf %s" % s["leaf"])

        # 5. labels/
        want = {}
        for ident, lab in s["labels"].items():
            if ident in pos:
                want.setdefault(typed(lab), []).append(ident)
        for n in (".", ".."):
            want.pop(n, None)
        try:
            have = fs_listdir(self.p("labels"))
        except OSError as ex:
            self.fail("labels/: cannot list: %s" % ex)
            have = []
        # Several entries may carry the same label; the layout does not say how
        # their links are named. Accepted: one of them as labels/<label>, the
        # others as labels/<label>~<id>.
        for ident, lab in s["labels"].items():
            n = typed(lab)
            if ident in pos and len(want.get(n, ())) > 1:
                alt = "%s~%s" % (n, esc(ident))
                if alt in have:
                    want[alt] = [ident]
        for n in sorted(set(have) - set(want)):
            self.fail("labels/%s: no entry carries this label in pi" % n)
        for n in sorted(set(want) - set(have)):
            self.fail("labels/%s: missing (pi: label of %s)" % (n, ", ".join(want[n])))
        for n in sorted(set(want) & set(have)):
            targets = [where[pos[i]] for i in want[n]]
            self.check_link("labels/" + n, targets, "the entry labelled %r" % n)

        # 6. name, header.json, entries/, session.jsonl, problems
        name = self.read("name")
        exp_name = (s["name"] + "\n").encode("utf-8") if s["name"] else b""
        if name != exp_name:
            self.fail("name: pi's getSessionName() gives %r, the mount shows %r" % (exp_name, name))
        hdr = self.read_json("header.json")
        if hdr is not None:
            d = jdiff(s["header"], hdr)
            if d:
                self.fail("header.json differs from the stored header:\n%s" % describe_diff(d))
        want_e = {esc(e["id"]) + ".json": i for i, e in enumerate(ents)}
        try:
            have_e = set(fs_listdir(self.p("entries")))
        except OSError as ex:
            self.fail("entries/: cannot list: %s" % ex)
            have_e = set()
        for n in sorted(have_e - set(want_e)):
            self.fail("entries/%s: unexpected" % n)
        for n in sorted(set(want_e) - have_e):
            self.fail("entries/%s: missing" % n)
        for n in sorted(set(want_e) & have_e):
            data = self.read("entries/" + n)
            line = self.lines[want_e[n] + 1] + b"\n"
            if data != line:
                self.fail("entries/%s is not the stored line %d:\n%s" % (n, want_e[n] + 2, bytes_diff(line, data)))
        raw = self.read("session.jsonl")
        if raw != self.raw:
            self.fail("session.jsonl is not the stored file:\n%s" % bytes_diff(self.raw, raw))
        prob = self.read("problems")
        if prob and not s.get("handWritten"):
            self.fail("problems is not empty for a file pi wrote: %r" % prob[:300])

    def guess_dir(self, d, n):
        if d is None:
            return ""
        cands = sorted(d.dirs)
        return " (expected here: %s)" % (", ".join(cands[:6]) + (" ..." if len(cands) > 6 else "") if cands else "none")

    def check_link(self, rel, targets, what):
        if isinstance(targets, str):
            targets = [targets]
        try:
            st = fs_lstat(self.p(rel))
        except OSError as ex:
            self.fail("%s: missing (%s)" % (rel, ex))
            return
        if not statmod.S_ISLNK(st.st_mode):
            self.fail("%s: not a symlink" % rel)
            return
        link = fs_readlink(self.p(rel))
        if link.startswith("/"):
            self.fail("%s -> %s: not relative" % (rel, link))
            return
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(rel), link))
        if resolved not in targets:
            self.fail("%s -> %s (= %s): expected %s (%s)" % (rel, link, resolved, " or ".join(targets), what))
            return
        if not fs_isfile(self.p(rel)):
            self.fail("%s -> %s does not resolve through the mount" % (rel, link))


# ---------------------------------------------------------------- main

def check_listing(mount, store, stats):
    """The mount root lists the store's project directories, and each project
    directory its *.jsonl files (as session directories), nothing else."""
    fails = []
    want = {}
    for p in sorted(os.listdir(store)):
        pp = os.path.join(store, p)
        if os.path.isdir(pp) and not os.path.islink(pp):
            want[p] = sorted(f[:-6] for f in os.listdir(pp)
                             if f.endswith(".jsonl") and os.path.isfile(os.path.join(pp, f)) and not os.path.islink(os.path.join(pp, f)))
    # the daemon's own log and rejected writes, the views and the usage table
    have = set(fs_listdir(mount)) - {".pisessionfs", "by-id", "by-name", "by-cwd", "recent", "search", "usage.csv",
                                     "sessions.md"} - GENERATED_OVERVIEW
    for p in sorted(have - set(want)):
        fails.append("%s: listed, but the store has no such directory" % p)
    for p in sorted(set(want) - have):
        fails.append("%s: a project directory of the store is not listed" % p)
    for p in sorted(set(want) & have):
        got = set(fs_listdir(os.path.join(mount, p))) - {"usage.csv", "sessions.md", "search"} - GENERATED_OVERVIEW
        for n in sorted(got - set(want[p])):
            fails.append("%s/%s: listed, but the store has no such session file" % (p, n))
        for n in sorted(set(want[p]) - got):
            fails.append("%s/%s: a session file of the store is not listed" % (p, n))
    return fails


def main():
    global WD
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mount", required=True)
    ap.add_argument("--store", required=True)
    ap.add_argument("--expect", required=True)
    ap.add_argument("--op-timeout", type=float, default=20.0)
    ap.add_argument("--jobs", "-j", type=int, default=4, help="sessions checked in parallel (threads)")
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--max-failures", type=int, default=8, help="failures reported per session")
    ap.add_argument("--only", help="check only sessions whose path contains this")
    ap.add_argument("--changed-only", action="store_true", help="check only sessions marked changed (gen.mjs --append)")
    ap.add_argument("--no-alias-check", action="store_true", help="do not require NNNN~<id> names of labelled branches (self-test)")
    ap.add_argument("--safe-bytes", help="the bytes names keep unescaped (default: docs/layout.md's set %s)" % SAFE_DOC.decode())
    a = ap.parse_args()
    if a.safe_bytes is not None:
        global SAFE
        SAFE = frozenset(a.safe_bytes.encode())

    # Names and values may hold lone surrogates or control characters.
    sys.stdout.reconfigure(errors="backslashreplace")
    SessionCheck.MAX_FAILURES = max(1, a.max_failures)
    WD = Watchdog(a.op_timeout)
    t0 = time.monotonic()
    with open(a.expect, encoding="utf-8") as f:
        doc = json.load(f)
    sessions = doc["sessions"]
    if a.only:
        sessions = [s for s in sessions if a.only in s["file"]]
    if a.changed_only:
        sessions = [s for s in sessions if s.get("changed")]
    results = [None] * len(sessions)
    printed = [0, 0, 0]  # sessions reported, passed, failed

    def last_words():
        rest = len(sessions) - printed[0]
        sys.stdout.write("%d passed, %d failed\n" % (printed[1], printed[2] + rest))

    WD.on_fire = last_words

    def one(i):
        sess = sessions[i]
        st = Stats()
        c = SessionCheck(sess, a.mount, a.store, st, a.verbose)
        c.alias_check = not a.no_alias_check
        try:
            c.run()
        except Failed:
            pass
        except OSError as ex:
            c.failures.append("I/O error: %s" % ex)
        except Exception:  # noqa: BLE001 - a checker bug must not hang the other threads
            c.failures.append("checker error:\n" + traceback.format_exc())
        st.sessions = 1
        return c.failures, st

    def report(i, failures):
        sess = sessions[i]
        tag = "%s/%s" % (sess["project"], sess["session"])
        printed[0] += 1
        if failures:
            printed[2] += 1
            print("FAIL %s (%d entries%s)" % (tag, len(sess["entries"]), ", ids from mount" if sess.get("idsFromMount") else ""))
            for m in failures:
                print("  - " + m)
            if len(failures) >= SessionCheck.MAX_FAILURES:
                print("  - ... (stopped after %d failures)" % SessionCheck.MAX_FAILURES)
        else:
            printed[1] += 1
            if a.verbose:
                print("ok   %s (%d entries)" % (tag, len(sess["entries"])))
        sys.stdout.flush()

    total = Stats()
    listing = check_listing(a.mount, a.store, total)
    # Sessions run in threads (the daemon serves requests concurrently);
    # reports come out in order.
    order = sorted(range(len(sessions)), key=lambda i: -len(sessions[i]["entries"]))
    lock = threading.Condition()
    nxt = [0]

    def worker():
        while True:
            with lock:
                if nxt[0] >= len(order):
                    return
                i = order[nxt[0]]
                nxt[0] += 1
            r = one(i)
            with lock:
                results[i] = r
                lock.notify_all()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, a.jobs))]
    for t in threads:
        t.start()
    for i in range(len(sessions)):
        with lock:
            while results[i] is None:
                lock.wait()
        failures, st = results[i]
        for k in ("sessions", "entries", "contexts", "files", "bytes"):
            setattr(total, k, getattr(total, k) + getattr(st, k))
        report(i, failures)
    if listing:
        print("FAIL store listing (mount root and project directories)")
        for m in listing[:SessionCheck.MAX_FAILURES]:
            print("  - " + m)
    print("checked %d sessions%s, %d entries, %d contexts compared with pi, %d files read (%.1f MB) in %.1fs"
          % (total.sessions, " (changed or new ones)" if a.changed_only else "", total.entries, total.contexts,
             total.files, total.bytes / 1e6, time.monotonic() - t0))
    if listing:
        print("the store listing differs from the store (see above)")
    print("%d passed, %d failed" % (printed[1], printed[2]))
    return 1 if printed[2] or listing else 0


if __name__ == "__main__":
    sys.exit(main())
