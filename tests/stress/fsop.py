#!/usr/bin/env python3
"""One file operation, reporting which call failed and how.

    fsop.py new|trunc|append PATH DATAFILE [--fsync]
    fsop.py fsync-retry PATH DATAFILE HOOK
    fsop.py refused-then-valid PATH BADFILE GOODFILE

new: open(O_WRONLY|O_CREAT|O_TRUNC), trunc: open(O_WRONLY|O_TRUNC),
append: open(O_WRONLY|O_APPEND); then write(DATAFILE's bytes), optionally
fsync(), close().  Prints one line: "ok", or "STAGE ERRNAME message" (STAGE:
open, write, fsync or close), e.g. "close ENOSPC No space left on device".

fsync-retry: open(O_WRONLY|O_APPEND), write, fsync; then runs the shell
command HOOK (e.g. one that frees space) and calls fsync() again, then
close(); prints "first=RESULT second=RESULT close=RESULT".

refused-then-valid: open(O_WRONLY|O_APPEND), write BADFILE, fsync (refused),
write GOODFILE, fsync, close; prints "first=R second=R close=R".

Run it under `timeout -s KILL`: a hung daemon must not hang the test.
"""

import errno
import os
import subprocess
import sys


def res(stage, ex):
    return "%s %s %s" % (stage, errno.errorcode.get(ex.errno, str(ex.errno)), os.strerror(ex.errno))


def attempt(out, what, call, fd):
    """Calls call(fd) and notes what=ok or what=ERRNO-NAME in out."""
    try:
        call(fd)
        out.append("%s=ok" % what)
    except OSError as ex:
        out.append("%s=%s" % (what, errno.errorcode.get(ex.errno)))


def main():
    mode, path, datafile = sys.argv[1:4]
    if mode == "refused-then-valid":
        out = []
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        for what, f in (("first", datafile), ("second", sys.argv[4])):
            with open(f, "rb") as fh:
                os.write(fd, fh.read())
            attempt(out, what, os.fsync, fd)
        attempt(out, "close", os.close, fd)
        print(" ".join(out))
        return 0
    with open(datafile, "rb") as f:
        data = f.read()
    flags = {"new": os.O_WRONLY | os.O_CREAT | os.O_TRUNC, "trunc": os.O_WRONLY | os.O_TRUNC,
             "append": os.O_WRONLY | os.O_APPEND, "fsync-retry": os.O_WRONLY | os.O_APPEND}[mode]
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as ex:
        print(res("open", ex))
        return 0
    if mode == "fsync-retry":
        out = []
        try:
            os.write(fd, data)
        except OSError as ex:
            print("write: " + res("write", ex))
            os.close(fd)
            return 0
        for i, what in enumerate(("first", "second")):
            if i == 1:
                subprocess.run(sys.argv[4], shell=True, check=False)
            attempt(out, what, os.fsync, fd)
        attempt(out, "close", os.close, fd)
        print(" ".join(out))
        return 0
    stage = "write"
    try:
        off = 0
        while off < len(data):
            off += os.write(fd, data[off:])
        if "--fsync" in sys.argv[4:]:
            stage = "fsync"
            os.fsync(fd)
        stage = "close"
        f, fd = fd, None
        os.close(f)
    except OSError as ex:
        print(res(stage, ex))
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
        return 0
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
