"""`ember tune`: on a GPU, every admissible configuration of a kernel's tuned parameters
(ember.tuning.space) is compiled (in worker processes, through the compile cache), run
once on the workload's fresh random inputs and checked against its f64 reference - a wrong
configuration is reported, never chosen - then timed: a short timing first, after which a
configuration slower than PRUNE x the best so far is dropped, then the full method (CUDA
graphs, median of rounds, inputs rotated among copies that together exceed twice the L2).

The choice is the lowest median time; equal times go to the configuration declared first
(the order of `tune [...]`, the first parameter varying slowest), so the same measurements
choose the same configuration."""

from __future__ import annotations

import math
import sys
import time

from . import table as T
from .space import tune_space
from .timing import time_launches
from .workloads import workload

PRUNE = 1.5          # a configuration this much slower than the best in the short timing is dropped
QUICK = {"warmup": 3, "rounds": 1, "iters": 10}
FULL = {"warmup": 20, "rounds": 5, "iters": 100}
MAX_COPIES = 16


def choose(results: list) -> tuple:
    """(chosen, runner-up) among results [{"index", "config", "us"}] with a time: the
    fastest; a tie goes to the lower index (declaration order)."""
    timed = sorted((r for r in results if r.get("us") is not None), key=lambda r: (r["us"], r["index"]))
    return (timed[0] if timed else None), (timed[1] if len(timed) > 1 else None)


def _compile_one(job):
    """A worker: compile one configuration into the cache; the error text if it fails."""
    import ember
    source, arch, defines, kernel = job
    try:
        ember.compile(source, arch=arch, defines=defines, kernels=[kernel])
        return None
    except ember.CompileError as e:
        return str(e).splitlines()[0]


def precompile(jobs: list, workers: int) -> list:
    """Compile every job (source, arch, defines, kernel) in `workers` processes; errors in order."""
    if workers <= 1 or len(jobs) <= 1:
        return [_compile_one(j) for j in jobs]
    import concurrent.futures
    import multiprocessing
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(_compile_one, jobs))


