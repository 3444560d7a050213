"""`ember tune`: on a GPU, every admissible configuration of a kernel's tuned parameters
(ember.tuning.space) is compiled (in worker processes, through the compile cache), run
once on the workload's fresh random inputs and checked against its f64 reference - a wrong
configuration is reported, never chosen - then timed: one launch (dropped when over
HOPELESS x the best so far), a short timing (dropped when over PRUNE x the best so far),
then the full method (CUDA graphs, median of rounds, inputs rotated among copies that
together exceed twice the L2).

The choice is the lowest median time; equal times go to the configuration declared first
(the order of `tune [...]`, the first parameter varying slowest), so the same measurements
choose the same configuration."""

from __future__ import annotations

import math
import sys
import time

from . import table as T
from .space import tune_space
from ..runtime.cuda import SASS_PATHS
from .timing import time_launches
from .workloads import workload

PRUNE = 1.5          # a configuration this much slower than the best in the short timing is dropped
HOPELESS = 4.0       # one this much slower in a single launch is dropped before the short timing,
HOPELESS_US = 500.0  # when that launch is long too (one launch of a microsecond kernel is mostly noise)
QUICK = {"warmup": 3, "rounds": 1, "iters": 10}
FULL = {"warmup": 20, "rounds": 5, "iters": 100}
MAX_COPIES = 16
DRIVER_ALL = 96      # a space this small is measured whole through the driver's JIT too (every kernel's
                     # but the GEMMs'): a configuration far from the top through nvJitLink can be the
                     # fastest through the driver (H100, q6k_q8_gemv 8x4096x14336: 38.4 us through the
                     # driver, 47 or more through nvJitLink, where the top 8 through nvJitLink were 42.7+)
DRIVER_TOP = 8       # of a larger one, the configurations this fast through nvJitLink


def choose(results: list) -> tuple:
    """(chosen, runner-up) among results [{"index", "config", "sass_path", "us"}] with a time:
    the fastest; a tie goes to the lower index (declaration order), then to nvJitLink (the
    runtime's default path)."""
    timed = sorted((r for r in results if r.get("us") is not None),
                   key=lambda r: (r["us"], r["index"], SASS_PATHS.index(r["sass_path"])))
    return (timed[0] if timed else None), (timed[1] if len(timed) > 1 else None)


