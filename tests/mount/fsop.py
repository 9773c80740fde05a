# One file-system call, printing ok or CALL:ERRNO (the write tests use it).
import errno, os, sys
op, args = sys.argv[1], sys.argv[2:]
step = op
try:
    if op in ("write", "append", "fsync", "excl"):
        path, src = args
        data = open(src, "rb").read()
        flags = os.O_WRONLY | {"write": os.O_CREAT | os.O_TRUNC, "fsync": os.O_CREAT | os.O_TRUNC,
                               "append": os.O_APPEND, "excl": os.O_CREAT | os.O_EXCL}[op]
        step = "open"
        fd = os.open(path, flags, 0o644)
        try:
            step = "write"
            n = 0
            while n < len(data):
                n += os.write(fd, data[n:])
            if op == "fsync":
                step = "fsync"
                os.fsync(fd)
        except OSError:
            try:
                os.close(fd)
            except OSError:
                pass
            raise
        step = "close"
        os.close(fd)
    elif op == "pwrite":
        path, off, text = args
        step = "open"
        fd = os.open(path, os.O_WRONLY)
        try:
            step = "pwrite"
            os.pwrite(fd, text.encode(), int(off))
        except OSError:
            os.close(fd)
            raise
        step = "close"
        os.close(fd)
    elif op == "openw":
        path, mode = args
        flags = {"trunc": os.O_WRONLY | os.O_TRUNC, "w": os.O_WRONLY, "a": os.O_WRONLY | os.O_APPEND}[mode]
        step = "open"
        fd = os.open(path, flags)
        step = "close"
        os.close(fd)
    elif op == "unlink":
        os.unlink(args[0])
    elif op == "rmdir":
        os.rmdir(args[0])
    elif op == "mkdir":
        os.mkdir(args[0])
    elif op == "rename":
        os.rename(args[0], args[1])
    elif op == "symlink":
        os.symlink(args[0], args[1])
    elif op == "chmod":
        os.chmod(args[0], int(args[1], 8))
    elif op == "chown":
        os.chown(args[0], int(args[1]), int(args[2]))
    elif op == "truncate":
        os.truncate(args[0], int(args[1]))
    elif op == "setxattr":
        os.setxattr(args[0], args[1], args[2].encode())
    elif op == "setacl":
        # a valid access ACL (u::rw-, g::r--, o::r--), as setfacl writes it
        import struct
        acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, 0xFFFFFFFF) for t, p in ((1, 6), (4, 4), (0x20, 4)))
        os.setxattr(args[0], "system.posix_acl_access", acl)
    else:
        raise SystemExit("unknown op " + op)
    print("ok")
except OSError as e:
    name = "EOPNOTSUPP" if e.errno == errno.EOPNOTSUPP else errno.errorcode.get(e.errno, e.errno)
    print(f"{step}:{name}")
