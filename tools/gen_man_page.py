"""Write docs/ember.1, the manual page of the `ember` command, from its argument parser
(argparse-manpage), so that the page, `--help` and the completion scripts (shtab) read
one declaration of the options.

    python tools/gen_man_page.py           # write docs/ember.1
    python tools/gen_man_page.py --check   # exit 1 if docs/ember.1 is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PAGE = ROOT / "docs" / "ember.1"


def render() -> str:
    import os
    os.environ["COLUMNS"] = "100"         # argparse wraps help to the terminal: the same page anywhere
    from argparse_manpage.manpage import Manpage

    from ember import __version__
    from ember.cli import _parser
    parser = _parser(full_help=True)
    data = {"project_name": "ember", "version": __version__, "date": "2026-11-26",
            "description": "a compiler for GPU kernels", "url": "https://github.com/ember-compiler/ember",
            "manual_section": "1", "manual_title": "Ember manual", "prog": "ember"}
    return str(Manpage(parser, data, format="pretty"))


def main(argv: list) -> int:
    text = render()
    if "--check" in argv:
        if not PAGE.exists() or PAGE.read_text() != text:
            print("docs/ember.1 is out of date: run python tools/gen_man_page.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
