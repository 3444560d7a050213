#!/usr/bin/env python3
"""Generate ember/ir/mathlib/coeffs.py: minimax polynomial coefficients for the math
library, by the Remez exchange algorithm in 60-digit arithmetic (mpmath).

    pip install mpmath && python tools/gen_math_coeffs.py > ember/ir/mathlib/coeffs.py

Each fit minimises the weighted error max |w(x) (g(x) - p(x))| of a polynomial p in one
variable over an interval; the weights make it the relative error of the final function.
Coefficients are rounded to the precision they are used in and printed as exact
hexadecimal floats, so the table reads back bit for bit.
"""

from __future__ import annotations

import sys

import mpmath as mp

mp.mp.dps = 60


def remez(g, w, a, b, degree, iters=40):
    """Coefficients c[0..degree] minimising max |w(x)(g(x) - sum c_k x^k)| on [a, b]."""
    n = degree + 2
    eps = (b - a) * mp.mpf(10) ** -9

    def nudge(x):
        # a weight of zero (the error there is zero whatever p is) cannot be an equation row
        return x + eps if abs(w(x)) < mp.mpf(10) ** -30 else x

    nodes = [nudge((a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (n - 1 - i) / (n - 1))) for i in range(n)]
    grid = [nudge(a + (b - a) * mp.mpf(i) / 4000) for i in range(4001)]
    coeffs, err = None, None
    for _ in range(iters):
        A = mp.matrix(n, n)
        rhs = mp.matrix(n, 1)
        for i, x in enumerate(nodes):
            for k in range(degree + 1):
                A[i, k] = x ** k
            A[i, degree + 1] = (-1) ** i / w(x)
            rhs[i] = g(x)
        sol = mp.lu_solve(A, rhs)
        coeffs = [sol[k] for k in range(degree + 1)]
        err = abs(sol[degree + 1])

        def e(x):
            return w(x) * (g(x) - mp.polyval(coeffs[::-1], x))

        vals = [e(x) for x in grid]
        # local extrema of the error, with alternating signs
        ext = [0]
        for i in range(1, len(grid) - 1):
            if (vals[i] - vals[i - 1]) * (vals[i + 1] - vals[i]) <= 0:
                ext.append(i)
        ext.append(len(grid) - 1)
        alt = []
        for i in ext:
            if alt and mp.sign(vals[i]) == mp.sign(vals[alt[-1]]):
                if abs(vals[i]) > abs(vals[alt[-1]]):
                    alt[-1] = i
            else:
                alt.append(i)
        while len(alt) > n:
            # drop the smaller end
            if abs(vals[alt[0]]) < abs(vals[alt[-1]]):
                alt.pop(0)
            else:
                alt.pop()
        if len(alt) < n:
            break
        new = [grid[i] for i in alt]
        if max(abs(x - y) for x, y in zip(new, nodes)) < (b - a) * mp.mpf(10) ** -30:
            break
        nodes = new
    maxerr = max(abs(w(x) * (g(x) - mp.polyval(coeffs[::-1], x))) for x in grid)
    return coeffs, maxerr


def safe(f, at0):
    return lambda x: at0 if x == 0 else f(x)


