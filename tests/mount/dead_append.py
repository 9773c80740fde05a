# Leaves a session file as a daemon killed inside its write() leaves it:
# the first PART bytes of LINE appended, and the record of the append
# beside the file, unlocked (its writer is dead).  The record is written
# here in the format src/recover.c reads (magic, ten numbers, the name, the
# first bytes, a hash per 4 KiB piece of the file, the newline offsets, a
# hash of the whole record), so a test can make a repairable store without
# killing a daemon at the right moment.
#
#     python3 dead_append.py SESSION.jsonl LINE-FILE PART
#
# Prints the record's path.
import os
import sys

MAGIC = b"PSFSINT1"
VERSION = 1
CHUNK = 4096
HEAD = 256
MASK = (1 << 64) - 1


def le64(v):
    return (v & MASK).to_bytes(8, "little")


def record_hash(data):
    """recover_hash: word at a time, multiply and rotate."""
    k = 0x9E3779B97F4A7C15
    n = len(data)
    h = (n * k) & MASK
    whole = n - n % 8
    for i in range(0, whole, 8):
        h = ((h ^ int.from_bytes(data[i:i + 8], "little")) * k) & MASK
        h = ((h << 31) | (h >> 33)) & MASK
    last = int.from_bytes(data[whole:], "little") if whole < n else 0
    h = ((h ^ last) * k) & MASK
    h ^= h >> 29
    h = (h * k) & MASK
    h ^= h >> 32
    return h


def record(name, st, start, data):
    newlines = [i for i, c in enumerate(data) if c == 0x0A]
    pieces = (start + len(data) + CHUNK - 1) // CHUNK - start // CHUNK if data else 0
    head = min(len(data), HEAD)
    out = bytearray(MAGIC)
    for v in (VERSION, st.st_dev, st.st_ino, start, len(data), CHUNK, pieces, len(newlines), head,
              len(name)):
        out += le64(v)
    out += name + data[:head]
    off = start
    while off < start + len(data):
        nxt = min((off // CHUNK + 1) * CHUNK, start + len(data))
        out += le64(record_hash(data[off - start:nxt - start]))
        off = nxt
    for i in newlines:
        out += le64(i)
    out += le64(record_hash(bytes(out)))
    return bytes(out)


def main():
    session, line_file, part = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(line_file, "rb") as f:
        data = f.read()
    if not 0 < part < len(data):
        sys.exit("PART must be inside the line")
    st = os.stat(session)
    directory, name = os.path.split(os.path.abspath(session))
    path = os.path.join(directory, ".pisessionfs-intent.%d.dead01" % st.st_ino)
    with open(path, "wb") as f:
        f.write(record(os.fsencode(name), st, st.st_size, data))
    with open(session, "ab") as f:
        f.write(data[:part])
    print(path)


main()
