#!/usr/bin/env python3
"""run-exported.py R3 SETTINGS.json [ARG...]: runs the replay_command that
`r3 export` wrote into SETTINGS.json with the given r3 binary (in place of
the command's "r3") and ARGs appended; exits with its status."""
import json
import shlex
import subprocess
import sys

r3, settings = sys.argv[1], sys.argv[2]
words = shlex.split(json.load(open(settings))["replay_command"])
if words[0] != "r3":
    sys.exit("replay_command does not start with r3: %r" % words[:2])
sys.exit(subprocess.call([r3] + words[1:] + sys.argv[3:]))
