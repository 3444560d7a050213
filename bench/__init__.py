"""Benchmarks: `python -m bench rope` (GPU A/B against hand-written PTX) and
`python -m bench compile` (compile time, CPU). Results go to bench/results/."""