class Progress:
    """One line on a terminal (or a line per step elsewhere): done/total and the time left."""

    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.done, self.stream, self.start = total, 0, stream, time.monotonic()
        self.tty = hasattr(stream, "isatty") and stream.isatty()

    def step(self, text: str) -> None:
        self.done += 1
        spent = time.monotonic() - self.start
        left = spent / self.done * (self.total - self.done)
        bar = "#" * (20 * self.done // self.total)
        line = f"[{bar:<20}] {self.done}/{self.total} {text} ~{left:.0f} s left"
        self.stream.write(("\r" + line[:150].ljust(150)) if self.tty else line + "\n")
        if self.tty and self.done == self.total:
            self.stream.write("\n")
        self.stream.flush()


def tune_bucket(kernel: str, shape: str, device: int = 0, workers: int = 1, progress_stream=sys.stderr,
                timing: dict | None = None) -> dict:
    """Tune one kernel at one shape on one GPU; the table entry for the bucket."""
    import ember
    from ..runtime import cuda
    timing = timing or FULL
    wl = workload(kernel, shape)
    ctx = cuda.context(device)
    arch = wl.arch or ctx.arch
    space = tune_space(wl.source, arch=arch, kernel=kernel, defines=wl.defines)[kernel]
    configs = space.admissible
    errors = precompile([(str(wl.source), arch, {**wl.defines, **c}, kernel) for c in configs], workers)
    in_bytes = sum(a.nbytes for a in wl.inputs.values())
    copies = max(1, min(MAX_COPIES, math.ceil(2 * ctx.l2_bytes / max(in_bytes, 1))))
    inputs = [{n: cuda.DeviceArray.from_host(a, device) for n, a in wl.inputs.items()} for _ in range(copies)]
    outputs = {n: cuda.DeviceArray.from_host(a, device) for n, a in wl.outputs.items()}
    stream = cuda.Stream(device)
    results, wrong, failed, pruned = [], [], [], []
    best_quick = math.inf
    default = space.default
    progress = Progress(len(configs), progress_stream)
    for index, (config, error) in enumerate(zip(configs, errors)):
        text = " ".join(f"{k}={v}" for k, v in config.items())
        if error is not None:
            failed.append({"config": config, "error": error})
            progress.step(text + " (does not compile)")
            continue
        kern = cuda.load(ember.compile(wl.source, arch=arch, defines={**wl.defines, **config}, kernels=[kernel]),
                         device)[kernel]
        grid = wl.grid(config)

        try:
            launches = [kern.prepare(*wl.arguments({**c, **outputs}), grid=grid) for c in inputs]
            for n, a in wl.outputs.items():
                outputs[n].copy_from_host(a)
            launches[0](stream)
            stream.synchronize()
            err = wl.error(outputs[wl.output].to_host())
        except cuda.CudaError as e:              # too many resources for this block size, ...
            failed.append({"config": config, "error": str(e).splitlines()[0]})
            progress.step(text + " (does not launch)")
            continue
        if not err <= wl.tolerance:
            wrong.append({"config": config, "error": err})
            progress.step(f"{text} WRONG (error {err:.2e})")
            continue
        quick = time_launches(launches, stream, **QUICK)["median_us"]
        if quick > PRUNE * best_quick and config != default:     # the default is always timed: the baseline
            pruned.append({"config": config, "quick_us": round(quick, 3)})
            progress.step(f"{text} pruned ({quick:.1f} us)")
            continue
        best_quick = min(best_quick, quick)
        us = time_launches(launches, stream, **timing)["median_us"]
        results.append({"index": index, "config": config, "us": us, "error": err})
        progress.step(f"{text} {us:.2f} us")
    chosen, runner_up = choose(results)
    entry = {"defines": dict(wl.defines), "tried": len(configs), "wrong": wrong, "failed": failed, "pruned": len(pruned),
             "moved_bytes": wl.moved_bytes, "rotating_copies": copies}
    if chosen is None:
        return {**entry, "config": None, "us": None, "runner_up": None}
    return {**entry, "config": chosen["config"], "us": round(chosen["us"], 3),
            "TBps": round(wl.moved_bytes / (chosen["us"] * 1e-6) / 1e12, 3),
            "runner_up": {"config": runner_up["config"], "us": round(runner_up["us"], 3)} if runner_up else None,
            "default": default, "default_us": next((round(r["us"], 3) for r in results if r["config"] == default), None)}


def tune(kernel: str, shapes: list | None = None, devices: list | None = None, workers: int = 1,
         progress_stream=sys.stderr, timing: dict | None = None) -> dict:
    """Tune `kernel` at each shape (default: its workload's buckets) on the GPUs `devices`
    (default: every GPU of the host): a table (ember.tuning.table) with their entries, each
    under the name and arch of the GPU that measured it. With several GPUs the shapes are
    shared out among them, one process per GPU, all measuring at once."""
    from ..runtime import cuda
    from .workloads import buckets_of, source_of
    shapes = shapes or buckets_of(kernel)
    devices = list(range(cuda.device_count())) if devices is None else list(devices)
    out = T.new_table(kernel, source_of(kernel), "nvjitlink")
    if len(devices) == 1:
        done = [_bucket_job((kernel, shape, devices[0], workers, timing, progress_stream)) for shape in shapes]
    else:
        import concurrent.futures
        import multiprocessing
        per_gpu = max(1, workers // len(devices))
        slots = [[(kernel, shape, devices[i], per_gpu, timing, None) for shape in shapes[i::len(devices)]]
                 for i in range(len(devices))]
        slots = [jobs for jobs in slots if jobs]
        with concurrent.futures.ProcessPoolExecutor(len(slots), mp_context=multiprocessing.get_context("spawn")) as pool:
            done = [r for rs in pool.map(_device_jobs, slots) for r in rs]
    for key, shape, entry in sorted(done, key=lambda r: shapes.index(r[1])):
        out["devices"].setdefault(key, {})[shape] = entry
    return out


def _device_jobs(jobs: list) -> list:
    """A worker process: one GPU's buckets, in turn."""
    return [_bucket_job(j) for j in jobs]


def _bucket_job(job) -> tuple:
    from ..runtime import cuda
    kernel, shape, device, workers, timing, stream = job
    stream = stream or sys.stderr
    ctx = cuda.context(device)
    key = T.device_key(ctx.name, ctx.arch)
    stream.write(f"ember tune: {kernel} {shape} on cuda:{device} ({key})\n")
    return key, shape, tune_bucket(kernel, shape, device, workers, stream, timing)
