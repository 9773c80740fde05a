#!/usr/bin/env python3
"""Kills a process with SIGKILL while it is in the middle of writing.

    sniper.py PID FILE SECONDS
    sniper.py PID DIR SECONDS PATTERN

Watches FILE's size in a tight loop; the moment it grows (the daemon's one
write() of a huge entry is being copied in, page by page), sends SIGKILL to
PID.  With a DIR and a PATTERN: the moment a name containing PATTERN
appears in DIR (the temporary file of a migration).  Gives up after
SECONDS.  Prints one line: "killed size_before=N size_at_kill=M",
"killed NAME appeared", or "timeout ...".
"""

import os
import signal
import sys
import time


def main():
    pid, path, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    if len(sys.argv) > 4:
        pattern = sys.argv[4]
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for n in os.listdir(path):
                if pattern in n:
                    os.kill(pid, signal.SIGKILL)
                    print("killed %s appeared" % n)
                    return 0
        print("timeout: no name with %s appeared" % pattern)
        return 0
    base = os.stat(path).st_size
    end = time.monotonic() + seconds
    n = 0
    while True:
        size = os.stat(path).st_size
        if size != base:
            os.kill(pid, signal.SIGKILL)
            print("killed size_before=%d size_at_kill=%d" % (base, size))
            return 0
        n += 1
        if n % 1000 == 0 and time.monotonic() > end:
            print("timeout size=%d" % size)
            return 0


if __name__ == "__main__":
    sys.exit(main())
