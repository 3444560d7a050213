"""Mutation fuzzing of the `ember` command: whatever a user types, `ember compile` and
`ember run` end with exit status 0, 1 or 2, print no traceback and no internal error,
and finish within a time limit.

Each case takes a seed program (the kernels, the test suite's programs, generated ones),
mutates it the way the language's grammar suggests (tokens replaced by other tokens of
the language or by extreme literals, tokens deleted, duplicated or swapped, expressions
and statements nested thousands deep, functions that fan out, arrays made huge, bytes
inserted, the file cut short), and runs a command line that is itself mutated (options,
architectures, pass lists, -D values, grids, buffer specs, output paths).

    python -m ember.fuzz cli --count 10000 [--start 0] [--jobs 2]

Cases run in worker processes (a crash that kills one is a finding too).
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import shlex
import signal
import sys
import tempfile
import stat
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIME_LIMIT = 60

KEYWORDS = ["kernel", "fn", "let", "var", "if", "else", "for", "in", "while", "break", "continue", "return",
            "true", "false", "mut", "shared", "bitcast", "unroll", "const", "block", "align", "step", "type"]
TYPES = ["bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64",
         "*global f32", "*mut global u8", "*shared f32", "*const f32", "[f32; 4]", "(f32, f32)"]
OPERATORS = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">", ">=", "&&",
             "||", "!", "~", "=", "+=", "<<=", "->", ":", ";", ",", ".", "..", "(", ")", "{", "}", "[", "]",
             "<", ">", "@", "#", "$", "\\", "'", '"']
LITERALS = ["0", "1", "-1", "1e309", "1e-4294967295", "1e-10000000", "1e39", "-128i8", "128i8", "255u8",
            "18446744073709551615u64", "-9223372036854775808i64", "9" * 400, "0x" + "f" * 3000,
            "0.1", "1.0e-45f32", "3.5e38f32", "65504.0f16", "1_000_000", "0b101", "2.5", "1e1000", "0e0",
            "1e" + "9" * 30, "4294967296u32", "nan", "inf"]
NAMES = ["x", "y", "n", "i", "thread_idx", "thread_idx.x", "block_idx.y", "lane_id", "warp_id", "sqrt",
         "sincos", "fast_exp", "barrier", "shfl_xor", "atomic_add", "isnan", "min", "f32", "T", "HEAD_DIM",
         "BLOCK", "undefined_name"]
_TOKEN = re.compile(r"\s+|//[^\n]*|[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9_.eExa-fA-F+-]*[a-z0-9]*|\S")


@dataclass
class Case:
    seed: int
    argv: list
    files: dict        # name -> text written in the case's directory
    stdin: str = ""
    links: dict = field(default_factory=dict)    # name -> target: symbolic links made in the directory


# Output paths that must be written through or refused, never replaced: a device, links
# (refused: their targets are paths nobody gave Ember - a decoy file, and a name that must
# not come to exist), the input itself. Checked after every case (`_damage`).
SPECIAL_OUTPUTS = ["/dev/null", "link.ptx", "k.ember", "dangling.ptx"]
DECOY = ("target.ptx", "not Ember's: a link's target\n")
DANGLING_TARGET = "gone.ptx"


def seed_programs() -> list[str]:
    """Programs to mutate: the kernels, the test suite's Ember files, a few generated."""
    out = []
    from ..shipped import KERNELS_SRC      # the shipped kernels, installed or not; the tests' files in a checkout
    for p in sorted(KERNELS_SRC.glob("*.ember")) + sorted((ROOT / "tests" / "lit").rglob("*.ember")):
        out.append(p.read_text(encoding="utf-8", errors="replace"))
    from .progen import from_seed
    out += [from_seed(s).source for s in range(8)]
    return out or ["kernel k(x: *mut global f32) block(32) { x[thread_idx.x] = 1.0; }\n"]


