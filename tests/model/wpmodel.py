#!/usr/bin/env python3
"""Model-based test of the daemon's write path (docs/layout.md, "When a
write is committed").

    wpmodel.py --daemon D --dir SCRATCH [--seed N] [--count N] [--seconds S]
               [--replay FILE.json ...] [--repeat R] [--batch N] [--no-shrink]

A generator makes random sequences of calls from several processes
(os.fork, descriptors shared as a shell shares them) and threads on one
fresh session each: open (O_CREAT, O_EXCL, O_TRUNC, O_APPEND,
O_RDONLY/O_WRONLY/O_RDWR), dup, fork, exit, write, pwrite, lseek,
ftruncate, fsync, close, read, symlink/unlink in labels/, unlink and
rename of entries, an entry moved aside and written under its new name,
rename of side files, and a crash (kill -9 of the daemon, which is then
started again); on new NAME.md files, entry files, `name` and
`session.jsonl`.  A reference model says what every
call must answer and which entries the session file must hold after it.
The executor runs the sequence against a real mount (each call bounded
in time: a hang prints the daemon's stacks), compares every answer and
the session file (read in the store) with the model, and checks that
refused text is in .pisessionfs/rejected/.  A failure is shrunk (delta
debugging, every candidate on a fresh session) and printed as a
replayable JSON script plus the seed.

Output: "ok - what" / "not ok - why" lines and "# notes", for
tests/stress/common.sh's py_checks (and t_model_seeds.sh).  Exit 0 when
nothing failed.
"""

import argparse
import copy
import errno
import json
import os
import random
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

TIME_SCALE = float(os.environ.get("TIME_SCALE", "1") or 1)
OP_TIMEOUT = float(os.environ.get("MODEL_OP_TIMEOUT", "10")) * TIME_SCALE  # as lib.sh's TIMEOUT
WAIT_APPEND = 3.0 * TIME_SCALE  # for an asynchronous (release) commit to show
SETTLE = 0.002                   # the session file must stay as it is this long (a late
                                 # change is also caught by the check after the unmount)

PROJECT = "--w--"
IDS = {"u1": "aaaa0001", "a1": "aaaa0002", "u2": "aaaa0003"}
TEXTS = {"u1": "first question", "a1": "an answer", "u2": "second question"}
ROLES = {"u1": "user", "a1": "assistant", "u2": "user"}
FILES = {"u1": "0001-user.aaaa0001.md", "a1": "0002-assistant.aaaa0002.md", "u2": "0003-user.aaaa0003.md"}


def fixture(sid):
    lines = [
        {"type": "session", "version": 3, "id": sid, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"},
        {"type": "message", "id": IDS["u1"], "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": TEXTS["u1"], "timestamp": 1767225601000}},
        {"type": "message", "id": IDS["a1"], "parentId": IDS["u1"], "timestamp": "2026-01-01T00:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": TEXTS["a1"]}], "api": "x",
                     "provider": "p", "model": "m",
                     "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                               "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                     "stopReason": "stop", "timestamp": 1767225602000}},
        {"type": "message", "id": IDS["u2"], "parentId": IDS["a1"], "timestamp": "2026-01-01T00:00:03.000Z",
         "message": {"role": "user", "content": TEXTS["u2"], "timestamp": 1767225603000}},
    ]
    return "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines)


FIXTURE_LINES = 4  # header and three entries


def raw_line(k):
    """The k-th raw line a sequence may append to session.jsonl."""
    return ('{"type":"message","id":"%08x","parentId":"%s","timestamp":"2026-01-01T00:00:09.000Z",'
            '"message":{"role":"user","content":"raw %d","timestamp":1767225609000}}\n'
            % (0xbb000000 + k, IDS["u1"], k))


IDS_KEY = {v: k for k, v in IDS.items()}

FLAGS = {"O_RDONLY": os.O_RDONLY, "O_WRONLY": os.O_WRONLY, "O_RDWR": os.O_RDWR, "O_CREAT": os.O_CREAT,
         "O_EXCL": os.O_EXCL, "O_TRUNC": os.O_TRUNC, "O_APPEND": os.O_APPEND}


def target_path(t, d=None):
    if t.startswith("new:"):
        return ("%s/" % d if d else "") + "n%s.md" % t[4:]
    if t.startswith("ent:"):
        return FILES[t[4:]]
    return {"name": "name", "raw": "session.jsonl", "notes": "notes.txt"}[t]


def skipping(what):
    """WPM_SKIP=hidden: leave out the cases of known bugs (see
    README.md), to see what else fails."""
    return what in os.environ.get("WPM_SKIP", "").split(",")


class Unsupported(Exception):
    """A state the docs do not make precise, or an op that refers to
    nothing (a shrunk sequence): such a sequence is not run."""


# --- the model ---------------------------------------------------------------

class Draft:
    def __init__(self, did, kind, target, opener, flags):
        self.did = did
        self.kind = kind          # new, entry, name, raw, ro
        self.target = target
        self.opener = opener      # the process (thread group) that opened it
        self.refs = 0
        self.flags = flags
        self.acc = [f for f in flags if f in ("O_RDONLY", "O_WRONLY", "O_RDWR")][0]
        self.append = "O_APPEND" in flags
        self.text = bytearray()   # new, entry, name: the file's bytes
        self.pending = b""        # raw: bytes not yet appended
        self.pos = 0
        self.dirty = False        # written since the last commit
        self.synced = None        # what its last fsync made durable, until a commit
        self.trunc_only = False   # emptied by O_TRUNC, never written
        self.committed = False
        self.last_text = None     # new: what its last commit appended
        self.last_ref = None      # new: the entry its last commit appended
        self.base_ref = None      # entry: the entry the next commit edits
        self.base_text = None
        self.branch = None        # new: the pending branch directory it is in


