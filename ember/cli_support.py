"""What every `ember` command shares: exit codes, usage errors, reading sources (writing
outputs is ember.output_files). Light on purpose: a cache-hit `ember compile` runs on
little more."""

from __future__ import annotations

import os
import sys

EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70
EXIT_BROKEN_PIPE = 128 + 13        # as a process killed by SIGPIPE: standard output was closed
BUG_URL = "https://github.com/ember-compiler/ember/issues"


class CommandError(Exception):
    """A problem `ember` reports as `ember: error: MESSAGE` and exits with `status`: one
    that is neither in the program (diagnostics) nor in Ember (exit 70) - an output that
    cannot be written, a tool that is not installed."""
    status = EXIT_ERRORS


class UsageError(CommandError):
    """The command line asks for something that cannot be done: exit status 2."""
    status = EXIT_USAGE


# A source past this many characters is refused: `ember compile /dev/zero` (or a pipe that
# never ends) would otherwise read until memory runs out
MAX_SOURCE_CHARS = 64 << 20


def is_null_or_terminal(st: os.stat_result) -> bool:
    """The null device or a terminal (Linux's tty majors: 4, 5 and the pseudo-terminals'
    136-143): the character devices a command may read a source from or write an output to
    (they end, and they keep nothing) - not /dev/zero, /dev/urandom, /dev/mem, a disk."""
    import stat
    if not stat.S_ISCHR(st.st_mode):
        return False
    try:
        if st.st_rdev == os.stat(os.devnull).st_rdev:
            return True
    except OSError:
        pass
    major = os.major(st.st_rdev)
    return major in (4, 5) or 136 <= major <= 143


def read_capped(f, name: str) -> str:
    """All of `f`'s text, refused (a usage error) past MAX_SOURCE_CHARS."""
    text = f.read(MAX_SOURCE_CHARS + 1)
    if len(text) > MAX_SOURCE_CHARS:
        raise UsageError(f"{name} holds more than {MAX_SOURCE_CHARS >> 20} Mi characters: not an Ember source")
    return text


def read_text_input(path: str, kind: str = "source file") -> str:
    """The text of a file named on the command line (`kind`: "source file", "response
    file"): a regular file, a pipe or a terminal, at most MAX_SOURCE_CHARS, UTF-8; a device
    that never ends (/dev/zero) is refused. Every failure a UsageError naming it."""
    import stat
    try:
        st = os.stat(path)
        if (stat.S_ISCHR(st.st_mode) and not is_null_or_terminal(st)) or stat.S_ISBLK(st.st_mode):
            raise UsageError(f"{path} is a device, not a {kind}")
        with open(path, encoding="utf-8") as f:
            return read_capped(f, path)
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory, not a {kind}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text") from None
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}") from None


def read_source(path: str):
    """A source named on the command line (`-`: standard input), read as read_text_input
    reads a file."""
    from .source import SourceFile
    if path == "-":
        return SourceFile("<stdin>", read_capped(sys.stdin, "standard input"))
    return SourceFile(path, read_text_input(path), os.path.abspath(path))


def stem(path: str) -> str:
    base = os.path.basename(path)
    return base[:-6] if base.endswith(".ember") else os.path.splitext(base)[0]


def parse_define(item: str) -> tuple[str, str]:
    """`-D NAME=VALUE` (`-D NAME` means NAME=1)."""
    name, eq, value = item.partition("=")
    name = name.strip()
    if not name.isidentifier():
        raise UsageError(f"-D expects NAME=VALUE, got `{item}`")
    return name, value if eq else "1"


def parse_pass_list(text: str) -> list[str]:
    from .ir.passes import PASSES
    names = [n.strip() for n in text.split(",") if n.strip()]
    for n in names:
        if n not in PASSES:
            raise UsageError(f"unknown pass `{n}`; passes: {', '.join(sorted(PASSES))}")
    return names


def internal_error_text(e: BaseException) -> str:
    """What `ember` says about a bug in Ember (never a bare traceback; EMBER_DEBUG=1 adds one)."""
    from .diagnostics import InternalError
    text = ""
    if os.environ.get("EMBER_DEBUG"):
        import traceback
        text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    msg = str(e) if isinstance(e, InternalError) else f"internal compiler error: {type(e).__name__}: {e}"
    return text + (f"ember: {msg}\nember: this is a bug in Ember, not in your program; please report it at "
                   f"{BUG_URL} (set EMBER_DEBUG=1 for a traceback)\n")


def print_after_hook(enabled: bool):
    """The after-pass hook of --print-after-all (None when not asked for)."""
    if not enabled:
        return None
    from .ir.printer import print_module

    def hook(name, module):
        print(f"// ----- IR after {name} -----", file=sys.stderr)
        print(print_module(module), file=sys.stderr, end="")
    return hook


def pass_times_text(timings: dict) -> str:
    """The --time-passes report: each pass's time and share, and the verifier's."""
    passes = [(k[5:], v) for k, v in timings.items() if k.startswith("pass:")]
    passes.append(("(verifier)", timings.get("verify", 0.0)))
    total = sum(v for _, v in passes)
    lines = ["===-- Ember pass timings --==="]
    for name, secs in passes:
        share = 100 * secs / total if total else 0.0
        lines.append(f"  {name:16s} {secs * 1000:8.2f} ms  {share:5.1f}%")
    lines.append(f"  {'total':16s} {total * 1000:8.2f} ms")
    return "\n".join(lines) + "\n"