class Mutator:
    def __init__(self, rng: random.Random):
        self.r = rng

    def tokens(self, text: str) -> list[str]:
        return [t for t in _TOKEN.findall(text) if t]

    def mutate(self, text: str) -> str:
        for _ in range(self.r.choice([1, 1, 1, 2, 3])):
            text = self.r.choice([self.replace, self.replace, self.delete, self.duplicate, self.swap,
                                  self.insert, self.deepen, self.lengthen, self.fan_out, self.huge_array,
                                  self.truncate, self.garbage])(text)
        return text

    def _pick(self, toks):
        real = [i for i, t in enumerate(toks) if not t.isspace() and not t.startswith("//")]
        return self.r.choice(real) if real else None

    def replace(self, text):
        toks = self.tokens(text)
        i = self._pick(toks)
        if i is not None:
            toks[i] = self.r.choice(self.r.choice([KEYWORDS, TYPES, OPERATORS, LITERALS, NAMES, LITERALS]))
        return "".join(toks)

    def delete(self, text):
        toks = self.tokens(text)
        i = self._pick(toks)
        if i is not None:
            del toks[i]
        return "".join(toks)

    def duplicate(self, text):
        toks = self.tokens(text)
        i = self._pick(toks)
        if i is not None:
            toks.insert(i, toks[i] + " ")
        return "".join(toks)

    def swap(self, text):
        toks = self.tokens(text)
        i, j = self._pick(toks), self._pick(toks)
        if i is not None and j is not None:
            toks[i], toks[j] = toks[j], toks[i]
        return "".join(toks)

    def insert(self, text):
        at = self.r.randrange(len(text) + 1)
        return text[:at] + self.r.choice(["\0", "\u00e9", "\ufeff", "`", "??", "\t\t", "\r", "/*", "*/", "//",
                                          " " * 5000]) + text[at:]

    def deepen(self, text):
        """An expression in thousands of parentheses or unary minuses, or a statement in
        hundreds of nested ifs or blocks."""
        n = self.r.choice([200, 600, 1000, 3000, 6000])
        m = re.search(r"=\s*([^;{}]+);", text)
        if m is None:
            return text
        expr = m.group(1)
        kind = self.r.choice(["parens", "minus", "ifs", "blocks"])
        if kind == "parens":
            new = "(" * n + expr + ")" * n
        elif kind == "minus":
            new = "-" * n + "(" + expr + ")"
        else:
            stmt_start = text.rfind("\n", 0, m.start()) + 1
            stmt_end = text.find(";", m.end() - 1) + 1
            stmt = text[stmt_start:stmt_end]
            n = min(n, 1200)
            wrapped = ("if true {\n" * n if kind == "ifs" else "{\n" * n) + stmt + "\n" + "}\n" * n
            return text[:stmt_start] + wrapped + text[stmt_end:]
        return text[:m.start(1)] + new + text[m.end(1):]

    def lengthen(self, text):
        """A sum of thousands of terms, or an else-if chain of hundreds of arms."""
        m = re.search(r"=\s*([A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?)\s*;", text)
        if m is None:
            return text
        n = self.r.choice([500, 5000, 20000])
        return text[:m.start(1)] + " + ".join([m.group(1)] * n) + text[m.end(1):]

    def fan_out(self, text):
        n = self.r.choice([4, 12, 20])
        fns = ["fn fz0(x: f32) -> f32 { return x * 1.5 + 1.0; }"]
        fns += [f"fn fz{i}(x: f32) -> f32 {{ return fz{i-1}(x) + fz{i-1}(x + 1.0); }}" for i in range(1, n)]
        body = f"kernel fanout(y: *mut global f32) block(32) {{ y[thread_idx.x] = fz{n-1}(y[thread_idx.x]); }}"
        return "\n".join(fns) + "\n" + body + "\n" + text

    def huge_array(self, text):
        return re.sub(r"\[(\w+); [^\]]+\]", lambda m: f"[{m.group(1)}; {self.r.choice(['100000', '4294967295', '999999999999', '0', 'N - N'])}]",
                      text, count=1)

    def truncate(self, text):
        return text[:self.r.randrange(len(text) + 1)]

    def garbage(self, text):
        return "".join(chr(self.r.randrange(1, 0x3000)) for _ in range(self.r.randrange(1, 200)))


def _usually(r: random.Random, valid: list, invalid: list, p_invalid: float = 0.15) -> str:
    return r.choice(invalid) if r.random() < p_invalid else r.choice(valid)