class Model:
    """What the spec says.  step(op) returns the expected answer and the
    entries appended before the call returns (sync) and after it, by an
    asynchronous release (async)."""

    def __init__(self):
        self.procs = {0: {}}
        self.drafts = {}
        self.appends = []         # expected entries, in order
        self.rejected = []        # texts that must be in rejected/
        self.name = ""
        self.labels = {}          # live label -> target (key or ref); one per target
        self.side = {}            # side file key -> text
        self.opened_entries = set()  # entries that had a draft in this sequence
        self.tree = [("u1", None), ("a1", "u1"), ("u2", "a1")]  # (ref, parent ref)
        self.branches = {}           # pending branch directory -> {under, label, used}
        self.ro_entries = set()      # entries opened read-only in it
        self.next_did = 0
        self.new_names = set()
        self.crashed = False
        self.recovered = []          # texts the next daemon shows in rejected/ after a crash

    # appends
    def _append(self, out, **e):
        e["ref"] = "A%d" % len(self.appends)
        par = e["parent"]
        if par[0] == "tip":
            pref = self.chain()[-1]
        elif par[0] == "leaf":
            pref = self.tree[-1][0]
        elif par[0] == "sib":
            pref = self.parent_of(par[1])
        elif par[0] == "under":
            pref = par[1]
        else:
            pref = IDS_KEY[json.loads(e["line"])["parentId"]]
        self.tree.append((e["ref"], pref))
        self.appends.append(e)
        out.append(e)
        return e["ref"]

    def parent_of(self, ref):
        return next(p for r, p in self.tree if r == ref)

    def chain(self):
        """The session directory's line: from the first root, each
        entry's first child (docs/layout.md, Tree rules)."""
        first = {}
        for r, p in self.tree:
            if p is not None and p not in first:
                first[p] = r
        cur, out = "u1", ["u1"]
        while cur in first:
            cur = first[cur]
            out.append(cur)
        return out

    def _fd(self, p, fd):
        if p not in self.procs or fd not in self.procs[p]:
            raise Unsupported("no fd %s in P%s" % (fd, p))
        return self.drafts[self.procs[p][fd]]

    # commits ----------------------------------------------------------
    def _commit_new(self, d, out):
        text = bytes(d.text).decode()
        if not text.strip():
            raise Unsupported("a new file committed empty or blank")
        if "\0" in text:
            raise Unsupported("NUL in text")
        s = text[:-1] if text.endswith("\n") else text
        if not d.committed and d.branch:
            # the first file of a pending branch: under its entry, then its label
            b = self.branches[d.branch]
            d.last_ref = self._append(out, type="message", role="user", text=s, parent=("under", b["under"]))
            self._append(out, type="label", target=d.last_ref, label=b["label"], parent=("leaf",))
            self.labels[b["label"]] = d.last_ref
            b["pending"] = False
        elif not d.committed:
            d.last_ref = self._append(out, type="message", role="user", text=s, parent=("tip",))
        elif s != d.last_text:
            d.last_ref = self._append(out, type="message", role="user", text=s, parent=("sib", d.last_ref))
        d.committed = True
        d.last_text = s
        d.dirty = False
        d.synced = None
        return 0

    def _commit_entry(self, d, out):
        text = bytes(d.text).decode()
        if not text.strip():
            raise Unsupported("an entry emptied after writes")
        s = text[:-1] if text.endswith("\n") else text
        key = d.target[4:]
        if s != d.base_text:
            d.base_ref = self._append(out, type="message", role=ROLES[key], text=s, parent=("sib", d.base_ref))
            d.base_text = s
        d.dirty = False
        d.synced = None
        d.trunc_only = False
        d.committed = True
        return 0

    def _commit_name(self, d, out):
        # pi: name.replace(/[\r\n]+/g, " ").trim()
        nm = re.sub(r"[\r\n]+", " ", bytes(d.text).decode()).strip()
        if nm != self.name:
            self._append(out, type="session_info", name=nm, parent=("leaf",))
            self.name = nm
        d.dirty = False
        d.synced = None
        d.trunc_only = False
        d.committed = True
        return 0

    def _commit_raw(self, d, out):
        pend = d.pending
        if not pend:
            d.dirty = False
            d.synced = None
            return 0
        body = pend if pend.endswith(b"\n") else pend + b"\n"
        lines = [x + "\n" for x in body.decode().split("\n")[:-1]]
        seen = {a["id"] for a in self.appends if a["type"] == "raw"}
        ok = True
        for ln in lines:
            try:
                obj = json.loads(ln)
            except ValueError:
                ok = False
                break
            if not ln.startswith('{"type":"message","id":"bb') or obj["id"] in seen:
                ok = False
                break
            seen.add(obj["id"])
        d.pending = b""
        d.dirty = False
        d.synced = None
        if not ok:
            self.rejected.append(pend.decode())
            return "EINVAL"
        for ln in lines:
            self._append(out, type="raw", line=ln, id=json.loads(ln)["id"], parent=("given",))
        return 0

    def _commit(self, d, out, why):
        """why: close (the opener's), release.  fsync() is no commit point:
        it makes the text durable beside the session and appends nothing
        (docs/layout.md "fsync"), so it answers 0 and the model is
        unchanged."""
        if d.kind == "ro":
            return 0
        if d.kind == "new":
            if d.dirty:
                return self._commit_new(d, out)
            return 0
        if d.kind == "entry":
            if d.dirty:
                return self._commit_entry(d, out)
            if d.trunc_only:
                if why == "close":
                    return "EINVAL"   # an emptied entry fails the close
                if why == "release":
                    d.trunc_only = False  # refused: the log says it
                return 0
            return 0
        if d.kind == "name":
            if d.dirty or (d.trunc_only and why != "close"):
                return self._commit_name(d, out)
            return 0
        if d.kind == "raw":
            if d.dirty:
                return self._commit_raw(d, out)
            return 0
        raise AssertionError(d.kind)

    def _close(self, p, fd, sync, asyn):
        d = self._fd(p, fd)
        del self.procs[p][fd]
        d.refs -= 1
        res = 0
        if p == d.opener:
            res = self._commit(d, sync, "close")
        if d.refs == 0:
            self._commit(d, asyn, "release")
            del self.drafts[d.did]
        return res

    def _write(self, d, data, off=None):
        if d.acc == "O_RDONLY":
            return "EBADF"
        b = data.encode()
        if d.kind == "raw":
            if not d.append:
                return "EPERM"
            d.pending += b
            d.dirty = True
            return len(b)
        if d.append:
            at = len(d.text)
        else:
            at = d.pos if off is None else off
        if at > len(d.text):
            raise Unsupported("a write past the end (a hole)")
        d.text[at:at + len(b)] = b
        if off is None or d.append:
            d.pos = at + len(b)
        d.dirty = True
        d.trunc_only = False
        return len(b)

    def _sync(self, d):
        """fsync: a draft written since its last commit is recorded whole
        (raw: the lines not yet appended); an entry's blank rewrite is
        not (the close refuses it), and keeps any earlier record."""
        if d.kind == "ro" or not d.dirty:
            return
        if d.kind == "raw":
            d.synced = d.pending.decode()
        elif d.kind == "entry" and not bytes(d.text).strip():
            return
        else:
            d.synced = bytes(d.text).decode()

    def live_kinds(self, kind):
        return [d for d in self.drafts.values() if d.kind == kind]

    # one op -------------------------------------------------------------
    def step(self, op):
        sync, asyn = [], []
        p = op["p"]
        if self.crashed:
            raise Unsupported("a call after the crash")
        if p not in self.procs:
            raise Unsupported("no process P%s" % p)
        k = op["op"]
        res = 0
        if k == "open":
            t, flags = op["target"], op["flags"]
            if op["fd"] in self.procs[p]:
                raise Unsupported("fd name in use")
            acc = [f for f in flags if f in ("O_RDONLY", "O_WRONLY", "O_RDWR")][0]
            if t == "notes":
                return "EPERM", sync, asyn
            if t.startswith("new:"):
                if t in self.new_names:
                    raise Unsupported("a new name opened twice")
                if acc == "O_RDONLY" or "O_CREAT" not in flags:
                    raise Unsupported("a new name not created")
                if op.get("dir"):
                    b = self.branches.get(op["dir"])
                    if not b or not b["pending"] or b["used"]:
                        raise Unsupported("a file in a branch directory that is not pending and empty")
                    b["used"] = True
                self.new_names.add(t)
                kind = "new"
            else:
                if "O_CREAT" in flags and "O_EXCL" in flags:
                    return "EEXIST", sync, asyn
                if t.startswith("ent:") and acc == "O_RDONLY":
                    self.ro_entries.add(t)
                if acc == "O_RDONLY":
                    kind = "ro"
                elif t.startswith("ent:"):
                    if "O_TRUNC" not in flags or "O_APPEND" in flags:
                        raise Unsupported("entry opened without O_TRUNC or with O_APPEND")
                    kind = "entry"
                    self.opened_entries.add(t)
                elif t == "name":
                    if "O_APPEND" in flags:
                        raise Unsupported("name with O_APPEND")
                    if self.live_kinds("name"):
                        raise Unsupported("two drafts of name")
                    kind = "name"
                elif t == "raw":
                    if "O_TRUNC" in flags:
                        return "EPERM", sync, asyn
                    kind = "raw"
                else:
                    raise Unsupported(t)
            d = Draft(self.next_did, kind, t, p, flags)
            self.next_did += 1
            d.branch = op.get("dir")
            if kind == "entry":
                d.trunc_only = True
                key = t[4:]
                d.base_ref = key
                d.base_text = TEXTS[key]
            elif kind == "name":
                if "O_TRUNC" in flags:
                    d.trunc_only = True
                else:
                    d.text = bytearray((self.name + "\n").encode() if self.name else b"")
            d.refs = 1
            self.drafts[d.did] = d
            self.procs[p][op["fd"]] = d.did
            return 0, sync, asyn
        if k == "dup":
            d = self._fd(p, op["fd"])
            if op["new"] in self.procs[p]:
                raise Unsupported("fd name in use")
            self.procs[p][op["new"]] = d.did
            d.refs += 1
            return 0, sync, asyn
        if k == "fork":
            c = op["child"]
            if c in self.procs:
                raise Unsupported("process id in use")
            self.procs[c] = dict(self.procs[p])
            for did in self.procs[c].values():
                self.drafts[did].refs += 1
            return 0, sync, asyn
        if k == "exit":
            # explicit (the executor closes each descriptor first, one
            # call each, so that the procs table is empty here) or
            # implicit (_exit with descriptors open: the kernel closes
            # them, in an order the model does not know, so at most one
            # of those closes may append)
            if p == 0 and not op.get("final"):
                raise Unsupported("P0 exits only at the end")
            res = []
            for fd in sorted(self.procs[p], key=fd_order):
                res.append(self._close(p, fd, sync, asyn))
            if op.get("implicit"):
                if len(sync) + len(asyn) > 1:
                    raise Unsupported("an implicit exit that appends more than once")
                asyn.extend(sync)
                del sync[:]
            del self.procs[p]
            return 0, sync, asyn
        if k == "close":
            return self._close(p, op["fd"], sync, asyn), sync, asyn
        if k == "write":
            d = self._fd(p, op["fd"])
            return self._write(d, op["data"]), sync, asyn
        if k == "pwrite":
            d = self._fd(p, op["fd"])
            return self._write(d, op["data"], op["off"]), sync, asyn
        if k == "lseek":
            d = self._fd(p, op["fd"])
            if d.kind not in ("new", "entry", "name") or op["off"] > len(d.text):
                raise Unsupported("lseek")
            d.pos = op["off"]
            return op["off"], sync, asyn
        if k == "ftruncate":
            d = self._fd(p, op["fd"])
            if d.kind not in ("new", "entry", "name") or not d.dirty or not 1 <= op["len"] <= len(d.text):
                raise Unsupported("ftruncate")
            if d.acc == "O_RDONLY":
                raise Unsupported("ftruncate read-only")
            del d.text[op["len"]:]
            return 0, sync, asyn
        if k == "fsync":
            self._sync(self._fd(p, op["fd"]))
            return 0, sync, asyn
        if k == "crash":
            # kill -9 of the daemon: nothing more is appended; each live
            # draft's record holds what its last fsync made durable, and
            # the next daemon shows it in rejected/ (docs/layout.md
            # "fsync"); what no fsync reached is gone with the daemon.
            self.crashed = True
            self.recovered = [d.synced for d in self.drafts.values() if d.synced is not None]
            return None, sync, asyn
        if k == "read":
            d = self._fd(p, op["fd"])
            if d.acc == "O_WRONLY":
                return "EBADF", sync, asyn
            if d.kind == "raw":
                raise Unsupported("reading a raw draft")
            return None, sync, asyn
        if k == "race":
            d = self._fd(p, op["fd"])
            if d.acc != "O_RDWR" or d.kind not in ("new", "entry", "name"):
                raise Unsupported("race needs a read-write draft")
            res = []
            for c in op["chunks"]:
                w = self._write(d, c)
                self._sync(d)
                res.append([w, 0])  # fsync: durable, nothing appended
            return res, sync, asyn
        if k == "label":
            name = op["name"]
            if name in self.labels:
                return "EEXIST", sync, asyn
            # an entry has one label (the latest label entry for a target
            # wins): a second one would remove the first, so it is refused
            if op["on"] in self.labels.values():
                return "EMLINK", sync, asyn
            self.labels[name] = op["on"]
            self._append(sync, type="label", target=op["on"], label=name, parent=("leaf",))
            return 0, sync, asyn
        if k == "unlabel":
            name = op["name"]
            if name not in self.labels:
                return "ENOENT", sync, asyn
            on = self.labels.pop(name)
            self._append(sync, type="label", target=on, label=None, parent=("leaf",))
            return 0, sync, asyn
        if k == "unlink_entry":
            if "ent:" + op["key"] in self.opened_entries or "ent:" + op["key"] in self.ro_entries:
                raise Unsupported("unlink of an entry that was open")
            return "EPERM", sync, asyn
        if k == "aside_edit":
            # mv ENTRY m.md; echo TEXT > m.md: an edit of the entry (a
            # sibling with its role), after which the entry shows again
            # under its own name (the executor stats it).
            key = op["key"]
            if "ent:" + key in self.opened_entries or "ent:" + key in self.ro_entries:
                raise Unsupported("an entry moved aside that had a draft or was open")
            if ("aside:" + op["to"]) in self.new_names:
                raise Unsupported("a name moved aside to twice")
            self.new_names.add("aside:" + op["to"])
            s = op["data"][:-1] if op["data"].endswith("\n") else op["data"]
            if not s.strip() or "\0" in s:
                raise Unsupported("an entry moved aside and emptied")
            if s != TEXTS[key]:
                self._append(sync, type="message", role=ROLES[key], text=s, parent=("sib", key))
            return 0, sync, asyn
        if k == "rename_entry":
            # With the target open (read-only), libfuse first hides it as
            # .fuse_hidden...; the rename is still refused, and the entry
            # must stay as it was (writable by its name).
            if "ent:" + op["key"] in self.opened_entries or "ent:" + op["to"] in self.opened_entries:
                raise Unsupported("rename of an entry that had a draft")
            if "ent:" + op["key"] in self.ro_entries:
                raise Unsupported("rename of an entry that was open")
            if "ent:" + op["to"] in self.ro_entries and skipping("hidden"):
                raise Unsupported("(WPM_SKIP) rename onto an entry open read-only")
            return "EPERM", sync, asyn
        if k == "mkbranch":
            dname = "%04d~%s" % (op["depth"], op["label"])
            if dname in self.branches or op["label"] in self.labels:
                raise Unsupported("a branch name used twice")
            ch = self.chain()
            if not 1 <= op["depth"] <= len(ch):
                return "ERANGE", sync, asyn
            self.branches[dname] = {"under": ch[op["depth"] - 2] if op["depth"] >= 2 else None,
                                    "label": op["label"], "pending": True, "used": False}
            return 0, sync, asyn
        if k == "rmbranch":
            b = self.branches.get(op["dir"])
            if not b or not b["pending"] or b["used"]:
                raise Unsupported("rmdir of a branch that is not pending and empty")
            del self.branches[op["dir"]]
            return 0, sync, asyn
        if k == "side":
            if op["key"] in self.side:
                raise Unsupported("side file made twice")
            self.side[op["key"]] = op["data"]
            return 0, sync, asyn
        if k == "rename_side":
            key = op["key"]
            if key not in self.side or ("new:" + op["to"]) in self.new_names:
                raise Unsupported("rename of a side file that is not there")
            text = self.side.pop(key)
            self.new_names.add("new:" + op["to"])
            s = text[:-1] if text.endswith("\n") else text
            self._append(sync, type="message", role="user", text=s, parent=("tip",))
            return 0, sync, asyn
        raise Unsupported("unknown op %s" % k)

    def finish_ops(self):
        """The implicit end of every sequence: every child exits (last
        made first), then P0 closes what it holds and exits."""
        ops = []
        if self.crashed:
            return ops  # the crash killed every process of the sequence
        for p in sorted(self.procs, reverse=True):
            if p != 0:
                ops.append({"p": p, "op": "exit"})
        if 0 in self.procs:
            ops.append({"p": 0, "op": "exit", "final": True})
        return ops