def fits():
    # rint(x * 2/pi) may round the quotient across a half: allow 1% past pi/4
    pio4sq = (mp.pi / 4 * mp.mpf("1.01")) ** 2
    s32 = mp.sqrt(2) / 2 - 1, mp.sqrt(2) - 1
    ln2h = mp.log(2) / 2
    zlog = ((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)) ** 2
    return [
        # name, precision, g, weight, interval, degree, (comment)
        ("SIN_F32", "f32", safe(lambda z: (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / z ** 1.5, mp.mpf(-1) / 6),
         safe(lambda z: z ** 1.5 / mp.sin(mp.sqrt(z)), 0), (0, pio4sq), 2,
         "sin(r) = r + r^3 p(r^2), |r| <= 1.01 pi/4"),
        ("COS_F32", "f32", safe(lambda z: (mp.cos(mp.sqrt(z)) - 1) / z, mp.mpf(-1) / 2),
         safe(lambda z: z / mp.cos(mp.sqrt(z)), 0), (0, pio4sq), 3,
         "cos(r) = 1 + r^2 p(r^2), |r| <= 1.01 pi/4"),
        ("EXP2_F32", "f32", safe(lambda f: (mp.power(2, f) - 1) / f, mp.log(2)),
         lambda f: abs(f) / mp.power(2, f) if f else mp.mpf(0), (-0.5, 0.5), 5,
         "2^f = 1 + f p(f), |f| <= 1/2"),
        ("EXP_F32", "f32", safe(lambda r: (mp.exp(r) - 1) / r, 1),
         lambda r: abs(r) / mp.exp(r) if r else mp.mpf(0), (-ln2h, ln2h), 5,
         "e^r = 1 + r p(r), |r| <= ln2/2"),
        ("LOG_F32", "f32", safe(lambda f: mp.log1p(f) / f, 1),
         safe(lambda f: f / mp.log1p(f), 1), s32, 9,
         "log(1+f) = f p(f), f in [sqrt(1/2)-1, sqrt(2)-1]"),
        ("LOG2_F32", "f32", safe(lambda f: mp.log1p(f) / mp.log(2) / f, 1 / mp.log(2)),
         safe(lambda f: f / (mp.log1p(f) / mp.log(2)), mp.log(2)), s32, 9,
         "log2(1+f) = f p(f), f in [sqrt(1/2)-1, sqrt(2)-1]"),
        ("TANH_F32", "f32", safe(lambda z: (mp.tanh(mp.sqrt(z)) - mp.sqrt(z)) / z ** 1.5, mp.mpf(-1) / 3),
         safe(lambda z: z ** 1.5 / mp.tanh(mp.sqrt(z)), 0), (0, mp.mpf("0.5625") ** 2), 4,
         "tanh(x) = x + x^3 p(x^2), |x| <= 0.5625"),
        ("SIN_F64", "f64", safe(lambda z: (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / z ** 1.5, mp.mpf(-1) / 6),
         safe(lambda z: z ** 1.5 / mp.sin(mp.sqrt(z)), 0), (0, pio4sq), 5,
         "sin(r) = r + r^3 p(r^2), |r| <= 1.01 pi/4"),
        ("COS_F64", "f64", safe(lambda z: (mp.cos(mp.sqrt(z)) - 1) / z, mp.mpf(-1) / 2),
         safe(lambda z: z / mp.cos(mp.sqrt(z)), 0), (0, pio4sq), 6,
         "cos(r) = 1 + r^2 p(r^2), |r| <= 1.01 pi/4"),
        ("EXP2_F64", "f64", safe(lambda f: (mp.power(2, f) - 1) / f, mp.log(2)),
         lambda f: abs(f) / mp.power(2, f) if f else mp.mpf(0), (-0.5, 0.5), 10,
         "2^f = 1 + f p(f), |f| <= 1/2"),
        ("EXP_F64", "f64", safe(lambda r: (mp.exp(r) - 1) / r, 1),
         lambda r: abs(r) / mp.exp(r) if r else mp.mpf(0), (-ln2h, ln2h), 10,
         "e^r = 1 + r p(r), |r| <= ln2/2"),
        ("LOG_R_F64", "f64", safe(lambda z: (2 * mp.atanh(mp.sqrt(z)) / mp.sqrt(z) - 2) / z, mp.mpf(2) / 3),
         lambda z: z, (0, zlog), 6,
         "log(1+f) = f - hfsq + s (hfsq + z p(z)), s = f/(2+f), z = s^2, hfsq = f^2/2"),
        ("TANH_F64", "f64", safe(lambda z: (mp.tanh(mp.sqrt(z)) - mp.sqrt(z)) / z ** 1.5, mp.mpf(-1) / 3),
         safe(lambda z: z ** 1.5 / mp.tanh(mp.sqrt(z)), 0), (0, mp.mpf("0.5625") ** 2), 10,
         "tanh(x) = x + x^3 p(x^2), |x| <= 0.5625"),
    ]


def rounded_hex(c, prec: str) -> str:
    import struct
    x = float(c)
    if prec == "f32":
        x = struct.unpack("<f", struct.pack("<f", x))[0]
    return x.hex()


def main() -> None:
    out = ['"""Minimax polynomial coefficients for ember.ir.mathlib.',
           "",
           "Generated by tools/gen_math_coeffs.py (Remez exchange, 60 digits, mpmath); do not edit.",
           "Each tuple is lowest order first; the comment gives the form and the fitted error",
           "(before rounding the coefficients).",
           '"""', "", "F = float.fromhex", ""]
    for name, prec, g, w, (a, b), degree, doc in fits():
        coeffs, err = remez(g, w, mp.mpf(a), mp.mpf(b), degree)
        out.append(f"# {doc}; max weighted error {mp.nstr(err, 3)} (2^{mp.nstr(mp.log(err, 2), 4)})")
        items = ", ".join(f'F("{rounded_hex(c, prec)}")' for c in coeffs)
        out.append(f"{name} = ({items})")
        out.append("")
        print(f"{name}: err 2^{mp.nstr(mp.log(err, 2), 4)}", file=sys.stderr)
    print("\n".join(out).rstrip() + "\n")


if __name__ == "__main__":
    main()
