# Checks the lines appended to a session file (the write tests use it).
import json, re, sys, time
from datetime import datetime, timezone
path, base, expected = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
raw = open(path, "rb").read()
errors = []
if not raw.endswith(b"\n"):
    errors.append("the file does not end with a newline")
lines = raw.split(b"\n")[:-1] if raw.endswith(b"\n") else raw.split(b"\n")
old, new = lines[:base], lines[base:]
def ident(line):
    try:
        v = json.loads(line)
        return v.get("id") if isinstance(v, dict) else None
    except ValueError:
        return None
old_ids = {ident(l) for l in old}
now = time.time()
if len(new) != len(expected):
    print(f"expected {len(expected)} appended line(s), got {len(new)}: " +
          " | ".join(l.decode("utf-8", "replace")[:300] for l in new))
    sys.exit(1)
ids = []
objs = []
for raw_line in new:
    try:
        objs.append(json.loads(raw_line, object_pairs_hook=lambda kv: dict(kv)))
    except ValueError as e:
        print(f"an appended line is not JSON ({e}): {raw_line[:300]!r}")
        sys.exit(1)
    ids.append(objs[-1].get("id") if isinstance(objs[-1], dict) else None)
def check(a, e, where):
    if isinstance(e, str) and e.startswith("@"):
        if e == "@id":
            if not (isinstance(a, str) and re.fullmatch(r"[0-9a-f]{8}", a)):
                errors.append(f"{where}: {a!r} is not an 8-hex id")
            elif a in old_ids or ids.count(a) > 1:
                errors.append(f"{where}: id {a} is not unique")
        elif e == "@ts":
            ok = isinstance(a, str) and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", a)
            if ok:
                t = datetime.strptime(a, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
                ok = abs(t - now) < 300
            if not ok:
                errors.append(f"{where}: {a!r} is not an ISO timestamp of now")
        elif e == "@ms":
            if not (type(a) is int and abs(a / 1000 - now) < 300):
                errors.append(f"{where}: {a!r} is not Unix ms of now")
        elif e == "@int":
            if type(a) is not int:
                errors.append(f"{where}: {a!r} is not an integer")
        elif e.startswith("@new"):
            k = int(e[4:])
            if a != ids[k]:
                errors.append(f"{where}: {a!r} is not the id of appended line {k} ({ids[k]!r})")
        else:
            raise SystemExit(f"bad placeholder {e}")
    elif isinstance(e, dict):
        if not isinstance(a, dict):
            errors.append(f"{where}: expected an object, got {a!r}")
            return
        for k in e:
            if k not in a:
                errors.append(f"{where}: missing key {k!r}")
        for k in a:
            if k not in e:
                errors.append(f"{where}: unexpected key {k!r} = {a[k]!r}")
        for k in e:
            if k in a:
                check(a[k], e[k], f"{where}.{k}")
    elif isinstance(e, list):
        if not isinstance(a, list) or len(a) != len(e):
            errors.append(f"{where}: expected {e!r}, got {a!r}")
            return
        for i, (x, y) in enumerate(zip(a, e)):
            check(x, y, f"{where}[{i}]")
    elif type(a) is not type(e) or a != e:
        errors.append(f"{where}: expected {e!r}, got {a!r}")
for i, (a, e) in enumerate(zip(objs, expected)):
    if isinstance(a, dict) and list(a)[:4] != ["type", "id", "parentId", "timestamp"]:
        errors.append(f"line {i}: keys start {list(a)[:4]}, not type, id, parentId, timestamp")
    check(a, e, f"line {i}")
if errors:
    print("; ".join(errors) + " | appended: " + " | ".join(l.decode("utf-8", "replace")[:400] for l in new))
    sys.exit(1)
print(" ".join(str(i) for i in ids))