def fd_order(name):
    return int(name[1:])


def simulate(ops):
    """Runs the model alone (the implicit end included); raises
    Unsupported for a sequence it does not judge.  Returns the model."""
    m = Model()
    for op in ops:
        m.step(op)
    tail = m.finish_ops()
    for op in tail:
        m.step(op)
    return m


# --- the generator -------------------------------------------------------------

class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.m = Model()
        self.ops = []
        self.nfd = 0
        self.nproc = 0
        self.nnew = 0
        self.nraw = 0
        self.nchunk = 0
        self.nside = 0
        self.carry = {}  # raw draft -> second half of a line
        self.nbranch = 0
        self.sides = []

    def chunk(self, kind):
        self.nchunk += 1
        r = self.r
        if kind == "name":
            return "nm%d%s" % (self.nchunk, r.choice(["", "\n", " "]))
        return "%s%d%s" % (r.choice("abcxyz"), self.nchunk, r.choice(["\n", "\n", "", " "]))

    def raw_chunk(self, d):
        r = self.r
        if d.did in self.carry and r.random() < 0.75:
            return self.carry.pop(d.did)
        line = raw_line(self.nraw)
        self.nraw += 1
        if r.random() < 0.35:
            cut = r.randrange(5, len(line) - 5)
            self.carry[d.did] = line[cut:]
            return line[:cut]
        return line

    def try_op(self, op):
        trial = copy.deepcopy(self.m)
        try:
            trial.step(op)
        except Unsupported:
            return False
        self.m = trial
        self.ops.append(op)
        return True

    def fds(self):
        return [(p, fd, self.m.drafts[did]) for p, t in self.m.procs.items() for fd, did in t.items()]

    def new_fd(self):
        self.nfd += 1
        return "f%d" % self.nfd

    def pick_open(self, p):
        r = self.r
        x = r.random()
        if x < 0.30:
            self.nnew += 1
            t = "new:%d" % self.nnew
            acc = r.choice(["O_WRONLY", "O_WRONLY", "O_RDWR"])
            flags = [acc, "O_CREAT"] + [f for f in ("O_TRUNC", "O_EXCL", "O_APPEND") if r.random() < 0.35]
        elif x < 0.55:
            t = "ent:" + r.choice(["u2", "a1"])
            flags = [r.choice(["O_WRONLY", "O_RDWR"]), "O_TRUNC"] + (["O_CREAT"] if r.random() < 0.3 else [])
        elif x < 0.70:
            t = "name"
            flags = [r.choice(["O_WRONLY", "O_RDWR"])] + (["O_TRUNC"] if r.random() < 0.6 else []) + \
                (["O_CREAT"] if r.random() < 0.3 else [])
        elif x < 0.88:
            t = "raw"
            flags = [r.choice(["O_WRONLY", "O_RDWR"])]
            y = r.random()
            flags += ["O_APPEND"] if y < 0.85 else (["O_TRUNC"] if y < 0.92 else [])
        elif x < 0.95:
            t = r.choice(["ent:u2", "ent:a1", "name", "raw"])
            flags = ["O_RDONLY"]
        elif x < 0.98:
            t = r.choice(["ent:u2", "name", "raw"])
            flags = [r.choice(["O_WRONLY", "O_RDWR"]), "O_CREAT", "O_EXCL"]
        else:
            t = "notes"
            flags = ["O_WRONLY", "O_CREAT", "O_TRUNC"]
        op = {"p": p, "op": "open", "fd": self.new_fd(), "target": t, "flags": flags}
        if not self.try_op(op):
            return
        # A new file is written by its opener before anything else may
        # commit it (an empty new file is not made precise by the docs).
        if t.startswith("new:") and op["fd"] in self.m.procs[p]:
            self.try_op({"p": p, "op": "write", "fd": op["fd"], "data": self.chunk("new")})

    def step(self):
        r = self.r
        fds = self.fds()
        x = r.random()
        procs = sorted(self.m.procs)
        p = r.choice(procs)
        if x < 0.16 or not fds:
            self.pick_open(p)
            return
        q, fd, d = r.choice(fds)
        thread = r.random() < 0.2
        if x < 0.45:
            if d.kind == "raw":
                data = self.raw_chunk(d)
            else:
                data = self.chunk(d.kind)
            if d.kind != "raw" and not d.append and r.random() < 0.15:
                self.try_op({"p": q, "op": "pwrite", "fd": fd, "data": data,
                             "off": r.randrange(0, len(d.text) + 1)})
            else:
                op = {"p": q, "op": "write", "fd": fd, "data": data}
                if thread:
                    op["thread"] = True
                self.try_op(op)
        elif x < 0.55:
            op = {"p": q, "op": "fsync", "fd": fd}
            if thread:
                op["thread"] = True
            self.try_op(op)
        elif x < 0.66:
            op = {"p": q, "op": "close", "fd": fd}
            if thread:
                op["thread"] = True
            self.try_op(op)
        elif x < 0.71:
            self.try_op({"p": q, "op": "dup", "fd": fd, "new": self.new_fd()})
        elif x < 0.78:
            if len(procs) < 4:
                self.nproc += 1
                self.try_op({"p": p, "op": "fork", "child": self.nproc})
        elif x < 0.83:
            kids = [c for c in procs if c != 0]
            if kids:
                op = {"p": r.choice(kids), "op": "exit"}
                if r.random() < 0.5:
                    op["implicit"] = True
                if not self.try_op(op):
                    op.pop("implicit", None)
                    self.try_op(op)
        elif x < 0.86:
            if d.kind in ("new", "entry", "name") and d.acc == "O_RDWR":
                n = r.randrange(2, 6)
                self.try_op({"p": q, "op": "race", "fd": fd, "readers": r.randrange(1, 3),
                             "chunks": [self.chunk(d.kind) for _ in range(n)]})
        elif x < 0.88:
            self.try_op({"p": q, "op": "read", "fd": fd})
        elif x < 0.90:
            if d.kind in ("new", "entry", "name") and len(d.text) > 0:
                self.try_op({"p": q, "op": "lseek", "fd": fd, "off": r.randrange(0, len(d.text) + 1)})
        elif x < 0.92:
            if d.kind in ("new", "entry", "name") and d.dirty and len(d.text) > 1:
                self.try_op({"p": q, "op": "ftruncate", "fd": fd, "len": r.randrange(1, len(d.text))})
        elif x < 0.95:
            name = r.choice(["l1", "l2", "try me"])
            if r.random() < 0.6:
                self.try_op({"p": p, "op": "label", "name": name, "on": r.choice(["u1", "a1", "u2"])})
            else:
                self.try_op({"p": p, "op": "unlabel", "name": name})
        elif x < 0.96:
            pend = [n for n, b in self.m.branches.items() if b["pending"] and not b["used"]]
            y = r.random()
            if pend and y < 0.65:
                self.nnew += 1
                acc = r.choice(["O_WRONLY", "O_RDWR"])
                op = {"p": p, "op": "open", "fd": self.new_fd(), "target": "new:%d" % self.nnew,
                      "dir": r.choice(pend), "flags": [acc, "O_CREAT"] + (["O_TRUNC"] if r.random() < 0.5 else [])}
                if self.try_op(op):
                    self.try_op({"p": p, "op": "write", "fd": op["fd"], "data": self.chunk("new")})
            elif pend and y < 0.8:
                self.try_op({"p": p, "op": "rmbranch", "dir": r.choice(pend)})
            else:
                self.nbranch += 1
                op = {"p": p, "op": "mkbranch", "depth": r.randrange(1, 7), "label": "b%d" % self.nbranch}
                ok = self.try_op(op)
                if ok and r.random() < 0.15:
                    self.try_op({"p": p, "op": "rmbranch", "dir": "%04d~%s" % (op["depth"], op["label"])})
                elif ok and r.random() < 0.7:
                    # mkdir, then a file written into it, as a shell does
                    self.nnew += 1
                    o = {"p": p, "op": "open", "fd": self.new_fd(), "target": "new:%d" % self.nnew,
                         "dir": "%04d~%s" % (op["depth"], op["label"]),
                         "flags": [r.choice(["O_WRONLY", "O_RDWR"]), "O_CREAT", "O_TRUNC"]}
                    if self.try_op(o):
                        self.try_op({"p": p, "op": "write", "fd": o["fd"], "data": self.chunk("new")})
        elif x < 0.97:
            if self.sides and r.random() < 0.8:
                key = self.sides.pop(0)
                self.nnew += 1
                self.try_op({"p": p, "op": "rename_side", "key": key, "to": str(self.nnew)})
            else:
                self.nside += 1
                key = ".s%d.tmp" % self.nside if r.random() < 0.5 else "s%d.md~" % self.nside
                if self.try_op({"p": p, "op": "side", "key": key, "data": self.chunk("new")}):
                    self.sides.append(key)
                    if r.random() < 0.5:  # echo x > .tmp && mv .tmp new.md
                        self.nnew += 1
                        self.try_op({"p": p, "op": "rename_side", "key": self.sides.pop(), "to": str(self.nnew)})
        else:
            y = r.random()
            if y < 0.35:
                self.try_op({"p": p, "op": "unlink_entry", "key": "u1"})
            elif y < 0.7:
                self.try_op({"p": p, "op": "rename_entry", "key": "u1", "to": r.choice(["a1", "u2"])})
            else:
                self.nnew += 1
                self.try_op({"p": p, "op": "aside_edit", "key": r.choice(["u1", "a1", "u2"]), "to": str(self.nnew),
                             "data": self.chunk("new")})


