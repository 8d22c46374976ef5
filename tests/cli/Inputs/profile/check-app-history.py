"""Reads what r3 tune --app left in a history: the application's end-to-end
runs (app_runs) and how the evaluations were split between the kernels."""
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1])
runs = db.execute("SELECT variant, exit_code FROM app_runs ORDER BY id").fetchall()
print("app runs:", ", ".join(r[0] for r in runs))
print("exit codes:", " ".join(str(r[1]) for r in runs))
counts = dict(db.execute(
    "SELECT k.name, count(*) FROM evaluations e "
    "JOIN candidates c ON c.id = e.candidate_id "
    "JOIN kernels k ON k.id = c.kernel_id GROUP BY k.name").fetchall())
total = sum(counts.values())
print("heavy's share of the evaluations over 3/4:", counts.get("heavy", 0) > 0.75 * total)
print("light evaluated:", counts.get("light", 0) >= 1)
