"""Writing a benchmark's results: NAME.json (the numbers) and NAME.md (the table people
read) under bench/results/ or --out, and the table on stdout."""

from __future__ import annotations

import json
import os
from pathlib import Path


def save(out_dir: str, name: str, result: dict, markdown: str) -> None:
    os.makedirs(out_dir, exist_ok=True)
    Path(out_dir, f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    Path(out_dir, f"{name}.md").write_text(markdown)
    print(markdown)
