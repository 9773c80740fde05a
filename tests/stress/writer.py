#!/usr/bin/env python3
"""A writer through the mount, for the reliability tests.

    writer.py --mode md|raw|name --target PATH --log LOG --tag TAG
              --seconds S [--sleep MS] [--big-every N] [--big-kb K]
              [--parent ID] [--chain] [--batch N] [--op-timeout S] [--stop-file F] [--pause-file F]
              [--delay-ms MS] [--at EPOCH_MS] [--start N]

Loops until S seconds have passed (or the stop file exists), one write per
iteration; while the pause file exists it waits with no file open (so that
a test can unmount without EBUSY from a writer's descriptor):

  md    a new file TARGET/TAG-N.md holding one line of text (a user message
        in the tree directory TARGET); every --big-every'th one holds
        --big-kb KiB of text instead, so that a kill lands inside the
        daemon's write more often
  raw   a line (or --batch lines, each the child of the one before) appended
        to TARGET (a session.jsonl) with O_APPEND, every line a complete
        message entry with its own id TAG-N[-k]; the first line's parent is
        --parent (an id in the session, or "null"), or, with --chain, the
        last line this writer had acknowledged
  name  TARGET (a session's `name` file) rewritten with "TAG N"

Every attempt is logged before it starts ({"ev": "try", ...}) and, only once
close() has returned 0, acknowledged ({"ev": "ack", ...}) with the exact
text, name or ids written.  Errors are counted per errno ({"ev": "err"}).
A single call that takes longer than --op-timeout seconds (a hung daemon)
ends the writer with status 3 and an {"ev": "hung"} record: the caller runs
the writer under `timeout -s KILL` as well.
"""

import argparse
import errno
import json
import os
import random
import sys
import threading
import time


_BODY = {}


def big_body(kb):
    if kb not in _BODY:
        chunk = " ".join("w%06d" % i for i in range(min(kb * 128, 131072))) + " "
        _BODY[kb] = (chunk * (kb * 1024 // len(chunk) + 1))[:kb * 1024].rstrip()
    return _BODY[kb]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", required=True, choices=["md", "raw", "name"])
    ap.add_argument("--target", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--tag", required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--sleep", type=float, default=0, help="milliseconds between writes")
    ap.add_argument("--big-every", type=int, default=0)
    ap.add_argument("--big-kb", type=int, default=256)
    ap.add_argument("--parent", default="null")
    ap.add_argument("--chain", action="store_true")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--op-timeout", type=float, default=10)
    ap.add_argument("--stop-file")
    ap.add_argument("--pause-file")
    ap.add_argument("--start", type=int, default=0, help="first sequence number")
    ap.add_argument("--delay-ms", type=float, default=0, help="wait before the first write")
    ap.add_argument("--at", type=float, default=0, help="wait until this time (ms since the epoch)")
    a = ap.parse_args()

    log = open(a.log, "a", buffering=1)

    def rec(**kw):
        log.write(json.dumps(kw, ensure_ascii=False) + "\n")
        log.flush()

    # Watchdog: one file-system call must not take longer than op_timeout.
    current = [None, 0.0]
    lock = threading.Lock()

    def watchdog():
        while True:
            time.sleep(0.2)
            with lock:
                what, since = current
            if what is not None and time.monotonic() - since > a.op_timeout:
                rec(ev="hung", op=what, seconds=a.op_timeout)
                os._exit(3)

    threading.Thread(target=watchdog, daemon=True).start()

    def call(what, fn, *args):
        with lock:
            current[0], current[1] = what, time.monotonic()
        try:
            return fn(*args)
        finally:
            with lock:
                current[0] = None

    rng = random.Random("%s-%d" % (a.tag, os.getpid()))
    if a.big_every:
        big_body(a.big_kb)
    if a.delay_ms:
        time.sleep(a.delay_ms / 1000.0)
    if a.at and a.at / 1000.0 > time.time():
        time.sleep(a.at / 1000.0 - time.time())
    end = time.monotonic() + a.seconds
    n = a.start
    errs = {}
    acks = 0
    last_ack = None if a.parent == "null" else a.parent
    while time.monotonic() < end:
        if a.stop_file and os.path.exists(a.stop_file):
            break
        if a.pause_file and os.path.exists(a.pause_file):
            time.sleep(0.02)
            continue
        n += 1
        fd = None
        stage = "open"
        try:
            if a.mode == "md":
                name = os.path.join(a.target, "%s-%d.md" % (a.tag, n))
                if a.big_every and n % a.big_every == 0:
                    # A unique head, then the same body every time (made once).
                    text = "%s %d %08x " % (a.tag, n, rng.getrandbits(32)) + big_body(a.big_kb)
                else:
                    text = "%s %d %08x" % (a.tag, n, rng.getrandbits(32))
                rec(ev="try", kind="md", n=n, text=text if len(text) < 200 else None, big=len(text) >= 200,
                    head=text[:64])
                data = (text + "\n").encode()
                fd = call("open " + name, os.open, name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                stage = "write"
                off = 0
                while off < len(data):
                    off += call("write " + name, os.write, fd, data[off:off + 131072])
                stage = "close"
                f, fd = fd, None
                call("close " + name, os.close, f)
                rec(ev="ack", kind="md", n=n, text=text if len(text) < 200 else None, head=text[:64], length=len(text))
            elif a.mode == "raw":
                ids = ["%s-%d" % (a.tag, n)] if a.batch <= 1 else ["%s-%d-%d" % (a.tag, n, k) for k in range(a.batch)]
                lines = []
                parent = last_ack if a.chain else (None if a.parent == "null" else a.parent)
                for k, ident in enumerate(ids):
                    e = {"type": "message", "id": ident, "parentId": parent,
                         "timestamp": "2026-01-01T00:00:00.000Z",
                         "message": {"role": "user", "content": "raw %s" % ident, "timestamp": 1767225600000}}
                    lines.append(json.dumps(e, separators=(",", ":")))
                    parent = ident
                data = ("\n".join(lines) + "\n").encode()
                rec(ev="try", kind="raw", n=n, ids=ids, lines=lines)
                fd = call("open " + a.target, os.open, a.target, os.O_WRONLY | os.O_APPEND)
                stage = "write"
                off = 0
                while off < len(data):
                    off += call("write " + a.target, os.write, fd, data[off:])
                stage = "close"
                f, fd = fd, None
                call("close " + a.target, os.close, f)
                rec(ev="ack", kind="raw", n=n, ids=ids)
                last_ack = ids[-1]
            else:
                text = "%s %d" % (a.tag, n)
                rec(ev="try", kind="name", n=n, name=text)
                fd = call("open " + a.target, os.open, a.target, os.O_WRONLY | os.O_TRUNC)
                stage = "write"
                call("write " + a.target, os.write, fd, (text + "\n").encode())
                stage = "close"
                f, fd = fd, None
                call("close " + a.target, os.close, f)
                rec(ev="ack", kind="name", n=n, name=text)
            acks += 1
        except OSError as ex:
            key = "%s:%s" % (stage, errno.errorcode.get(ex.errno, str(ex.errno)))
            if key not in errs:
                rec(ev="err", kind=a.mode, n=n, stage=stage, error=str(ex), t=round(time.time(), 3))
            errs[key] = errs.get(key, 0) + 1
            # Nothing to write to (unmounted, or the daemon is gone): do not spin.
            time.sleep(0.01)
            if fd is not None:
                try:
                    call("close after error", os.close, fd)
                except OSError:
                    pass
        if a.sleep:
            time.sleep(a.sleep / 1000.0)
    rec(ev="end", tries=n - a.start, acks=acks, errors=errs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