def _arg_value(r: random.Random) -> str:
    return r.choice(["1", "0", "-1", "1e39", "nan", "inf", "1.5", "abc", "", "=5", "99999999999999999999999",
                     "0x10", "f16", "bf16", "true", "1e-4294967295", "128", "4294967296"])


def make_case(seed: int, programs: list[str]) -> Case:
    r = random.Random(seed)
    m = Mutator(r)
    text = m.mutate(r.choice(programs)) if r.random() < 0.85 else r.choice(programs)
    files = {"k.ember": text}
    if r.random() < 0.3:
        argv = ["run", "k.ember", "--grid", _usually(r, ["1", "2", "1,1", "3,2"], ["0", "12x", "2.5", "x", "1,1,70000"])]
        if r.random() < 0.2:
            argv += ["--block", _usually(r, ["32", "64"], ["1,1,65", "2048", "0"], 0.5)]
        if r.random() < 0.3:
            argv += ["--kernel", r.choice(["k", "rope", "rmsnorm", "fuzz", "nope", ""])]
        if r.random() < 0.2:
            argv += ["--step-limit", r.choice(["0", "-5", "10", "100000"])]
        if r.random() < 0.2:
            argv += ["--out", r.choice(["out", "k.ember", "/proc/none/x", ""])]
        names = re.findall(r"\b([a-z_][a-z0-9_]*)\s*:\s*\*?(?:mut )?(?:global )?[a-z0-9]+", text)[:8]
        for name in names or ["x"]:
            argv.append(f"{name}=" + _usually(r, ["zeros:64", "ones:4x16", "arange:100", "rand:32", "1", "2"],
                                              ["zeros:99999999999999", "bad.npy", "missing.npy", "2.5", "1e39",
                                               "zeros:", "x:1", "zeros:0", "ones:-3"], 0.2))
        if r.random() < 0.2:
            argv.append(r.choice(["=5", "x=1", "noeq", "a=b=c"]))
        files["bad.npy"] = "this is not numpy"
    else:
        argv = ["compile", "k.ember"]
        if r.random() < 0.5:
            argv += ["--emit", _usually(r, ["ast", "ir", "ir-opt", "llvm", "llvm-opt", "ptx"], ["bogus"], 0.05)]
        if r.random() < 0.4:
            argv += ["--arch", _usually(r, ["sm_75", "sm_80", "sm_90", "sm_90a", "sm_100", "sm_121"], ["sm_1", "gfx90a"], 0.1)]
        if r.random() < 0.3:
            argv += ["-O", _usually(r, ["0", "1", "2", "3"], ["4", "-1", "x"], 0.1)]
        if r.random() < 0.2:
            argv += ["-p", _usually(r, ["canonicalize,expand-math", "inline,cse,expand-math", "expand-math",
                                        "dce,dce,unroll,expand-math", "vectorize,expand-math"], ["nope", "", "cse"], 0.3)]
        for _ in range(r.choice([0, 0, 1, 2])):
            argv += ["-D", _usually(r, ["HEAD_DIM", "BLOCK", "T", "N", "NEOX"], ["x", "", "1X"], 0.2) + "=" + _arg_value(r)]
        if r.random() < 0.2:
            argv.append("--check")
        if r.random() < 0.1:
            argv += ["--ptx-version", _usually(r, ["7.8", "8.0", "8.8"], ["9.9", "x", "6.0"], 0.4)]
        if r.random() < 0.3:
            argv += ["-o", _usually(r, ["-", "out.ptx"] + SPECIAL_OUTPUTS, ["outdir", "k.ember", "/proc/none/x.ptx"], 0.3)]
        if r.random() < 0.1:
            argv += [r.choice(["-MD", "-MMD"]), "-MF", r.choice(["deps.d"] + SPECIAL_OUTPUTS)]
        if r.random() < 0.05:
            argv += ["--manifest", r.choice(["m.json"] + SPECIAL_OUTPUTS)]
        if r.random() < 0.15:
            files["sub/k.ember"] = text
            argv.append("sub/k.ember")
        if r.random() < 0.1:
            argv[1] = "-"
        elif r.random() < 0.03:
            argv[1] = "/dev/zero"       # a source that never ends: refused, never read until memory runs out
    if r.random() < 0.08 and len(argv) > 2:
        # the command line's tail from a response file - or @ a file that names itself, a
        # device that never ends, nothing (each refused, exit 2)
        cut = r.randrange(2, len(argv))
        files["args.rsp"] = " ".join(shlex.quote(a) for a in argv[cut:]) + "\n"
        files["self.rsp"] = "-O3 @self.rsp\n"
        argv = argv[:cut] + [_usually(r, ["@args.rsp"], ["@self.rsp", "@/dev/zero", "@missing.rsp"], 0.4)]
    links = {"link.ptx": DECOY[0], "dangling.ptx": DANGLING_TARGET}
    return Case(seed, argv, files, stdin=text if "-" in argv else "", links=links)


