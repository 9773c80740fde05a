# Counts the inotify events a change produces in each watched directory.
#
#     python3 inotify_probe.py SECONDS DIR... -- SHELL-COMMAND
#
# Watches every DIR (all events), runs SHELL-COMMAND with bash, waits
# SECONDS for events to arrive, and prints one line "COUNT DIR" per DIR.
# Exit status 2 when a watch cannot be set up or the command fails.
import ctypes
import os
import struct
import subprocess
import sys
import time

IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
IN_ALL_EVENTS = 0x00000FFF

args = sys.argv[1:]
if "--" not in args or args.index("--") < 2:
    sys.exit("usage: inotify_probe.py SECONDS DIR... -- SHELL-COMMAND")
cut = args.index("--")
wait, dirs, command = float(args[0]), args[1:cut], " ".join(args[cut + 1:])

libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
if fd < 0:
    print(f"inotify_init1: {os.strerror(ctypes.get_errno())}")
    sys.exit(2)
dir_of = {}
for d in dirs:
    wd = libc.inotify_add_watch(fd, os.fsencode(d), IN_ALL_EVENTS)
    if wd < 0:
        print(f"inotify_add_watch {d}: {os.strerror(ctypes.get_errno())}")
        sys.exit(2)
    dir_of[wd] = d

if subprocess.run(["bash", "-c", command]).returncode != 0:
    print(f"the change failed: {command}")
    sys.exit(2)

counts = {d: 0 for d in dirs}
end = time.monotonic() + wait
while time.monotonic() < end:
    try:
        buf = os.read(fd, 65536)
    except BlockingIOError:
        time.sleep(0.02)
        continue
    off = 0
    while off + 16 <= len(buf):
        wd, mask, cookie, n = struct.unpack_from("iIII", buf, off)
        off += 16 + n
        if wd in dir_of:
            counts[dir_of[wd]] += 1
for d in dirs:
    print(f"{counts[d]} {d}")
