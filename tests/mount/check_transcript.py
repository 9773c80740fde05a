# Checks that a tree directory's transcript.md holds what its context.json
# sends to the model, in the same order, without the daemon's code: every
# text of every message (user and custom text, assistant text and
# thinking, tool results, bash output, system prompt sections, compaction
# and branch summaries) must be found in the transcript as whole lines,
# each message after the one before it.
#
# The compaction summary is the exception: pi sends it first, but the
# transcript shows it where the compaction happened, after the messages the
# compaction kept; it must be there, anywhere.  Thinking is shown as a
# blockquote ("> " before each line, ">" alone for an empty one), and a lone
# UTF-16 surrogate as U+FFFD, as docs/layout.md and transcript.h say.
#
# usage: check_transcript.py DIR...   (each DIR holds context.json and
# transcript.md).  Prints "messages N texts M" over all DIRs and exits 0,
# or prints the first problems and exits 1.
import json, os, re, sys

SURROGATE = re.compile("[\ud800-\udfff]")


def clean(text):
    # the lines a text occupies: leading and trailing newlines are layout
    return SURROGATE.sub("\ufffd", text).strip("\n")


def quote(text):
    return "\n".join("> " + l if l else ">" for l in text.split("\n"))


def block_texts(content, kinds=("text",)):
    if isinstance(content, str):
        return [content]
    out = []
    for b in content if isinstance(content, list) else []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text" and "text" in kinds and isinstance(b.get("text"), str):
            out.append(b["text"])
        elif b.get("type") == "thinking" and "thinking" in kinds and isinstance(b.get("thinking"), str):
            out.append(("quote", b["thinking"]))
    return out


def texts_of(msg):
    role = msg.get("role")
    if role in ("user", "custom", "toolResult"):
        found = block_texts(msg.get("content"))
    elif role == "assistant":
        found = block_texts(msg.get("content"), ("text", "thinking"))
    elif role == "bashExecution":
        found = [msg.get("output")]
    elif role in ("branchSummary", "compactionSummary"):
        found = [msg.get("summary")]
    elif role == "system":
        found = [msg.get("content")] + list((msg.get("sections") or {}).values())
    else:
        raise SystemExit(f"a role this check does not know: {role!r}")
    out = []
    for t in found:
        if isinstance(t, tuple):
            t = clean(t[1])
            if t:
                out.append(quote(t))
        elif isinstance(t, str) and clean(t):
            out.append(clean(t))
    return out


errors = []
n_msgs = n_texts = 0
for d in sys.argv[1:]:
    with open(os.path.join(d, "context.json"), encoding="utf-8") as f:
        messages = json.load(f)["messages"]
    with open(os.path.join(d, "transcript.md"), "rb") as f:
        transcript = "\n" + f.read().decode("utf-8") + "\n"
    cursor = 0
    for i, msg in enumerate(messages):
        texts = texts_of(msg)
        n_msgs += 1
        if msg.get("role") == "compactionSummary":
            for t in texts:
                n_texts += 1
                if "\n" + t + "\n" not in transcript:
                    errors.append(f"{d}: message {i} (compaction summary) is not in the transcript")
            continue
        for t in texts:
            n_texts += 1
            at = transcript.find("\n" + t + "\n", cursor)
            if at < 0:
                where = "at all" if ("\n" + t + "\n") not in transcript else "after the message before it"
                errors.append(f"{d}: message {i} ({msg.get('role')}) text {t[:60]!r} is not in the "
                              f"transcript {where}")
                break
            cursor = at + 1 + len(t)
if errors:
    print("\n".join(errors[:10]))
    sys.exit(1)
print(f"messages {n_msgs} texts {n_texts}")