class _Timeout(BaseException):
    """Not an Exception, so that the CLI's own handler (which turns any Exception into an
    internal error, exit 70) cannot swallow it and misreport a slow case as a crash."""


def _alarm(signum, frame):
    raise _Timeout()


def run_case(case: Case) -> tuple[int, str | None]:
    """(exit status, problem or None). Runs the CLI in this process, in a fresh directory."""
    from ..cli import main
    with tempfile.TemporaryDirectory() as d:
        for name, text in case.files.items():
            p = Path(d) / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(text.encode("utf-8", "surrogateescape"))
        for name, target in case.links.items():
            os.symlink(target, Path(d) / name)
        (Path(d) / DECOY[0]).write_text(DECOY[1])
        old_cwd = os.getcwd()
        err, out = io.StringIO(), io.StringIO()
        old_stdin = sys.stdin
        os.chdir(d)
        sys.stdin = io.StringIO(case.stdin)
        old_handler = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(TIME_LIMIT)
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                code = main(list(case.argv))
        except _Timeout:
            return -1, f"took longer than {TIME_LIMIT} s"
        except BaseException as e:   # anything escaping main is a finding
            return -2, f"{type(e).__name__} escaped: {e}"
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old_handler)
            sys.stdin = old_stdin
            os.chdir(old_cwd)
        damage = _damage(case, Path(d))
        if damage:
            return code, damage
    text = err.getvalue()
    if code not in (0, 1, 2):
        return code, f"exit status {code}: {text.strip().splitlines()[-1][:300] if text.strip() else ''}"
    if "Traceback" in text or "internal compiler error" in text:
        return code, "a traceback or internal error: " + text[-300:]
    raw = next((c for c in text if (ord(c) < 0x20 and c != "\n") or 0xD800 <= ord(c) <= 0xDFFF), None)
    if raw is not None:
        return code, f"the diagnostics print a raw U+{ord(raw):04X} (a terminal would act on it or choke)"
    return code, None


def _damage(case: Case, d: Path) -> str | None:
    """What the command replaced that it must only write through or leave alone."""
    if not stat.S_ISCHR(os.lstat("/dev/null").st_mode):
        return "/dev/null is no longer a character device"
    for name in case.links:
        if not (d / name).is_symlink():
            return f"the symbolic link {name} was replaced"
    if (d / DECOY[0]).read_text() != DECOY[1]:
        return f"{DECOY[0]}, a link's target, was written through the link"
    if (d / DANGLING_TARGET).exists():
        return f"{DANGLING_TARGET}, a dangling link's target, was created through the link"
    inputs = {case.argv[1]} | ({"sub/k.ember"} & set(case.argv))      # the compile's sources (not `-`)
    for name, text in case.files.items():
        if name in inputs and (d / name).read_bytes() != text.encode("utf-8", "surrogateescape"):
            return f"the input {name} was overwritten"
    return None


_PROGRAMS: list | None = None


def check_seed(seed: int) -> tuple[int, int, str | None, list]:
    """For worker processes: (seed, exit status, problem, argv)."""
    global _PROGRAMS
    if _PROGRAMS is None:
        _PROGRAMS = seed_programs()
    case = make_case(seed, _PROGRAMS)
    code, problem = run_case(case)
    return seed, code, problem, case.argv
