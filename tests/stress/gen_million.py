#!/usr/bin/env python3
"""Writes one very long pi session (t_million.sh) and what its mount must show.

    gen_million.py FILE ENTRIES MANIFEST

FILE gets a version-3 header and ENTRIES entries (at least 20,000), about
200 bytes a line, in pi's key order:

* model_change and thinking_level_change, then a main line of 2,000
  messages (user, assistant, toolResult, assistant, ...);
* a fork from the main line's 1,500th message: the "big run", labelled
  "bigrun" on its first entry, which holds nearly every entry and ends at
  the leaf;
* every 100,000 entries of the run, a side branch of 3 messages from an
  entry 10 back in the run (its first child is already written, so the run
  keeps its directory), after which the run goes on from its own tip;
* every 250,000 entries a label entry in the run (labels/mark-N), a
  session_info name near the end, and one compaction about 5,000 entries
  before the end whose firstKeptEntryId is a user message 20 entries
  before it.

MANIFEST (JSON) says what the mount must show, computed here from the
structure, independently of the daemon: the run's directory name and
listing count, the leaf, and the leaf's context (message count, the first
and last messages).
"""
import json
import sys
import time


def main():
    path, total, manifest = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if total < 20000:
        sys.exit("at least 20,000 entries")
    out = open(path, "w", buffering=1 << 22)
    w = out.write
    t0 = 1767225600000  # 2026-01-01T00:00:00Z in ms
    n = 0  # entries written

    def ts(k):
        ms = t0 + k * 997
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000), ms

    def head(kind, parent):
        nonlocal n
        eid = "%08x" % (0x10000000 + n)
        iso, ms = ts(n)
        n += 1
        p = "null" if parent is None else '"%s"' % parent
        return eid, '{"type":"%s","id":"%s","parentId":%s,"timestamp":"%s"' % (kind, eid, p, iso), ms

    # One entry of the cycle: user, assistant (a tool call), tool result,
    # and an extension's custom entry (state, no message); returns (id,
    # role, text), role None for the custom entry.
    def message(parent, k):
        r = k % 4
        eid, h, ms = head("custom" if r == 3 else "message", parent)
        if r == 0:
            role, text = "user", "fix %d" % k
            w('%s,"message":{"role":"user","content":"%s","timestamp":%d}}\n' % (h, text, ms))
        elif r == 1:
            role, text = "assistant", None
            w('%s,"message":{"role":"assistant","content":[{"type":"toolCall","id":"c%d","name":"bash","arguments":{"c":"make"}}],'
              '"api":"x","provider":"p","model":"m","usage":{"input":%d,"output":9,"cacheRead":0,"cacheWrite":0,"totalTokens":%d,'
              '"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":%d}}\n'
              % (h, k, k % 100, k % 100 + 9, ms))
        elif r == 2:
            role, text = "toolResult", "ok%d" % (k % 1000)
            w('%s,"message":{"role":"toolResult","toolCallId":"c%d","toolName":"bash","content":[{"type":"text","text":"%s"}],"isError":false,"timestamp":%d}}\n'
              % (h, k - 1, text, ms))
        else:
            role, text = None, None
            w('%s,"customType":"t","data":{"n":%d}}\n' % (h, k % 1000))
        return eid, role, text

    w('{"type":"session","version":3,"id":"00000000-0000-7000-8000-00000000a11f","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/million"}\n')
    eid, h, _ = head("model_change", None)
    w('%s,"provider":"p","modelId":"m"}\n' % h)
    eid, h, _ = head("thinking_level_change", eid)
    w('%s,"thinkingLevel":"medium"}\n' % h)
    depth = 2
    parent = eid
    main_ids = []
    for k in range(2000):
        parent, _, _ = message(parent, k)
        main_ids.append(parent)
    fork_from = main_ids[1499]
    run_depth = 2 + 1500 + 1  # depth of the run's first entry

    # The run.  path_msgs counts messages on the leaf's path from the run's
    # start; the compaction keeps what lies between firstKept and itself.
    tip, _, _ = message(fork_from, 4 * 1000)  # a user message
    tip_kind = "user"
    run_len = 1
    path_msgs = 1
    eid, h, _ = head("label", tip)
    w('%s,"targetId":"%s","label":"bigrun"}\n' % (h, tip))
    tip = eid
    run_len += 1
    compact_at = total - 5000
    name_at = total - 100
    run = []  # the run's last 20 entries: (id, is_user)
    k = 1
    side = 0
    labels = 0
    first_kept = None
    kept_msgs = after_msgs = 0
    compacted = named = False
    next_label, next_side = 250000, 50000
    last = None
    while n < total:
        done = n
        if not compacted and done >= compact_at:
            first_kept, kept_from = next((e, c) for e, u, c in run if u)
            kept_msgs = path_msgs - kept_from
            eid, h, _ = head("compaction", tip)
            w('%s,"summary":"Everything before %s, summarised.","firstKeptEntryId":"%s","tokensBefore":123456}\n' % (h, first_kept, first_kept))
            tip, compacted = eid, True
            run_len += 1
            run.clear()
            continue
        if not named and done >= name_at:
            named = True
            eid, h, _ = head("session_info", tip)
            w('%s,"name":"A million entries"}\n' % h)
            tip = eid
            run_len += 1
            continue
        if done >= next_label and done < compact_at - 10:
            next_label += 250000
            labels += 1
            eid, h, _ = head("label", tip)
            w('%s,"targetId":"%s","label":"mark-%d"}\n' % (h, tip, labels))
            tip = eid
            run_len += 1
            continue
        if done >= next_side and len(run) >= 10 and done < compact_at - 10:
            next_side += 100000
            side += 1
            p = run[-10][0]
            for j in range(3):
                p, _, _ = message(p, 4 * (side * 10 + j))  # off the path
            continue
        eid, role, text = message(tip, k)
        k += 1
        tip = eid
        tip_kind = role or "custom"
        run_len += 1
        if role:
            path_msgs += 1
            after_msgs += compacted
            last = (eid, role, text)
            run.append((eid, role == "user", path_msgs - 1))
            if len(run) > 20:
                run.pop(0)
    out.close()
    if last is None or not compacted:
        sys.exit("generator: the run must end after the compaction")
    leaf_depth = run_depth + run_len - 1
    json.dump({
        "entries": n,
        "run_dir": "%04d~bigrun" % run_depth,
        "run_first_depth": run_depth,
        # entry files of the run, its side branches, context.json (a fork's
        # transcript.md answers by name only)
        "run_listing": run_len + side + 1,
        "run_entries": run_len,
        "side_branches": side,
        "labels": ["bigrun"] + ["mark-%d" % i for i in range(1, labels + 1)],
        "leaf_id": tip,
        "leaf_name": "%04d-%s.%s.md" % (leaf_depth, tip_kind, tip),
        "context_messages": 1 + kept_msgs + after_msgs,
        "first_kept": first_kept,
        "last_id": last[0],
        "last_role": last[1],
        # the text of a user message or a tool result; None for a tool call
        "last_text": last[2],
        "name": "A million entries",
    }, open(manifest, "w"), indent=1)


if __name__ == "__main__":
    main()
