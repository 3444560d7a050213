"""Variants: one `ember compile` of a matrix of const values.

`-D HEAD_DIM=64,128 -D T=f32,bf16` is four variants (every combination, the first -D
varying slowest); a variants file lists one variant per line (`HEAD_DIM=64 T=f32`;
`#` starts a comment), each combined with the -D values. A variant's output is named
after the values that vary: `rope.HEAD_DIM-64.T-f32.ptx`, the same on every machine.
"""

from __future__ import annotations

import itertools
import re

from ..cli_support import UsageError, parse_define


def expand(defines: list, variants_file: str | None = None, rows: list | None = None) -> tuple[list, list]:
    """(variants, varying): every variant as {NAME: VALUE} in a fixed order, and the names
    whose value differs between variants (what output names are made of). `rows` are
    variants given directly (`--tuned`), as a variants file's lines."""
    names: list = []
    choices: dict = {}
    for item in defines:
        name, value = parse_define(item)
        values = [v.strip() for v in value.split(",")]
        if any(not v for v in values):
            raise UsageError(f"-D {item}: an empty value in the list")
        twice = next((v for k, v in enumerate(values) if v in values[:k]), None)
        if twice is not None:
            raise UsageError(f"-D {item}: the value {twice} is listed twice (one variant would be built twice)")
        if name in choices:
            raise UsageError(f"-D {name} is given twice: list its values in one -D {name}=A,B")
        names.append(name)
        choices[name] = values
    matrix = [dict(zip(names, combo)) for combo in itertools.product(*(choices[n] for n in names))]
    named = [n for n in names if len(choices[n]) > 1]
    if variants_file is not None or rows is not None:
        where = variants_file or "--tuned"
        rows = _read_variants(variants_file) if variants_file is not None else rows
        for row in rows:
            for name in row:
                if name in choices:
                    raise UsageError(f"{where}: {name} is also given with -D")
        matrix = [dict(m, **row) for m in matrix for row in rows]
        # a variants file names its outputs by every name it sets
        for row in rows:
            named += [n for n in row if n not in named]
    return matrix, named


def _read_variants(path: str) -> list:
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise UsageError(f"cannot read the variants file {path}: {e.strerror}") from None
    rows: list = []
    numbers: list = []
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        row: dict = {}
        for item in text.split():
            try:
                name, value = parse_define(item)
            except UsageError:
                raise UsageError(f"{path}:{number}: expected NAME=VALUE ..., got `{item}`") from None
            if name in row:
                raise UsageError(f"{path}:{number}: {name} is set twice")
            row[name] = value
        if row in rows:
            raise UsageError(f"{path}:{number}: repeats the variant of line {numbers[rows.index(row)]}")
        rows.append(row)
        numbers.append(number)
    if not rows:
        raise UsageError(f"the variants file {path} lists no variant")
    return rows


def suffix(variant: dict, varying: list) -> str:
    """`.HEAD_DIM-64.T-f32`: the part of an output name that tells the variant apart."""
    return "".join(f".{n}-{_safe(variant[n])}" for n in varying if n in variant)


def _safe(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", value)
