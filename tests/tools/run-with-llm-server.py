#!/usr/bin/env python3
"""Runs a command beside r3's scripted LLM test server.

Usage:
  run-with-llm-server.py --script SCRIPT.json --log LOG.jsonl
                         [--expect-key KEY] [--fill IN:OUT]... -- CMD [ARGS...]

Starts llm-test-server.py (beside this file) on a free loopback port, waits
until it listens, writes each OUT from IN with "@PORT@" replaced by the
port, runs CMD (which inherits the environment), stops the server, and exits
with CMD's status. The server is stopped whatever CMD does, so that a
failing test leaves no process behind.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--expect-key")
    parser.add_argument("--fill", action="append", default=[])
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    here = os.path.dirname(os.path.abspath(__file__))
    port_file = os.path.join(tempfile.mkdtemp(), "port")
    server_cmd = [sys.executable, os.path.join(here, "llm-test-server.py"),
                  "--script", args.script, "--port-file", port_file,
                  "--log", args.log]
    if args.expect_key:
        server_cmd += ["--expect-key", args.expect_key]
    server = subprocess.Popen(server_cmd)
    try:
        deadline = time.time() + 20
        while not os.path.exists(port_file):
            if server.poll() is not None or time.time() > deadline:
                sys.exit("run-with-llm-server: the server did not start")
            time.sleep(0.05)
        with open(port_file) as f:
            port = f.read().strip()
        for spec in args.fill:
            src, dst = spec.split(":", 1)
            with open(src) as f:
                text = f.read()
            with open(dst, "w") as f:
                f.write(text.replace("@PORT@", port))
        return subprocess.call(command)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    sys.exit(main())
