"""Turns a folder r3 export wrote into one whose kernel is wrong: its
settings name a new source file (bad.c, written here: a matmul that adds 1
to every element) instead of the recorded code or the campaign's variant, so
that r3 run's verification has something to catch."""
import json
import sys

folder = sys.argv[1]
path = folder + "/settings.json"
settings = json.load(open(path))
settings["recorded"] = False
settings["source"] = "bad.c"
open(folder + "/bad.c", "w").write(
    "void matmul(int n, const double *a, const double *b, double *c) {\n"
    "  for (int i = 0; i < n; ++i)\n"
    "    for (int j = 0; j < n; ++j) {\n"
    "      double sum = 1.0;\n"
    "      for (int k = 0; k < n; ++k)\n"
    "        sum += a[i * n + k] * b[k * n + j];\n"
    "      c[i * n + j] = sum;\n"
    "    }\n"
    "}\n")
json.dump(settings, open(path, "w"), indent=2)
