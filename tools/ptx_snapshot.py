"""Snapshot the PTX of every kernel variant and of every fuzz-corpus program, to prove a
refactoring changes no output.

    python tools/ptx_snapshot.py write FILE     # sha256 of each PTX, as JSON
    python tools/ptx_snapshot.py diff FILE      # compare the current PTX with FILE

The variant list covers what the test suite compiles: RoPE and RMSNorm with the const
values the tests use, every other file of kernels_src/ with its defaults and with the
configurations the hand-written baselines are compared at (bench/hand_ptx.py), each for
sm_80 and sm_90, plus the corpus programs at -O0 and -O3 for sm_90.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KERNEL_VARIANTS = {
    "rope.ember": [dict(HEAD_DIM=h, NEOX=n, BACKWARD=b, FAST=f, T=t)
                   for h, n, b, f, t in itertools.product([64, 128, 256], [False, True], [False, True],
                                                          [False, True], ["f32", "f16", "bf16"])],
    "rmsnorm.ember": [dict(BLOCK=b, T=t) for b in (128, 256, 1024) for t in ("f32", "f16", "bf16")],
}


def _variants() -> dict:
    """file name -> list of const values: KERNEL_VARIANTS, else the defaults and the
    hand-baseline configurations."""
    from bench.hand_ptx import HAND
    out = {p.name: [{}] for p in sorted((ROOT / "kernels_src").glob("*.ember"))}
    for _, source, defines, _ in HAND.values():
        if defines and defines not in out[source]:
            out[source].append(defines)
    out.update(KERNEL_VARIANTS)
    return out


def _items():
    import ember
    from ember.fuzz import corpus
    for name, variants in _variants().items():
        path = ROOT / "kernels_src" / name
        for d in variants:
            for arch in ("sm_80", "sm_90"):
                key = f"{name} {arch} " + ",".join(f"{k}={v}" for k, v in sorted(d.items()))
                yield key, lambda p=path, a=arch, d=d: ember.compile(p, arch=a, defines=d).ptx
    for e in corpus.read(ROOT / "tests" / "fuzz" / "corpus.jsonl.gz"):
        for opt in (0, 3):
            key = f"corpus seed {e['seed']} -O{opt}"
            yield key, lambda e=e, o=opt: ember.compile(e["source"], name="fuzz.ember", opt=o).ptx


def snapshot() -> dict:
    out = {}
    for key, make in _items():
        try:
            out[key] = hashlib.sha256(make().encode()).hexdigest()
        except Exception as exc:   # a variant that does not compile is recorded as such
            out[key] = f"error: {type(exc).__name__}"
    return out


def main(argv) -> int:
    if len(argv) != 2 or argv[0] not in ("write", "diff"):
        print(__doc__, file=sys.stderr)
        return 2
    cmd, path = argv
    current = snapshot()
    if cmd == "write":
        Path(path).write_text(json.dumps(current, indent=0, sort_keys=True))
        print(f"{len(current)} PTX digests written to {path}")
        return 0
    before = json.loads(Path(path).read_text())
    changed = sorted(k for k in before.keys() & current.keys() if before[k] != current[k])
    missing = sorted(before.keys() - current.keys())
    added = sorted(current.keys() - before.keys())
    for k in changed:
        print(f"changed: {k}")
    for k in missing:
        print(f"missing: {k}")
    print(f"{len(before)} before, {len(current)} now: {len(changed)} changed, {len(missing)} missing, "
          f"{len(added)} new")
    return 1 if changed or missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
