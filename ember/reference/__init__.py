"""f64 numpy references for the kernels in kernels_src/ (tests and benchmarks check
Ember's and the baselines' results against these)."""