def _compile_one(job):
    """A worker: compile one configuration into the cache, and link its nvJitLink cubin
    there too (so that the GPU process only loads it); the error text if it fails."""
    import ember
    from ..artifacts.binaries import cubin
    from ..artifacts.validate import nvjitlink_available
    from ..cache import Cache, disabled_by_environment
    source, arch, defines, kernel = job
    try:
        program = ember.compile(source, arch=arch, defines=defines, kernels=[kernel])
    except ember.CompileError as e:
        return str(e).splitlines()[0]
    if nvjitlink_available() and not disabled_by_environment():
        try:
            cubin(program.ptx, arch, Cache())
        except Exception as e:          # reported when the GPU process loads it
            return f"nvJitLink: {str(e).splitlines()[0]}"
    return None


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

    def grow(self, more: int) -> None:
        self.total += more

    def step(self, text: str) -> None:
        self.done += 1
        spent = time.monotonic() - self.start
        left = spent / self.done * (self.total - self.done)
        bar = "#" * (20 * self.done // max(self.total, 1))
        line = f"[{bar:<20}] {self.done}/{self.total} {text} ~{left:.0f} s left"
        self.stream.write(("\r" + line[:150].ljust(150)) if self.tty else line + "\n")
        if self.tty and self.done == self.total:
            self.stream.write("\n")
        self.stream.flush()


class _Bench:
    """One bucket on one GPU: the workload's device arrays (inputs in rotating copies), and
    the measurement of one configuration through one SASS path."""

    def __init__(self, wl, kernel: str, arch: str, device: int, timing: dict):
        from ..runtime import cuda
        self.wl, self.kernel, self.arch, self.device, self.timing = wl, kernel, arch, device, timing
        ctx = cuda.context(device)
        in_bytes = sum(a.nbytes for a in wl.inputs.values())
        self.copies = max(1, min(MAX_COPIES, math.ceil(2 * ctx.l2_bytes / max(in_bytes, 1))))
        self.inputs = [{n: cuda.DeviceArray.from_host(a, device) for n, a in wl.inputs.items()}
                       for _ in range(self.copies)]
        self.outputs = {n: cuda.DeviceArray.from_host(a, device) for n, a in wl.outputs.items()}
        self.stream = cuda.Stream(device)
        self.best_quick = math.inf

    def measure(self, config: dict, sass_path: str, always_time: bool) -> dict:
        """{"state": "failed"|"wrong"|"pruned"|"timed", ...}: loads the configuration through
        `sass_path`, runs it once and checks the output against the f64 reference, then the
        short timing (pruned when over PRUNE x the best so far, unless `always_time`), then
        the full timing."""
        import ember
        from ..runtime import cuda
        wl = self.wl
        try:
            program = ember.compile(wl.source, arch=self.arch, defines={**wl.defines, **config}, kernels=[self.kernel])
            kern = cuda.load(program, self.device, sass_path=sass_path)[self.kernel]
            launches = [kern.prepare(*wl.arguments({**c, **self.outputs}), grid=wl.grid(config)) for c in self.inputs]
            for n, a in wl.outputs.items():
                self.outputs[n].copy_from_host(a)
            launches[0](self.stream)
            self.stream.synchronize()
            err = wl.error(wl.result({n: a.to_host() for n, a in self.outputs.items()}))
        except cuda.CudaError as e:              # too many resources for this block size, ...
            return {"state": "failed", "error": str(e).splitlines()[0]}
        if not err <= wl.tolerance:
            return {"state": "wrong", "error": err}
        if not always_time:      # one launch first: a hopeless configuration (100x slower) costs one launch, not 13
            once = time_launches(launches, self.stream, warmup=0, rounds=1, iters=1)["median_us"]
            if once > max(HOPELESS * self.best_quick, HOPELESS_US):
                return {"state": "pruned", "quick_us": round(once, 3)}
        quick = time_launches(launches, self.stream, **QUICK)["median_us"]
        if quick > PRUNE * self.best_quick and not always_time:
            return {"state": "pruned", "quick_us": round(quick, 3)}
        self.best_quick = min(self.best_quick, quick)
        return {"state": "timed", "us": time_launches(launches, self.stream, **self.timing)["median_us"], "error": err}


def _label(config: dict, sass_path: str) -> str:
    return " ".join(f"{k}={v}" for k, v in config.items()) + ("" if sass_path == "nvjitlink" else " [driver JIT]")


def tune_bucket(kernel: str, shape: str, device: int = 0, workers: int = 1, progress_stream=sys.stderr,
                timing: dict | None = None) -> dict:
    """Tune one kernel at one shape on one GPU; the table entry for the bucket.

    Every configuration is measured through nvJitLink (the runtime's default path); then
    through the driver's JIT too - every correct one of a space of at most DRIVER_ALL
    configurations, the DRIVER_TOP fastest of a larger one - since whole-program SASS is
    faster for some kernels (docs/sass_paths.md). The entry names the path of its choice."""
    from ..runtime import cuda
    wl = workload(kernel, shape)
    arch = wl.arch or cuda.context(device).arch
    space = tune_space(wl.source, arch=arch, kernel=kernel, defines=wl.defines)[kernel]
    configs, default = space.admissible, space.default
    errors = precompile([(str(wl.source), arch, {**wl.defines, **c}, kernel) for c in configs], workers)
    bench = _Bench(wl, kernel, arch, device, timing or FULL)
    results, wrong, failed, pruned = [], [], [], []
    progress = Progress(len(configs), progress_stream)

    def run(index: int, config: dict, sass_path: str) -> None:
        text = _label(config, sass_path)
        m = bench.measure(config, sass_path, always_time=config == default and sass_path == "nvjitlink")
        if m["state"] == "failed":
            failed.append({"config": config, "sass_path": sass_path, "error": m["error"]})
            progress.step(text + " (does not launch)")
        elif m["state"] == "wrong":
            wrong.append({"config": config, "sass_path": sass_path, "error": m["error"]})
            progress.step(f"{text} WRONG (error {m['error']:.2e})")
        elif m["state"] == "pruned":
            pruned.append({"index": index, "config": config, "sass_path": sass_path, "quick_us": m["quick_us"]})
            progress.step(f"{text} pruned ({m['quick_us']:.1f} us)")
        else:
            results.append({"index": index, "config": config, "sass_path": sass_path, "us": m["us"], "error": m["error"]})
            progress.step(f"{text} {m['us']:.2f} us")

    for index, (config, error) in enumerate(zip(configs, errors)):
        if error is not None:
            failed.append({"config": config, "sass_path": "nvjitlink", "error": error})
            progress.step(_label(config, "nvjitlink") + " (does not compile)")
            continue
        run(index, config, "nvjitlink")
    if len(configs) <= DRIVER_ALL:
        again = sorted([(r["index"], r["config"]) for r in results + pruned], key=lambda r: r[0])
    else:
        again = [(r["index"], r["config"]) for r in sorted(results, key=lambda r: (r["us"], r["index"]))[:DRIVER_TOP]]
    progress.grow(len(again))
    for index, config in again:
        run(index, config, "driver")
    chosen, runner_up = choose(results)
    from ..artifacts.binaries import nvjitlink_version
    entry = {"toolchain": {"nvjitlink": nvjitlink_version(), "driver": cuda.driver_version()},
             "defines": dict(wl.defines), "tried": len(configs), "tried_driver": len(again), "wrong": wrong,
             "failed": failed, "pruned": len(pruned), "moved_bytes": wl.moved_bytes, "rotating_copies": bench.copies}
    if chosen is None:
        return {**entry, "config": None, "sass_path": None, "us": None, "runner_up": None}
    best_by_path = {}
    for path in SASS_PATHS:
        best, _ = choose([r for r in results if r["sass_path"] == path])
        if best is not None:
            best_by_path[path] = {"config": best["config"], "us": round(best["us"], 3)}
    from .restamp import ptx_sha256
    return {**entry, "config": chosen["config"], "sass_path": chosen["sass_path"], "us": round(chosen["us"], 3),
            "arch": arch, "ptx_sha256": ptx_sha256(wl.source, arch, {**wl.defines, **chosen["config"]}, kernel),
            "TBps": round(wl.moved_bytes / (chosen["us"] * 1e-6) / 1e12, 3),
            "runner_up": ({"config": runner_up["config"], "sass_path": runner_up["sass_path"],
                           "us": round(runner_up["us"], 3)} if runner_up else None),
            "best_by_path": best_by_path, "default": default,
            "default_us": next((round(r["us"], 3) for r in results
                                if r["config"] == default and r["sass_path"] == "nvjitlink"), None)}


class TuneError(RuntimeError):
    """Buckets `tune` could not measure (each: the device, the bucket, what went wrong)."""


def tune(kernel: str, shapes: list | None = None, devices: list | None = None, workers: int = 1,
         progress_stream=sys.stderr, timing: dict | None = None, failures: list | None = None) -> dict:
    """Tune `kernel` at each shape (default: its workload's buckets) on the GPUs `devices`
    (default: every GPU of the host): a table (ember.tuning.table) with their entries, each
    under the name and arch of the GPU that measured it. With several GPUs the shapes are
    shared out among them, one process per GPU, all measuring at once.

    A bucket whose measurement fails (a CUDA error, a worker that cannot start its GPU) does
    not take the others with it: with a `failures` list, (device, bucket, what went wrong)
    is appended to it and the table holds the buckets that were measured; without one,
    TuneError names them once every GPU has finished. (A run on four GPUs lost every bucket
    to one failing worker before.)"""
    from ..runtime import cuda
    from .workloads import buckets_of, source_of
    shapes = shapes or buckets_of(kernel)
    devices = list(range(cuda.device_count())) if devices is None else list(devices)
    out = T.new_table(kernel, source_of(kernel))
    if len(devices) == 1:
        done = [_bucket_job((kernel, shape, devices[0], workers, timing, progress_stream)) for shape in shapes]
    else:
        done = share_out(kernel, shapes, devices, max(1, workers // len(devices)), timing)
    failed = []
    for key, shape, entry, error in sorted(done, key=lambda r: shapes.index(r[1])):
        if error is None:
            out["devices"].setdefault(key, {})[shape] = entry
        else:
            failed.append((key, shape, error))
    if failed and failures is None:
        raise TuneError("; ".join(f"{shape} on {key}: {error}" for key, shape, error in failed))
    if failures is not None:
        failures.extend(failed)
    return out


def share_out(kernel: str, shapes: list, devices: list, workers: int, timing: dict | None,
              measure=None) -> list:
    """Measure `shapes` with one process per GPU of `devices`, all at once: a queue of
    buckets from which each GPU takes the next when it is done with one (buckets differ by
    10x in time, so a fixed share left GPUs idle while one worked through the long ones).
    `measure` (default _bucket_job) runs in the worker on (kernel, shape, device, workers,
    timing, None) and returns (device key, bucket, entry, error).

    A worker that ends without answering (a crash in the driver, killed for memory) fails
    the bucket it was measuring, with its exit status; the other GPUs go on with the rest,
    and what no worker is left to measure is failed too. A kernel source that does not
    compile is raised here, as the compiler reports it."""
    import multiprocessing
    from multiprocessing.connection import wait
    mp = multiprocessing.get_context("spawn")
    todo = mp.Queue()
    for index in range(len(shapes)):
        todo.put(index)
    for _ in devices:
        todo.put(None)
    # Each worker answers through a pipe of its own (a send is written when it returns: a
    # queue's feeder thread dies with a crashing process, and the answer before it with it)
    # and says in shared memory which bucket it measures.
    readers, procs, measuring = {}, [], []
    for device in devices:
        reader, writer = mp.Pipe(duplex=False)
        at = mp.Value("i", -1, lock=False)
        p = mp.Process(target=_gpu_worker, args=(measure or _bucket_job, kernel, shapes, device, workers, timing,
                                                todo, writer, at))   # not daemonic: it starts compile workers
        p.start()
        writer.close()
        readers[reader] = len(procs)
        procs.append(p)
        measuring.append(at)
    done = {}
    try:
        while readers and len(done) < len(shapes):
            for reader in wait(list(readers)):
                try:
                    what, index, result = reader.recv()
                except EOFError:            # the worker has ended: all it sent is read
                    i = readers.pop(reader)
                    procs[i].join()
                    if measuring[i].value >= 0:
                        index = measuring[i].value
                        done[index] = (f"cuda:{devices[i]}", shapes[index], None, f"the worker measuring on "
                                       f"cuda:{devices[i]} ended (exit status {procs[i].exitcode})")
                    continue
                if what == "raise":
                    raise result
                done[index] = result
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
            p.join()
    return [done.get(i, (f"cuda:{devices[0]}", shape, None, "not measured: every GPU's worker had ended"))
            for i, shape in enumerate(shapes)]


def _gpu_worker(measure, kernel, shapes, device, workers, timing, todo, answers, measuring) -> None:
    """A worker process: the next bucket from `todo` on its GPU, until it takes None."""
    from ..diagnostics import CompileError
    while (index := todo.get()) is not None:
        measuring.value = index
        try:
            result = measure((kernel, shapes[index], device, workers, timing, None))
        except CompileError as e:
            answers.send(("raise", index, e))
            return
        answers.send(("done", index, result))
        measuring.value = -1


def _bucket_job(job) -> tuple:
    """(device key, bucket, its entry, None), or (device key, bucket, None, what went wrong)
    where measuring it raised. A kernel source that does not compile is raised as it is: it
    fails every bucket alike, and the command reports it as the compiler does."""
    from ..diagnostics import CompileError
    kernel, shape, device, workers, timing, stream = job
    stream = stream or sys.stderr
    key = f"cuda:{device}"
    try:
        key = device_key(device)
        stream.write(f"ember tune: {kernel} {shape} on cuda:{device} ({key})\n")
        return key, shape, tune_bucket(kernel, shape, device, workers, stream, timing), None
    except CompileError:
        raise
    except Exception as e:
        import os
        if os.environ.get("EMBER_DEBUG"):
            import traceback
            traceback.print_exc()
        first = str(e).splitlines()[0] if str(e) else ""
        return key, shape, None, f"{type(e).__name__}: {first}".rstrip(": ")


def device_key(device: int) -> str:
    """The name and arch a table files a GPU's entries under."""
    from ..runtime import cuda
    ctx = cuda.context(device)
    return T.device_key(ctx.name, ctx.arch)
