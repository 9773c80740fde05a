#!/usr/bin/env python3
"""Holds files of the mount open while the test changes the store under them.

    holder.py READY GO OUT OP...

OPs, done at once, in order:
  r:PATH          open for reading and read the first 16 bytes
  w:PATH|TEXT     open(O_WRONLY|O_CREAT|O_TRUNC) and write TEXT (not closed)
  a:PATH|TEXT     open(O_WRONLY|O_APPEND) and write TEXT + "\\n" (not closed)
  cd:PATH         chdir into PATH (the process's cwd stays there)

Then touches READY and waits (at most 60 s) for GO to exist.  Then, for every
open file in order: a reader reads on to EOF and fstat()s; a writer is
closed (which is when the mount turns it into entries).  Writes one JSON
line per OP to OUT: {"op", "path", "open": "ok"|ERRNO, "read": bytes read
after GO or ERRNO, "size": fstat size, "close": "ok"|ERRNO}, and after the
cd, {"op": "cd", "listdir": count or ERRNO}.

A single call that takes longer than 10 s ends the process (status 3) with
{"hung": call}: the caller runs it under `timeout -s KILL` too.
"""

import errno
import json
import os
import sys
import threading
import time

current = [None, 0.0]
lock = threading.Lock()


def watchdog(out):
    while True:
        time.sleep(0.2)
        with lock:
            what, since = current
        if what is not None and time.monotonic() - since > 10:
            with open(out, "a") as f:
                f.write(json.dumps({"hung": what}) + "\n")
            os._exit(3)


def call(what, fn, *a):
    with lock:
        current[0], current[1] = what, time.monotonic()
    try:
        return fn(*a)
    finally:
        with lock:
            current[0] = None


def en(ex):
    return errno.errorcode.get(ex.errno, str(ex.errno))


def main():
    ready, go, out = sys.argv[1:4]
    threading.Thread(target=watchdog, args=(out,), daemon=True).start()
    held = []
    for op in sys.argv[4:]:
        kind, _, rest = op.partition(":")
        rec = {"op": kind}
        if kind in ("w", "a"):
            path, _, text = rest.partition("|")
        else:
            path, text = rest, ""
        rec["path"] = path
        try:
            if kind == "r":
                fd = call("open " + path, os.open, path, os.O_RDONLY)
                call("read " + path, os.read, fd, 16)
            elif kind == "w":
                fd = call("open " + path, os.open, path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                call("write " + path, os.write, fd, text.encode())
            elif kind == "a":
                fd = call("open " + path, os.open, path, os.O_WRONLY | os.O_APPEND)
                call("write " + path, os.write, fd, (text + "\n").encode())
            elif kind == "cd":
                call("chdir " + path, os.chdir, path)
                fd = None
            rec["open"] = "ok"
        except OSError as ex:
            rec["open"] = en(ex)
            fd = None
        held.append((rec, fd))
    open(ready, "w").close()
    end = time.monotonic() + 60
    while not os.path.exists(go) and time.monotonic() < end:
        time.sleep(0.02)
    with open(out, "a") as f:
        for rec, fd in held:
            if rec["op"] == "cd":
                try:
                    rec["listdir"] = len(call("listdir .", os.listdir, "."))
                except OSError as ex:
                    rec["listdir"] = en(ex)
            elif fd is not None:
                if rec["op"] == "r":
                    n = 0
                    try:
                        while True:
                            b = call("read " + rec["path"], os.read, fd, 65536)
                            if not b:
                                break
                            n += len(b)
                        rec["read"] = n
                    except OSError as ex:
                        rec["read"] = en(ex)
                    try:
                        rec["size"] = call("fstat " + rec["path"], os.fstat, fd).st_size
                    except OSError as ex:
                        rec["size"] = en(ex)
                try:
                    call("close " + rec["path"], os.close, fd)
                    rec["close"] = "ok"
                except OSError as ex:
                    rec["close"] = en(ex)
            f.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
