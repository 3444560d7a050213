"""Run a command; print its stderr, then `exit=N` (lit's `not` cannot tell 1 from 2)."""
import subprocess
import sys

r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stdout.write(r.stderr)
print(f"exit={r.returncode}")
