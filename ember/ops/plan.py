"""Checked once, launched many times: an ember.ops call is a plan - its arguments checked
and its launches packed - kept under the signature of what it was called with (each
tensor's address, shape, strides, dtype and device; each scalar's value). A decode loop
calls the same ops on the same buffers every step: the second call finds the plan and only
enqueues its launches (on the current stream of that call). The checks depend on nothing
else, so a plan found is a call checked; a plan holds no reference to the tensors (only
their addresses, which the key repeats), and the oldest plans are dropped past MAX_PLANS -
except that a plan recorded into a CUDA graph keeps its own buffers while the process lives
(or until forget_captured()): a graph replays into them at every launch, long after its plan
may have been dropped."""

from __future__ import annotations

from collections import OrderedDict

from ..runtime.cuda import caller_stream, capturing

MAX_PLANS = 1024
_plans: OrderedDict = OrderedDict()
_launched = [0]
# Plans with buffers of their own (Keep) that were enqueued into a CUDA graph being captured:
# the graph replays their kernels into those buffers whenever it is launched, so they are
# kept, past MAX_PLANS and clear(), until forget_captured().
_captured: dict = {}


class Keep:
    """A plan's own buffer (a kernel's scratch): kept alive with the plan - and, once a CUDA
    graph has recorded the plan's launches, with the process (see forget_captured) -
    launches nothing."""

    def __init__(self, obj):
        self.obj = obj

    def __call__(self, stream) -> None:
        pass


def launched() -> int:
    """Kernel launches ember.ops has enqueued in this process (a decode step's count is the
    difference around it)."""
    return _launched[0]


def signature(a):
    """What a plan of an argument depends on: a tensor's address, shape, strides, dtype and
    device, or a scalar's type and value."""
    if a is None or isinstance(a, (bool, int, float, str)):
        return (type(a).__name__, a)
    mod = type(a).__module__.split(".")[0]
    if mod == "torch" and hasattr(a, "data_ptr"):
        return ("torch", a.data_ptr(), tuple(a.shape), a.stride(), str(a.dtype), str(a.device))
    fields = getattr(a, "plan_signature", None)
    if fields is not None:
        return fields()
    try:
        cai = a.__cuda_array_interface__
    except (AttributeError, TypeError, ValueError, RuntimeError):
        cai = None
    if isinstance(cai, dict):
        return ("cai", cai["data"], tuple(cai["shape"]), cai["typestr"], cai.get("strides"))
    return ("object", id(a))          # checked every call: never equal to another call's


def planned(op: str, args: tuple, build) -> list:
    """The plan of `op` on `args`: the one kept for their signature, or the one `build()`
    makes (checking every argument, raising ArgumentError) and returns as a list of prepared
    launches - kept, not launched (run launches it)."""
    key = (op,) + tuple(signature(a) for a in args)
    uncacheable = any(k[0] == "object" for k in key[1:])
    launches = None if uncacheable else _plans.get(key)
    if launches is None:
        launches = build()
        if not uncacheable:
            _plans[key] = launches
            if len(_plans) > MAX_PLANS:
                _plans.popitem(last=False)
    else:
        _plans.move_to_end(key)
    return launches


def launch_count(launches: list) -> int:
    """The kernel launches of a plan (its own buffers launch nothing)."""
    return sum(not isinstance(launch, Keep) for launch in launches)


def run(op: str, args: tuple, build) -> None:
    """Enqueue the launches of `op` on `args` (the plan of `planned`)."""
    launches = planned(op, args, build)
    stream = caller_stream(args)
    for launch in launches:
        launch(stream)
    _launched[0] += launch_count(launches)
    if (stream is not None and id(launches) not in _captured and any(isinstance(launch, Keep) for launch in launches)
            and capturing(stream)):       # (a driver call: only for plans with buffers, once pinned no more)
        _captured[id(launches)] = launches


def clear() -> None:
    """Forget every plan (their kernels stay loaded). The buffers of plans a CUDA graph
    recorded stay (forget_captured)."""
    _plans.clear()


def forget_captured() -> None:
    """Let go of the buffers of the plans CUDA graphs recorded (decode attention's partial
    results, the f32 GEMVs' digits, the QKV projection's rows): only once no graph that
    recorded an ember.ops call will be launched again - its kernels would write into memory
    that is no longer theirs."""
    _captured.clear()
