#!/usr/bin/env python3
"""A scripted, fake OpenAI-compatible chat completions server for
tests/interop/run.sh.

    fake_openai.py --dir DIR [--timeout SECONDS]

Listens on 127.0.0.1, on a free port chosen by the kernel, and writes that
port to DIR/port once it accepts connections.  Answers

    POST /v1/chat/completions

with a text/event-stream of chat.completion.chunk objects, and records every
request: DIR/requests.jsonl gets one line per request, {"n", "path", "body"}
(body parsed as JSON when it is JSON), in arrival order.  Anything else gets
a 404 (also recorded).

The answer is scripted from the request itself, so it does not depend on how
many requests came before:

* the last message is a user message whose text holds [[bash:COMMAND]]:
  one tool call, bash with {"command": COMMAND}, finish_reason "tool_calls";
* otherwise: the text "ANSWER-N" (N = the request's 1-based number), sent in
  two content deltas, finish_reason "stop".

Every stream ends with a chunk holding finish_reason and usage, then
"data: [DONE]".  The server exits by itself after --timeout seconds (default
300), on SIGTERM or SIGINT, and never runs unbounded.
"""

import argparse
import json
import os
import re
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOOL_RE = re.compile(r"\[\[bash:(.*?)\]\]", re.S)


def message_text(msg):
    """The text of an OpenAI chat message (string or list-of-parts content)."""
    content = msg.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class State:
    def __init__(self, directory):
        self.dir = directory
        self.lock = threading.Lock()
        self.count = 0

    def record(self, path, raw):
        try:
            body = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            body = raw.decode("utf-8", "replace")
        with self.lock:
            self.count += 1
            n = self.count
            with open(os.path.join(self.dir, "requests.jsonl"), "a", encoding="utf-8") as f:
                f.write(json.dumps({"n": n, "path": path, "body": body}) + "\n")
                f.flush()
                os.fsync(f.fileno())
        return n, body


def make_handler(state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # quiet: the test prints its own lines
            pass

        def _read_body(self):
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length > 0 else b""

        def _not_found(self):
            state.record(self.path, self._read_body())
            data = b'{"error":{"message":"not found"}}'
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self._not_found()

        def do_POST(self):
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._not_found()
                return
            n, body = state.record(self.path, self._read_body())
            messages = body.get("messages", []) if isinstance(body, dict) else []
            model = body.get("model", "fake-1") if isinstance(body, dict) else "fake-1"
            last = messages[-1] if messages else {}
            m = TOOL_RE.search(message_text(last)) if last.get("role") == "user" else None

            base = {
                "id": "chatcmpl-fake-%d" % n,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
            }
            chunks = []

            def chunk(delta, finish=None, usage=None):
                c = dict(base)
                c["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
                if usage is not None:
                    c["usage"] = usage
                chunks.append(c)

            usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
            if m:
                args = json.dumps({"command": m.group(1)})
                chunk({"role": "assistant", "content": None, "tool_calls": [{
                    "index": 0, "id": "call_fake_%d" % n, "type": "function",
                    "function": {"name": "bash", "arguments": ""}}]})
                half = len(args) // 2
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[:half]}}]})
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[half:]}}]})
                chunk({}, "tool_calls", usage)
            else:
                chunk({"role": "assistant", "content": "ANSWER"})
                chunk({"content": "-%d" % n})
                chunk({}, "stop", usage)

            payload = b"".join(
                b"data: " + json.dumps(c).encode("utf-8") + b"\n\n" for c in chunks
            ) + b"data: [DONE]\n\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
            self.close_connection = True

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args()

    state = State(args.dir)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    server.daemon_threads = True

    def stop(*_):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    timer = threading.Timer(args.timeout, stop)
    timer.daemon = True
    timer.start()

    port_file = os.path.join(args.dir, "port")
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(port_file + ".tmp", port_file)

    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