def generate(seed):
    g = Gen(seed)
    n = g.r.randrange(6, 28)
    for _ in range(n * 3):
        if len(g.ops) >= n:
            break
        g.step()
    # A crash ends some sequences: most often where a draft is fsynced
    # and not closed, the case it is about.  Drawn apart, so a seed's
    # calls are the same with or without it.
    synced = any(d.synced is not None for d in g.m.drafts.values())
    if random.Random(seed * 7919 + 17).random() < (0.3 if synced else 0.03):
        g.try_op({"p": 0, "op": "crash"})
    return g.ops


# --- the executor: worker processes ------------------------------------------------

def errname(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def call(f):
    try:
        r = f()
        return 0 if r is None else r
    except OSError as e:
        return errname(e)


def worker_loop(sock, sdir, wid, fds=None):
    """One process of a sequence: runs the commands the coordinator sends
    (one JSON line each), answers one JSON line each.  fds: the
    descriptors it inherited (a forked child), by name."""
    fds = {} if fds is None else fds
    rf = sock.makefile("rb")

    def reply(obj):
        sock.sendall((json.dumps(obj) + "\n").encode())

    reply({"hello": wid, "pid": os.getpid()})
    while True:
        line = rf.readline()
        if not line:
            os._exit(0)
        op = json.loads(line)
        k = op["op"]
        fd = fds.get(op.get("fd"))
        res = None
        if k == "open":
            fl = 0
            for f in op["flags"]:
                fl |= FLAGS[f]
            try:
                fds[op["fd"]] = os.open(os.path.join(sdir, target_path(op["target"], op.get("dir"))), fl, 0o644)
                res = 0
            except OSError as e:
                res = errname(e)
        elif k in ("write", "fsync", "close"):
            def do(k=k, fd=fd, op=op):
                if k == "write":
                    return call(lambda: os.write(fd, op["data"].encode()))
                if k == "fsync":
                    return call(lambda: os.fsync(fd))
                return call(lambda: os.close(fd))
            if op.get("thread"):
                box = []
                t = threading.Thread(target=lambda: box.append(do()))
                t.start()
                t.join()
                res = box[0]
            else:
                res = do()
            if k == "close":
                del fds[op["fd"]]
        elif k == "pwrite":
            res = call(lambda: os.pwrite(fd, op["data"].encode(), op["off"]))
        elif k == "lseek":
            res = call(lambda: os.lseek(fd, op["off"], os.SEEK_SET))
        elif k == "ftruncate":
            res = call(lambda: os.ftruncate(fd, op["len"]))
        elif k == "read":
            r = call(lambda: os.pread(fd, 65536, 0))
            res = None if isinstance(r, bytes) else r
        elif k == "dup":
            fds[op["new"]] = os.dup(fd)
            res = 0
        elif k == "race":
            stop = threading.Event()

            def reader(fd=fd):
                while not stop.is_set():
                    try:
                        os.pread(fd, 65536, 0)
                    except OSError:
                        pass

            def other():
                while not stop.is_set():
                    for n in ("session.jsonl", "name", FILES["u2"]):
                        try:
                            with open(os.path.join(sdir, n), "rb") as f:
                                f.read()
                        except OSError:
                            pass
                    try:
                        os.listdir(sdir)
                    except OSError:
                        pass
            ts = [threading.Thread(target=reader, daemon=True) for _ in range(op["readers"])]
            ts.append(threading.Thread(target=other, daemon=True))
            for t in ts:
                t.start()
            res = []
            for c in op["chunks"]:
                w = call(lambda: os.write(fd, c.encode()))
                f = call(lambda: os.fsync(fd))
                res.append([w, f])
            stop.set()
            for t in ts:
                t.join()
        elif k == "fork":
            a, b = socket.socketpair()
            pid = os.fork()
            if pid == 0:
                try:
                    rf.close()
                    sock.close()
                    a.close()
                    hi = os.dup2(b.fileno(), 900 + op["child"])
                    b.close()
                    worker_loop(socket.socket(fileno=hi), sdir, op["child"], dict(fds))
                finally:
                    os._exit(1)
            b.close()
            socket.send_fds(sock, [(json.dumps({"res": 0, "pid": pid}) + "\n").encode()], [a.fileno()])
            a.close()
            continue
        elif k == "exit":
            # explicit: its descriptors were closed by close commands;
            # implicit: the kernel closes what is still open
            reply({"res": 0, "pid": os.getpid()})
            os._exit(0)
        elif k == "label":
            res = call(lambda: os.symlink("../" + FILES[op["on"]], os.path.join(sdir, "labels", op["name"])))
        elif k == "unlabel":
            res = call(lambda: os.unlink(os.path.join(sdir, "labels", op["name"])))
        elif k == "unlink_entry":
            res = call(lambda: os.unlink(os.path.join(sdir, FILES[op["key"]])))
        elif k == "rename_entry":
            res = call(lambda: os.rename(os.path.join(sdir, FILES[op["key"]]), os.path.join(sdir, FILES[op["to"]])))
        elif k == "aside_edit":
            def aside():
                moved = os.path.join(sdir, "m%s.md" % op["to"])
                os.rename(os.path.join(sdir, FILES[op["key"]]), moved)
                f = os.open(moved, os.O_WRONLY | os.O_TRUNC)
                try:
                    os.write(f, op["data"].encode())
                finally:
                    os.close(f)
                os.stat(os.path.join(sdir, FILES[op["key"]]))  # back under its name
            res = call(aside)
        elif k == "mkbranch":
            res = call(lambda: os.mkdir(os.path.join(sdir, "%04d~%s" % (op["depth"], op["label"]))))
        elif k == "rmbranch":
            res = call(lambda: os.rmdir(os.path.join(sdir, op["dir"])))
        elif k == "side":
            def mk():
                f = os.open(os.path.join(sdir, op["key"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.write(f, op["data"].encode())
                os.close(f)
            res = call(mk)
        elif k == "rename_side":
            res = call(lambda: os.rename(os.path.join(sdir, op["key"]), os.path.join(sdir, "n%s.md" % op["to"])))
        reply({"res": res})


ZOMBIES = []
WORKERS = []  # pids of every worker process started


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read().rsplit(")", 1)[1].split()[0]
        return st not in ("Z", "X")
    except OSError:
        return False


def end_workers(kill):
    """Waits for the workers to be gone (killed first if kill): a mount
    a process still uses cannot be unmounted."""
    if kill:
        for p in WORKERS:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
    end = time.time() + 10 * TIME_SCALE
    while time.time() < end:
        reap()
        WORKERS[:] = [p for p in WORKERS if alive(p)]
        if not WORKERS:
            return
        time.sleep(0.005)


def reap():
    """Our root workers are the only children besides the daemon."""
    for p in list(ZOMBIES):
        if p is None:
            ZOMBIES.remove(p)
            continue
        try:
            if os.waitpid(p, os.WNOHANG)[0]:
                ZOMBIES.remove(p)
        except ChildProcessError:
            ZOMBIES.remove(p)


class Hang(Exception):
    pass


class Daemon:
    """One mount of the store, with its own log."""

    def __init__(self, daemon, store, mnt, logdir, out):
        self.daemon, self.store, self.mnt, self.logdir, self.out = daemon, store, mnt, logdir, out
        self.proc = None
        self.n = 0
        self.stacks_shown = 0

    def start(self):
        self.n += 1
        self.log = os.path.join(self.logdir, "daemon.%d.log" % self.n)
        lf = open(self.log, "wb")
        self.proc = subprocess.Popen([self.daemon, "--store", self.store, "-f", "-o", "auto_unmount", self.mnt],
                                     stdin=subprocess.DEVNULL, stdout=lf, stderr=lf)
        lf.close()
        end = time.time() + 10 * TIME_SCALE
        while time.time() < end:
            if self.mounted():
                return
            if self.proc.poll() is not None:
                raise RuntimeError("daemon exited before mounting: %s" % open(self.log).read()[:2000])
            time.sleep(0.02)
        raise RuntimeError("not mounted after %ss" % (10 * TIME_SCALE))

    def mounted(self):
        with open("/proc/self/mountinfo") as f:
            return any(l.split()[4] == self.mnt for l in f)

    def stacks(self):
        try:
            r = subprocess.run(["gdb", "-p", str(self.proc.pid), "-batch", "-ex", "thread apply all bt"],
                               capture_output=True, text=True, timeout=120)
            return r.stdout[-12000:] + r.stderr[-2000:]
        except Exception as e:  # noqa
            return "gdb failed: %s" % e

    def kill(self):
        """After a hang: the daemon goes, so do the stuck callers."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        subprocess.run(["fusermount3", "-uz", self.mnt], capture_output=True, timeout=30)
        self.proc = None

    def stop(self):
        """Unmounts; returns a list of problems (exit status, log lines)."""
        bad = []
        if self.proc is None:
            return bad
        if self.proc.poll() is not None:
            bad.append("the daemon died while mounted (status %s)" % self.proc.returncode)
        else:
            r = subprocess.run(["fusermount3", "-u", self.mnt], capture_output=True, text=True, timeout=30)
            if r.returncode:
                bad.append("fusermount3 -u failed: %s" % r.stderr.strip())
                self.proc.kill()
                subprocess.run(["fusermount3", "-uz", self.mnt], capture_output=True, timeout=30)
            try:
                rc = self.proc.wait(10 * TIME_SCALE)
                if rc:
                    bad.append("the daemon exited with status %d after the unmount" % rc)
            except subprocess.TimeoutExpired:
                bad.append("the daemon did not exit after the unmount")
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        with open(self.log, errors="replace") as f:
            for l in f:
                low = l.lower()
                if "sanitizer" in low or "runtime error" in low:
                    bad.append("daemon log: " + l.strip())
        return bad


class Pool:
    """Fresh sessions: files put into the store before each mount."""

    def __init__(self, daemon, scratch, batch, out, store=None):
        self.scratch = scratch
        self.store = store or os.path.join(scratch, "store")
        self.mnt = os.path.join(scratch, "mnt")
        os.makedirs(os.path.join(self.store, PROJECT), exist_ok=True)
        os.makedirs(self.mnt, exist_ok=True)
        self.batch = batch
        self.free = []
        self.used = []  # (store file, model, label) checked again after the unmount
        self.d = Daemon(daemon, self.store, self.mnt, scratch, out)
        self.out = out
        self.problems = []
        self.nsess = 0

    def remount(self):
        self.unmount()
        for _ in range(self.batch):
            self.nsess += 1
            sid = str(uuid.UUID(int=(0x01a20000 << 96) | (self.nsess << 16) | os.getpid() % 65536))
            stem = "2026-01-01T00-00-00-000Z_%s" % sid
            path = os.path.join(self.store, PROJECT, stem + ".jsonl")
            with open(path, "w") as f:
                f.write(fixture(sid))
            self.free.append((path, os.path.join(self.mnt, PROJECT, stem)))
        self.d.start()

    def unmount(self):
        end_workers(False)
        end_workers(True)
        if self.d.proc is not None:
            self.problems += self.d.stop()
            for path, model, what in self.used:
                why = check_file(path, model)
                if why:
                    self.problems.append("%s, after the unmount: %s" % (what, why))
        self.used = []
        self.free = []

    def crash(self):
        """kill -9 of the daemon (auto_unmount takes the mount down), the
        sequence's processes killed (their descriptors are dead), and a
        new daemon on the same store; the batch's unused sessions stay."""
        self.d.proc.kill()
        self.d.proc.wait()
        end_workers(True)
        with open(self.d.log, errors="replace") as f:
            self.problems += ["daemon log: " + l.strip() for l in f
                              if "sanitizer" in l.lower() or "runtime error" in l.lower()]
        end = time.time() + 10 * TIME_SCALE
        while self.d.mounted() and time.time() < end:
            time.sleep(0.01)
        if self.d.mounted():
            self.problems.append("the mount stayed after kill -9 of a daemon with auto_unmount")
            subprocess.run(["fusermount3", "-uz", self.mnt], capture_output=True, timeout=30)
        self.d.proc = None
        self.d.start()

    def session(self):
        if not self.free or self.d.proc is None:
            self.remount()
        return self.free.pop()

    def after_hang(self):
        self.d.kill()
        end_workers(True)
        self.used = []
        self.free = []


# --- checking the session file --------------------------------------------------

def text_of(e):
    c = e.get("message", {}).get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "".join(b.get("text", "") for b in c if b.get("type") == "text")
    return None


def read_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    return data


def root_tip(entries):
    """The tip of the session directory: from the first root, each entry's
    first child in file order (docs/layout.md, Tree rules)."""
    first = {}
    ids = set()
    root = None
    for e in entries:
        pid = e.get("parentId")
        if pid is None and root is None:
            root = e["id"]
        if pid is not None and pid in ids and pid not in first:
            first[pid] = e["id"]
        ids.add(e["id"])
    cur = root
    while cur in first:
        cur = first[cur]
    return cur


def check_file(path, model):
    """None when the store file holds exactly the fixture and the model's
    entries; else why not."""
    data = read_lines(path)
    if not data.endswith(b"\n"):
        return "the session file ends in a partial line"
    lines = data.decode(errors="replace").split("\n")[:-1]
    if len(lines) < FIXTURE_LINES:
        return "the session file lost lines: %d" % len(lines)
    if lines[1:FIXTURE_LINES] != fixture("x").split("\n")[1:FIXTURE_LINES] or '"type":"session"' not in lines[0]:
        return "a line that was in the file before changed (history is append-only)"
    got = lines[FIXTURE_LINES:]
    exp = model.appends
    try:
        entries = [json.loads(l) for l in lines[1:]]
    except ValueError as e:
        return "a line is not JSON: %s" % e
    descr = lambda: "expected %d appended entries: %s; the file has %d: %s" % (
        len(exp), "; ".join(describe(a) for a in exp), len(got),
        "; ".join(describe_line(json.loads(l)) for l in got))
    if len(got) != len(exp):
        return descr()
    idx = {k: IDS[k] for k in IDS}
    for i, (l, a) in enumerate(zip(got, exp)):
        e = entries[FIXTURE_LINES - 1 + i]
        before = entries[:FIXTURE_LINES - 1 + i]
        idx[a["ref"]] = e.get("id")
        bad = None
        if a["type"] == "raw":
            if l + "\n" != a["line"]:
                bad = "line %d is not the raw line written" % (i + 1)
        elif e.get("type") != a["type"]:
            bad = "entry %d is a %s" % (i + 1, e.get("type"))
        elif a["type"] == "message":
            if e["message"].get("role") != a["role"] or text_of(e) != a["text"]:
                bad = "entry %d differs" % (i + 1)
        elif a["type"] == "session_info":
            if (e.get("name") or "").strip() != a["name"]:
                bad = "entry %d has name %r" % (i + 1, e.get("name"))
        elif a["type"] == "label":
            if e.get("targetId") != idx.get(a["target"]) or (e.get("label") or None) != a["label"]:
                bad = "entry %d is label %r on %s" % (i + 1, e.get("label"), e.get("targetId"))
        if bad is None:
            par = a["parent"]
            want = None
            if par[0] == "tip":
                want = root_tip(before)
            elif par[0] == "leaf":
                want = before[-1]["id"]
            elif par[0] == "under":
                want = idx.get(par[1]) if par[1] else None
            elif par[0] == "sib":
                ref = par[1]
                refid = idx.get(ref)
                want = next((x.get("parentId") for x in entries if x.get("id") == refid), "?")
            if par[0] != "given" and e.get("parentId") != want:
                bad = "entry %d hangs under %s, not under %s (%s)" % (i + 1, e.get("parentId"), want, par[0])
        if bad:
            return bad + ": " + descr()
    return None


def describe(a):
    if a["type"] == "raw":
        return "raw %s" % a["id"]
    if a["type"] == "message":
        return "%s %r (%s)" % (a["role"], a["text"], a["parent"][0] + ("" if len(a["parent"]) < 2 else " " + str(a["parent"][1])))
    if a["type"] == "session_info":
        return "name %r" % a["name"]
    return "label %r on %s" % (a["label"], a["target"])


def describe_line(e):
    if e.get("type") == "message":
        if e.get("id", "").startswith("bb"):
            return "raw %s" % e["id"]
        return "%s %r under %s" % (e["message"].get("role"), text_of(e), e.get("parentId"))
    if e.get("type") == "session_info":
        return "name %r" % e.get("name")
    if e.get("type") == "label":
        return "label %r on %s" % (e.get("label"), e.get("targetId"))
    return e.get("type", "?")


def count_lines(path):
    with open(path, "rb") as f:
        return f.read().count(b"\n")


# --- running one sequence ------------------------------------------------------------

class Failure(Exception):
    def __init__(self, kind, msg, sig=None):
        super().__init__(msg)
        self.kind = kind  # hang, result, content, lost, daemon
        # what a shrunk candidate must fail with too: the kind, and for a
        # wrong answer which call answered what
        self.sig = sig or (kind,)


class Runner:
    def __init__(self, pool, out, stacks=True):
        self.pool = pool
        self.out = out
        self.stacks = stacks
        self.calls = 0
        self.label = "a sequence"

    def run(self, ops):
        """Runs ops (plus the implicit end) on a fresh session; raises
        Failure."""
        simulate(ops)  # judged before anything runs (Unsupported)
        model = Model()
        path, sdir = self.pool.session()
        workers = {}
        pids = []
        try:
            a, b = socket.socketpair()
            pid = os.fork()
            if pid == 0:
                try:
                    a.close()
                    hi = os.dup2(b.fileno(), 900)
                    b.close()
                    worker_loop(socket.socket(fileno=hi), sdir, 0)
                finally:
                    os._exit(1)
            b.close()
            workers[0] = Conn(a)
            pids.append(pid)
            WORKERS.append(pid)
            workers[0].recv()
            seq = list(ops)
            i = 0
            while True:
                if i == len(seq):
                    tail = model.finish_ops()
                    if not tail:
                        break
                    seq += tail
                op = seq[i]
                i += 1
                if op["op"] == "exit" and not op.get("implicit") and model.procs[op["p"]]:
                    # an explicit exit: each close first, as calls of their own
                    seq[i - 1:i - 1] = [{"p": op["p"], "op": "close", "fd": fd}
                                        for fd in sorted(model.procs[op["p"]], key=fd_order)]
                    i -= 1
                    continue
                if op["op"] == "crash":
                    # The daemon dies first: a worker told to stop would
                    # close its descriptors, and an opener's close commits.
                    self.crash(model, path)
                    return model
                cmd = dict(op)
                self._last_kind = self._kind_of(model, op)
                exp, sync, asyn = model.step(op)
                w = workers[op["p"]]
                w.send(cmd)
                self.calls += 1
                try:
                    if op["op"] == "fork":
                        rep, sk = w.recv_fd()
                        workers[op["child"]] = Conn(socket.socket(fileno=sk))
                        workers[op["child"]].recv()
                        pids.append(rep["pid"])
                        WORKERS.append(rep["pid"])
                    else:
                        rep = w.recv()
                except Hang:
                    raise self.hang(op, ops, sdir)
                got = rep["res"]
                if op["op"] == "exit":
                    workers.pop(op["p"]).close()
                    self.wait_gone(rep.get("pid"))
                if exp is not None and got != exp:
                    raise Failure("result", "%s answered %s, the model says %s" % (show_op(op), json.dumps(got), json.dumps(exp)),
                                  ("result", op["op"], self._kind_of(model, op), json.dumps(got), json.dumps(exp)))
                if sync:
                    n = count_lines(path)
                    want = FIXTURE_LINES + len(model.appends) - len(asyn)
                    if n < want:
                        raise Failure("lost", "%s returned, but the session file has %d lines, not %d"
                                      % (show_op(op), n, want), ("lost", op["op"], self._last_kind))
                if asyn:
                    self.wait_count(path, FIXTURE_LINES + len(model.appends), op)
            for w in workers.values():
                w.close()
            workers = {}
            self.wait_count(path, FIXTURE_LINES + len(model.appends), None)
            # the file must stay as the model says (a late release)
            end = time.time() + SETTLE
            while time.time() < end:
                time.sleep(0.01)
            why = check_file(path, model)
            if why:
                n = count_lines(path) - FIXTURE_LINES
                e = len(model.appends)
                raise Failure("content", why, ("content", "more" if n > e else "fewer" if n < e else "differs"))
            if model.rejected:
                self.check_rejected(model, sdir)
            # A release commits after close() returned: its append and the
            # removal of the record are two steps, so the record may go
            # a moment after the line shows.
            end = time.time() + WAIT_APPEND
            while draft_records(path) and time.time() < end:
                time.sleep(0.01)
            left = draft_records(path)
            if left:
                raise Failure("content", "every descriptor is closed, but the store keeps %d record(s) of an fsynced "
                              "draft of this session: %s" % (len(left), left[0]), ("content", "draft record"))
            self.pool.used.append((path, model, "%s (on %s)" % (self.label, os.path.basename(path))))
        except BaseException:
            for w in workers.values():
                w.close()
            end_workers(True)
            raise
        finally:
            for w in workers.values():
                w.close()
            ZOMBIES.append(pids[0] if pids else None)
            reap()
        return model

    def crash(self, model, path):
        """kill -9 of the daemon with the sequence's drafts open, then a
        new daemon: the session file holds what was appended, no more;
        each draft's last fsync is in rejected/, with a log line naming
        its file by its real path; removing it there removes its record
        from the store (docs/layout.md "fsync")."""
        model.step({"p": 0, "op": "crash"})
        if model.rejected:
            self.check_rejected(model, None)  # in memory: gone with the daemon
        want = len(model.recovered)
        end = time.time() + WAIT_APPEND
        while len(draft_records(path)) != want and time.time() < end:
            time.sleep(0.01)  # a release's record goes a moment after its append
        got = draft_records(path)
        if len(got) != want:
            raise Failure("content", "before the crash the store keeps %d record(s) of fsynced drafts, the model says %d"
                          % (len(got), want), ("content", "records before crash"))
        self.pool.crash()
        why = check_file(path, model)
        if why:
            raise Failure("content", "after the crash: " + why, ("content", "crash"))
        rdir = os.path.join(self.pool.mnt, ".pisessionfs", "rejected")
        kept = {}
        for n in os.listdir(rdir):
            with open(os.path.join(rdir, n), "rb") as f:
                kept[n] = f.read().decode(errors="replace")
        left = sorted(kept.values())
        for t in model.recovered:
            if t in left:
                left.remove(t)
            else:
                raise Failure("lost", "after the crash, the text its fsync made durable is not in rejected/: %r" % t,
                              ("lost", "crash"))
        if left:
            raise Failure("content", "after the crash, rejected/ holds %d text(s) no fsync made durable: %r"
                          % (len(left), left[0]), ("content", "crash extra"))
        with open(os.path.join(self.pool.mnt, ".pisessionfs", "log"), errors="replace") as f:
            lines = [l for l in f if " recovered " in l]
        real = [l for l in lines if (" recovered " + self.pool.mnt + "/" + PROJECT + "/") in l]
        if len(lines) != want or len(real) != want:
            raise Failure("content", "after the crash the log has %d 'recovered' line(s), %d naming a real path, for %d "
                          "text(s)%s" % (len(lines), len(real), want, ": " + lines[0].strip() if lines else ""),
                          ("content", "crash log"))
        for n in kept:
            os.unlink(os.path.join(rdir, n))
        end = time.time() + WAIT_APPEND  # the record goes when the daemon lets go of the file
        while draft_records(path) and time.time() < end:
            time.sleep(0.01)
        if draft_records(path):
            raise Failure("content", "the recovered texts were removed from rejected/, but the store keeps their "
                          "records: %s" % draft_records(path), ("content", "crash records"))
        time.sleep(SETTLE)
        why = check_file(path, model)
        if why:
            raise Failure("content", "after the new daemon started: " + why, ("content", "crash restart"))
        self.pool.used.append((path, model, "%s (on %s, crashed)" % (self.label, os.path.basename(path))))

    def hang(self, op, ops, sdir):
        msg = "no answer within %gs to %s: the daemon hung" % (OP_TIMEOUT, show_op(op))
        if self.stacks and self.pool.d.stacks_shown < 1:
            self.pool.d.stacks_shown += 1
            st = self.pool.d.stacks()
            msg += "\n# the daemon's threads (gdb):\n" + "\n".join("#   " + l for l in st.splitlines())
        self.pool.after_hang()
        return Failure("hang", msg)

    _last_kind = None

    def _kind_of(self, model, op):
        """What the call's descriptor is a draft of (before the call)."""
        if op["op"] == "open":
            return op["target"].split(":")[0]
        try:
            return model._fd(op["p"], op["fd"]).kind
        except (Unsupported, KeyError):
            return self._last_kind

    def wait_gone(self, pid):
        """An exiting worker closes its descriptors in the kernel: wait
        until it is gone (bounded: a close can hang too)."""
        end = time.time() + OP_TIMEOUT
        while pid and alive(pid):
            if time.time() > end:
                raise Hang()
            time.sleep(0.001)

    def wait_count(self, path, want, op):
        end = time.time() + WAIT_APPEND
        while True:
            n = count_lines(path)
            if n >= want:
                return
            if time.time() > end:
                raise Failure("lost", "after %s: the session file has %d lines, the model says %d (waited %gs)"
                              % (show_op(op) if op else "the end of the sequence", n, want, WAIT_APPEND),
                              ("lost", "release"))
            time.sleep(0.001)

    def check_rejected(self, model, sdir):
        rdir = os.path.join(self.pool.mnt, ".pisessionfs", "rejected")
        end = time.time() + WAIT_APPEND
        while True:
            texts = []
            for n in os.listdir(rdir):
                try:
                    with open(os.path.join(rdir, n), "rb") as f:
                        texts.append(f.read().decode(errors="replace"))
                except OSError:
                    pass
            missing = [t for t in model.rejected if not any(t.rstrip("\n") in x for x in texts)]
            if not missing:
                return
            if time.time() > end:
                raise Failure("lost", "refused text is not in .pisessionfs/rejected/: %r" % missing[0], ("lost", "rejected"))
            time.sleep(0.02)


def draft_records(session_path):
    """The records of fsynced drafts (docs/layout.md "fsync") beside the
    session file that name it: none once every descriptor is closed."""
    d = os.path.dirname(session_path)
    stem = os.path.basename(session_path)[:-len(".jsonl")]
    out = []
    for n in os.listdir(d):
        if n.startswith(".pisessionfs-draft."):
            try:
                with open(os.path.join(d, n), "rb") as f:
                    head = json.loads(f.readline())
            except (OSError, ValueError):
                continue
            if ("/" + stem + "/") in head.get("path", ""):
                out.append(n)
    return out


class Conn:
    def __init__(self, s):
        self.s = s
        self.buf = b""

    def send(self, obj):
        self.s.sendall((json.dumps(obj) + "\n").encode())

    def _line(self):
        end = time.time() + OP_TIMEOUT
        while b"\n" not in self.buf:
            left = end - time.time()
            if left <= 0:
                raise Hang()
            r, _, _ = select.select([self.s], [], [], left)
            if not r:
                raise Hang()
            got = self.s.recv(65536)
            if not got:
                raise Failure("daemon", "a worker process died")
            self.buf += got
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def recv(self):
        return self._line()

    def recv_fd(self):
        end = time.time() + OP_TIMEOUT
        r, _, _ = select.select([self.s], [], [], OP_TIMEOUT)
        if not r:
            raise Hang()
        msg, fds, _, _ = socket.recv_fds(self.s, 65536, 1)
        self.buf += msg
        return self._line(), fds[0]

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


def show_op(op):
    p = "P%d" % op["p"]
    k = op["op"]
    th = " [in a thread]" if op.get("thread") else ""
    if k == "open":
        return "%s: %s = open(%r, %s)" % (p, op["fd"], target_path(op["target"], op.get("dir")), "|".join(op["flags"]))
    if k in ("write",):
        return "%s: write(%s, %r)%s" % (p, op["fd"], op["data"], th)
    if k == "pwrite":
        return "%s: pwrite(%s, %r, %d)" % (p, op["fd"], op["data"], op["off"])
    if k in ("fsync", "close", "read"):
        return "%s: %s(%s)%s" % (p, k, op["fd"], th)
    if k == "dup":
        return "%s: %s = dup(%s)" % (p, op["new"], op["fd"])
    if k == "fork":
        return "%s: fork() -> P%d" % (p, op["child"])
    if k == "exit":
        return "%s: exit (closes every descriptor it holds)" % p
    if k == "lseek":
        return "%s: lseek(%s, %d, SEEK_SET)" % (p, op["fd"], op["off"])
    if k == "ftruncate":
        return "%s: ftruncate(%s, %d)" % (p, op["fd"], op["len"])
    if k == "race":
        return "%s: race on %s: %d reader threads pread() it, one reads session.jsonl/name/an entry, while one thread does %s" % (
            p, op["fd"], op["readers"], "; ".join("write(%r); fsync" % c for c in op["chunks"]))
    if k == "label":
        return "%s: symlink('../%s', 'labels/%s')" % (p, FILES[op["on"]], op["name"])
    if k == "unlabel":
        return "%s: unlink('labels/%s')" % (p, op["name"])
    if k == "unlink_entry":
        return "%s: unlink(%r)" % (p, FILES[op["key"]])
    if k == "rename_entry":
        return "%s: rename(%r, %r)" % (p, FILES[op["key"]], FILES[op["to"]])
    if k == "aside_edit":
        return "%s: rename(%r, 'm%s.md'); write %r to it (O_TRUNC); close; stat(%r)" % (
            p, FILES[op["key"]], op["to"], op["data"], FILES[op["key"]])
    if k == "mkbranch":
        return "%s: mkdir('%04d~%s')" % (p, op["depth"], op["label"])
    if k == "rmbranch":
        return "%s: rmdir(%r)" % (p, op["dir"])
    if k == "side":
        return "%s: write side file %r with %r and close it" % (p, op["key"], op["data"])
    if k == "rename_side":
        return "%s: rename(%r, 'n%s.md')" % (p, op["key"], op["to"])
    if k == "crash":
        return "kill -9 of the daemon (every process of the sequence killed too), then a new daemon on the store"
    return json.dumps(op)


# --- shrinking --------------------------------------------------------------------

def valid(ops):
    try:
        simulate(ops)
        return True
    except Unsupported:
        return False


def shrink(ops, fails, deadline):
    """Delta debugging (ddmin) over the op list, then single ops; a
    candidate the model does not judge (Unsupported) is skipped."""
    n = 2
    while len(ops) >= 2 and time.time() < deadline:
        size = max(1, (len(ops) + n - 1) // n)
        done = False
        for i in range(0, len(ops), size):
            cand = ops[:i] + ops[i + size:]
            if valid(cand) and fails(cand):
                ops = cand
                n = max(n - 1, 2)
                done = True
                break
            if time.time() > deadline:
                break
        if not done:
            if size == 1:
                break
            n = min(len(ops), n * 2)
    return ops


def variants(op):
    """Simpler forms of one op, for the pass after ddmin."""
    out = []
    if op.get("thread"):
        v = dict(op)
        del v["thread"]
        out.append(v)
    if op.get("implicit"):
        v = dict(op)
        del v["implicit"]
        out.append(v)
    if op["op"] == "race":
        if len(op["chunks"]) > 1:
            out.append(dict(op, chunks=op["chunks"][:1]))
            out.append(dict(op, chunks=op["chunks"][:len(op["chunks"]) // 2 + 1]))
        if op["readers"] > 1:
            out.append(dict(op, readers=1))
    if op["op"] == "open":
        for f in ("O_EXCL", "O_APPEND", "O_CREAT", "O_TRUNC"):
            if f in op["flags"]:
                out.append(dict(op, flags=[x for x in op["flags"] if x != f]))
        if "O_RDWR" in op["flags"]:
            out.append(dict(op, flags=["O_WRONLY" if x == "O_RDWR" else x for x in op["flags"]]))
    if op["op"] == "pwrite":
        out.append({"p": op["p"], "op": "write", "fd": op["fd"], "data": op["data"]})
    return out


def simplify(ops, fails, deadline):
    i = 0
    while i < len(ops) and time.time() < deadline:
        for v in variants(ops[i]):
            cand = ops[:i] + [v] + ops[i + 1:]
            if valid(cand) and fails(cand):
                ops = cand
                break
        else:
            i += 1
    return ops


# --- main -------------------------------------------------------------------------------

def emit(out, line):
    out.write(line + "\n")
    out.flush()


def note_block(out, title, text):
    emit(out, "# " + title)
    for l in text.splitlines():
        emit(out, "#   " + l)


def script(ops):
    return "\n".join(show_op(op) for op in ops) + "\n" + "(then every process still running exits, P0 last, closing what it holds)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--dir", required=True, help="scratch directory (store and mountpoint made there)")
    ap.add_argument("--seed", type=int, default=1, help="first seed")
    ap.add_argument("--count", type=int, default=100, help="sequences (seeds seed..seed+count-1)")
    ap.add_argument("--seconds", type=float, default=0, help="stop starting sequences after this long")
    ap.add_argument("--replay", action="append", default=[], help="a JSON file of regressions: run each")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each replayed sequence")
    ap.add_argument("--store", help="the store (default DIR/store), e.g. on a tmpfs")
    ap.add_argument("--batch", type=int, default=400, help="sessions per mount")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--shrink-seconds", type=float, default=150)
    ap.add_argument("--max-failures", type=int, default=4, help="stop after this many kinds of failure")
    ap.add_argument("--max-again", type=int, default=200, help="stop after this many failures of a kind seen")
    ap.add_argument("--print", action="store_true", help="only print the sequences of the seeds")
    a = ap.parse_args()
    out = sys.stdout
    if a.print:
        for s in range(a.seed, a.seed + a.count):
            emit(out, "seed %d:\n%s\n" % (s, script(generate(s))))
        return 0
    daemon = os.path.abspath(a.daemon)
    scratch = os.path.abspath(a.dir)
    pool = Pool(daemon, scratch, a.batch, out, a.store and os.path.abspath(a.store))
    runner = Runner(pool, out)
    t0 = time.time()
    failures = 0
    kinds = set()
    ran = 0
    skipped = 0
    again = 0

    def attempt(ops, tries=1):
        """The Failure of a run (the first of tries), or None."""
        for _ in range(tries):
            try:
                runner.run(ops)
            except Failure as f:
                return f
        return None

    shrink_time = [0.0]

    def report(label, ops, f, seed=None):
        nonlocal failures
        failures += 1
        ts = time.time()
        emit(out, "not ok - %s: %s: %s" % (label, f.kind, str(f).split("\n")[0]))
        if "\n" in str(f):
            emit(out, str(f).split("\n", 1)[1])
        if a.no_shrink or time.time() - t0 > (a.seconds or 1e9) + a.shrink_seconds:
            small = ops
        else:
            tries = 4 if f.kind == "hang" else 2
            runner.stacks = False
            fails = lambda c: (lambda g: g is not None and g.sig == f.sig)(attempt(c, tries))
            deadline = time.time() + a.shrink_seconds * TIME_SCALE
            small = shrink(ops, fails, deadline)
            small = simplify(small, fails, deadline)
            small = shrink(small, fails, deadline)
            runner.stacks = True
            again = attempt(small, tries)
            if again is not None:
                f = again
        shrink_time[0] += time.time() - ts
        note_block(out, "%s: minimal failing sequence (%d ops of %d)%s; fails with %s: %s" % (
            label, len(small), len(ops), "" if seed is None else ", seed %d" % seed, f.kind,
            str(f).split("\n")[0]), script(small))
        emit(out, "# replay: " + json.dumps({"seed": seed, "kind": f.kind, "ops": small}))

    try:
        for path in a.replay:
            with open(path) as fh:
                cases = json.load(fh)
            for c in cases:
                f = attempt(c["ops"], c.get("repeat", 1) * a.repeat)
                if f is None:
                    emit(out, "ok - regression %s (%s)" % (c["name"], c.get("bug", "")))
                else:
                    failures += 1
                    emit(out, "not ok - regression %s (%s): %s: %s" % (c["name"], c.get("bug", ""), f.kind, f))
                    note_block(out, "the sequence", script(c["ops"]))
        calls0 = runner.calls
        t1 = time.time()
        for seed in range(a.seed, a.seed + a.count):
            if a.seconds and time.time() - t0 > a.seconds:
                break
            ops = generate(seed)
            if not valid(ops):
                skipped += 1
                continue
            runner.label = "seed %d" % seed
            f = attempt(ops)
            ran += 1
            if f is not None:
                if f.kind in kinds:
                    # one shrunk sequence per kind of failure; the rest are listed
                    failures += 1
                    again += 1
                    if again <= 20:
                        emit(out, "not ok - seed %d: %s again: %s" % (seed, f.kind, str(f).split("\n")[0]))
                else:
                    kinds.add(f.kind)
                    report("seed %d" % seed, ops, f, seed)
                if len(kinds) >= a.max_failures or again >= a.max_again:
                    break
        dt = time.time() - t1 - shrink_time[0]  # without the shrinking
        if a.count and ran:
            emit(out, "# %d sequences (seeds %d..%d), %d calls in %.1fs: %.1f sequences/s, %.0f calls/s" % (
                ran, a.seed, a.seed + ran + skipped - 1, runner.calls - calls0, dt, ran / dt if dt else 0,
                (runner.calls - calls0) / dt if dt else 0))
        if failures:
            emit(out, "# %d of %d sequences failed" % (failures, ran))
    finally:
        pool.unmount()
    for p in pool.problems:
        failures += 1
        emit(out, "not ok - %s" % p)
    if ran and failures == 0:
        emit(out, "ok - %d random sequences agree with the model (every answer, every entry, nothing lost, no hang)" % ran)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
