# Checks the image links of a mounted session directory against the raw
# session file, without the daemon's code: every "![image N](TARGET)" line
# of every *.md file under DIR (entry files and transcript.md) must reach,
# read as a Markdown viewer reads it (TARGET URL-decoded, relative to the
# directory the .md file was found in, not its real path), a file whose
# bytes are the base64-decoded data of image N of the entry the target's
# "<entry file>.images" directory names.  An entry file must link each of
# its entry's images once, in order.
#
# usage: check_image_links.py SESSION.jsonl DIR
# Prints "entry-links N transcript-links M" and exits 0, or prints the
# problems and exits 1.
import base64, json, os, re, sys
from urllib.parse import unquote

jsonl, top = sys.argv[1], sys.argv[2]
LINK = re.compile(r"^!\[image (\d+)\]\(([^()\s]*)\)$")
ENTRY = re.compile(r"^\d{4,}-[^.]+\.(.+)\.md$")


def unescape(name):
    # the mount writes every byte outside A-Z a-z 0-9 _ - as %XX
    return re.sub(rb"%([0-9A-F]{2})", lambda m: bytes([int(m.group(1), 16)]),
                  name.encode()).decode("utf-8")


images = {}  # entry id -> [(mimeType, bytes)] of its image blocks with files
with open(jsonl, encoding="utf-8") as f:
    for line in f:
        e = json.loads(line)
        if e.get("type") == "message" and isinstance(e.get("message"), dict):
            content = e["message"].get("content")
        elif e.get("type") == "custom_message":
            content = e.get("content")
        else:
            content = None
        if not isinstance(content, list):
            continue
        imgs = [b for b in content if isinstance(b, dict) and b.get("type") == "image"
                and isinstance(b.get("data"), str)]
        images[e.get("id")] = [(b.get("mimeType"), base64.b64decode(b["data"], validate=True))
                               for b in imgs]

errors = []
counts = {"entry": 0, "transcript": 0}
for d, dirs, files in os.walk(top):
    dirs.sort()
    # A fork's transcript.md answers by name only (docs/layout.md).
    if re.match(r"^\d{4,}~", os.path.basename(d)) and "transcript.md" not in files \
            and os.path.exists(os.path.join(d, "transcript.md")):
        files.append("transcript.md")
    for name in sorted(files):
        if not name.endswith(".md"):
            continue
        path = os.path.join(d, name)
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        links = [(i + 1, LINK.match(l)) for i, l in enumerate(lines)]
        links = [(i, m) for i, m in links if m]
        m = ENTRY.match(name)
        if m:
            own = images.get(unescape(m.group(1)), [])
            got = [int(x.group(1)) for _, x in links]
            if got != list(range(1, len(own) + 1)):
                errors.append(f"{path}: links images {got}, the entry has {len(own)}")
        for lineno, x in links:
            n, target = int(x.group(1)), x.group(2)
            where = f"{path}:{lineno}"
            parts = unquote(target).split("/")
            if len(parts) < 2 or not parts[-2].endswith(".images"):
                errors.append(f"{where}: {target} is not in an .images directory")
                continue
            em = ENTRY.match(parts[-2][: -len(".images")] + ".md")
            entry = unescape(em.group(1)) if em else None
            want = images.get(entry)
            if not want or n > len(want) or not parts[-1].startswith(f"{n}."):
                errors.append(f"{where}: {target} names no image {n} of an entry ({entry!r})")
                continue
            file = os.path.join(d, unquote(target))
            try:
                with open(file, "rb") as f:
                    data = f.read()
            except OSError as err:
                errors.append(f"{where}: {target} does not resolve from {d}: {err}")
                continue
            if data != want[n - 1][1]:
                errors.append(f"{where}: {target} is not the decoded data of image {n} of {entry}")
            counts["entry" if m else "transcript"] += 1

if errors:
    print("\n".join(errors[:20]))
    sys.exit(1)
print(f"entry-links {counts['entry']} transcript-links {counts['transcript']}")
