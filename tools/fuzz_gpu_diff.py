"""Where a fuzz corpus program's GPU results differ from the simulator's: for each given
seed (default: every entry that fails), print the output array, the slot, the thread,
both values and the source line(s) that write that slot.

    python tools/fuzz_gpu_diff.py [SEED ...]        (on a machine with a GPU)"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ember.fuzz import corpus as C                      # noqa: E402
from ember.fuzz.differential import reference, same     # noqa: E402


def explain(e: dict, opt: int, program, outputs: dict, problem: str) -> None:
    want = reference(program)
    print(f"== seed {e['seed']} -O{opt}: {problem}")
    lines = program.source.splitlines()
    for name, got in outputs.items():
        t = name[4:]
        ok = same(got, want[name], t)
        for i in np.flatnonzero(~ok)[:6]:
            thread, j = divmod(int(i), program.slots)
            print(f"  {name}[{i}] thread {thread} slot {j}: gpu {got[i]!r} sim {want[name][i]!r}")
            pat = re.compile(rf"{name}\[slot \+ {j}\]")
            for k, line in enumerate(lines):
                if pat.search(line):
                    print(f"    line {k + 1}: {line.strip()[:400]}")


def main(argv: list) -> int:
    entries = C.read(Path(__file__).resolve().parents[1] / "tests" / "fuzz" / "corpus.jsonl.gz")
    if argv:
        wanted = {int(a) for a in argv}
        entries = [e for e in entries if e["seed"] in wanted]
    failures = C.run_on_gpu(entries, levels=(3, 0), on_failure=explain)
    print(f"{len(failures)} failing (of {len(entries)} programs x 2 levels)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
