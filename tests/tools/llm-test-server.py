#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat server for testing r3's LLM client.

Usage:
  llm-test-server.py --script SCRIPT.json --port-file PORTFILE --log LOG.jsonl
                     [--expect-key KEY]

It listens on 127.0.0.1 at a port the system picks, writes that port to
PORTFILE (atomically, once it listens) and serves until SIGTERM or SIGINT:
POST /v1/chat/completions (or /chat/completions) and GET /v1/models.

SCRIPT.json is {"replies": [STEP, ...], "default": STEP}. Each POST takes
the next step in arrival order; once they are spent, the default (or, with
none, a completion saying "no more scripted replies"). A STEP holds any of:

  "content": TEXT, or "content_file": PATH (relative to the script's folder)
      a 200 chat.completion with that content; its usage is
      "prompt_tokens" / "completion_tokens" if given, else chars / 4
  "status": CODE, "retry_after": SECONDS or HTTP-DATE, "message": TEXT
      that status with an OpenAI-style error body (and Retry-After header)
  "delay": SECONDS   sleep before replying (to exceed a client's timeout)
  "truncate": true   a 200 whose JSON body is cut in half
  "drop": true       close the connection without any response
  "tag": NAME        copied to the log

LOG.jsonl gets one JSON object per POST, flushed at once: arrival and reply
times (time.time()), the step's index ("default" past the list), tag, kind,
status, retry_after, the X-R3-Request and X-R3-Attempt headers, the model,
"auth" ("ok", "missing" or "wrong" against --expect-key; the key itself is
never logged), the number of messages and their total characters. "replied"
is taken as the response starts out, after any delay. A POST still in its
delay when the server stops is logged as it stops, with kind "unreplied" and
"replied" null: its arrival counts even when the client gave up on it. A
body that is not a chat request gets a 400 (kind "bad_request"), another
path a 404 (kind "not_found"); neither takes a step.

Every response closes its connection (HTTP/1.0), so that a client never
re-sends a request on a reused connection and each attempt takes one step.
"""

import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    """The steps, taken one per request in arrival order."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        self.folder = os.path.dirname(os.path.abspath(path))
        self.replies = data.get("replies", [])
        self.default = data.get("default")
        self.next = 0
        self.lock = threading.Lock()

    def take(self):
        with self.lock:
            index = self.next
            self.next += 1
        if index < len(self.replies):
            return index, self.replies[index]
        if self.default is not None:
            return "default", self.default
        return "default", {"content": "no more scripted replies"}

    def content(self, step):
        if "content_file" in step:
            path = os.path.join(self.folder, step["content_file"])
            with open(path, encoding="utf-8") as f:
                return f.read()
        return step.get("content", "")


def completion(model, content, step, prompt_chars):
    """A chat.completion; usage as the step says, else chars / 4."""
    prompt = step.get("prompt_tokens", (prompt_chars + 3) // 4)
    done = step.get("completion_tokens", (len(content) + 3) // 4)
    return {
        "id": "chatcmpl-test-%d" % time.time_ns(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop",
        }],
        "usage": {"prompt_tokens": prompt, "completion_tokens": done,
                  "total_tokens": prompt + done},
    }


def error_body(status, message):
    kind = ("rate_limit_error" if status == 429 else
            "invalid_request_error" if status < 500 else "server_error")
    return {"error": {"message": message, "type": kind, "code": status}}


def parse_request(body):
    """The request's model and messages, or None when it is not one."""
    try:
        request = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(request, dict) or not isinstance(
            request.get("model"), str):
        return None
    messages = request.get("messages")
    if not isinstance(messages, list) or not all(
            isinstance(m, dict) and isinstance(m.get("content"), str)
            for m in messages):
        return None
    return request["model"], messages


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    server_version = "llm-test-server/1"

    def log_message(self, format, *args):  # keep stderr quiet
        pass

    def auth(self):
        header = self.headers.get("Authorization")
        if header is None:
            return "missing"
        expected = self.server.expect_key
        if expected is None or header == "Bearer " + expected:
            return "ok"
        return "wrong"

    def send_json(self, status, obj, headers=(), cut=False):
        body = json.dumps(obj).encode("utf-8")
        if cut:
            body = body[:len(body) // 2]
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_GET(self):
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            models = [{"id": m, "object": "model", "owned_by": "test"}
                      for m in self.server.models]
            self.send_json(200, {"object": "list", "data": models})
        else:
            self.send_json(404, error_body(404, "no such path"))

    def do_POST(self):
        arrived = time.time()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        known = self.path.rstrip("/") in ("/v1/chat/completions",
                                          "/chat/completions")
        parsed = parse_request(body) if known else None
        entry = {
            "arrived": arrived, "step": None, "tag": None,
            "status": None, "retry_after": None,
            "request": self.headers.get("X-R3-Request"),
            "attempt": self.header_int("X-R3-Attempt"),
            "model": parsed[0] if parsed else None, "auth": self.auth(),
            "messages": len(parsed[1]) if parsed else 0,
            "prompt_chars": sum(len(m["content"]) for m in parsed[1])
            if parsed else 0,
        }
        if parsed is None:
            status, why = ((400, "the body is not a chat request") if known
                           else (404, "no such path: " + self.path))
            entry.update(kind="bad_request" if known else "not_found",
                         status=status)
            self.reply_safely(entry, lambda: self.send_json(
                status, error_body(status, why)))
            return
        index, step = self.server.script.take()
        entry.update(step=index, tag=step.get("tag"))
        self.server.begin(entry)
        time.sleep(float(step.get("delay", 0)))
        self.reply_safely(entry, lambda: self.answer(step, entry))

    def header_int(self, name):
        value = self.headers.get(name)
        return int(value) if value and value.isdigit() else value

    def answer(self, step, entry):
        if step.get("drop"):
            entry.update(kind="drop")
            self.close_connection = True
            return
        if "status" in step:
            status, after = int(step["status"]), step.get("retry_after")
            entry.update(kind="status", status=status, retry_after=after)
            headers = [] if after is None else [("Retry-After", str(after))]
            message = step.get("message", "scripted status %d" % status)
            self.send_json(status, error_body(status, message), headers)
            return
        content = self.server.script.content(step)
        reply = completion(entry["model"], content, step,
                           entry["prompt_chars"])
        cut = bool(step.get("truncate"))
        entry.update(kind="truncate" if cut else "content", status=200)
        self.send_json(200, reply, cut=cut)

    def reply_safely(self, entry, reply):
        """Replies (a client that gave up is no error here), then logs."""
        entry["replied"] = time.time()
        try:
            reply()
        except OSError:
            pass
        self.server.write_log(entry)


class Server(ThreadingHTTPServer):
    daemon_threads = True  # a sleeping "delay" must not hold up shutdown

    def __init__(self, script, log_path, expect_key):
        super().__init__(("127.0.0.1", 0), Handler)
        self.script = script
        self.expect_key = expect_key
        self.models = ["test-model"]
        self.log = open(log_path, "a", encoding="utf-8")
        self.log_lock = threading.Lock()
        self.unreplied = {}  # id(entry) -> entry of a POST in its delay

    def begin(self, entry):
        with self.log_lock:
            self.unreplied[id(entry)] = entry

    def write_log(self, entry):
        with self.log_lock:
            self.unreplied.pop(id(entry), None)
            if not self.log.closed:
                self.log.write(json.dumps(entry) + "\n")
                self.log.flush()

    def close_log(self):
        """Logs the POSTs still in their delay, then closes the log."""
        with self.log_lock:
            for entry in self.unreplied.values():
                entry.update(kind="unreplied", replied=None)
                self.log.write(json.dumps(entry) + "\n")
            self.unreplied.clear()
            self.log.close()


def write_port(path, port):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("%d\n" % port)
    os.replace(tmp, path)


def stop(signum, frame):
    raise SystemExit(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--expect-key")
    args = parser.parse_args()
    server = Server(Script(args.script), args.log, args.expect_key)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    write_port(args.port_file, server.server_address[1])
    try:
        server.serve_forever()
    finally:
        server.server_close()
        server.close_log()
    return 0


if __name__ == "__main__":
    sys.exit(main())
