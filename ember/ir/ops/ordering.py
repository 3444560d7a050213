"""Memory ordering as the PTX memory model defines it: fences, and the ordering and scope
of atomic operations (docs/memory_model.md).

Every atomic (`mem.atomic`, `mem.cas`, `mem.atomic_load`, `mem.atomic_store`) has an
order and a scope; without the attributes it is relaxed at gpu scope, as PTX's `atom` is.
- order: `relaxed` (atomic only), `acquire` (later accesses of this thread stay after it
  and see what the releaser published), `release` (earlier accesses stay before it and
  are published to an acquirer that reads its value), `acq_rel` (both); a fence may also
  be `sc` (sequentially consistent, PTX `fence.sc`).
- scope: the threads the operation synchronizes with: `cta` (its block), `cluster` (its
  thread-block cluster, sm_90+), `gpu` (the grid), `sys` (the host and other GPUs too).

A relaxed atomic followed by an acquire fence acquires; a release fence followed by a
relaxed atomic write releases (the fence's snapshot travels with every later write of
the thread). Two threads synchronize only if each one's scope includes the other.
The simulator models this with happens-before knowledge (ember.sim.ordering) and reports
an access that another thread's access races with because no such chain orders them.
"""

from __future__ import annotations

from ..formats import Atomic, Load, Operands
from ..opdef import MAY_FAULT, READS_MEMORY, SIDE_EFFECT, WRITES_MEMORY, Attr, defop

ORDERS = ("relaxed", "acquire", "release", "acq_rel")
FENCE_ORDERS = ("acquire", "release", "acq_rel", "sc")
SCOPES = ("cta", "cluster", "gpu", "sys")
DEFAULT_ORDER, DEFAULT_SCOPE = "relaxed", "gpu"

# Which orders acquire and which release (an sc fence does both).
ACQUIRES = frozenset({"acquire", "acq_rel", "sc"})
RELEASES = frozenset({"release", "acq_rel", "sc"})


def order_attr(*orders: str) -> Attr:
    return Attr("enum", orders, required=False, doc="the memory order (relaxed when absent)")


SCOPE_ATTR = Attr("enum", SCOPES, required=False, doc="the synchronization scope (gpu when absent)")


def order_of(op) -> str:
    return op.attrs.get("order", DEFAULT_ORDER)


def scope_of(op) -> str:
    return op.attrs.get("scope", DEFAULT_SCOPE)


def scope_min_sm(attrs: dict) -> int:
    """The oldest architecture an op's scope needs (clusters exist from sm_90 on)."""
    return 90 if attrs.get("scope") == "cluster" else 0


def synchronizes(op) -> bool:
    """Whether the op orders other memory accesses around it (a fence, or an atomic that
    acquires or releases): passes must not move loads or stores across it."""
    return op.name == "mem.fence" or order_of(op) != DEFAULT_ORDER


def _fence_sim(m, op, args, mask):
    m.fence(op, op.attrs.get("order", "sc"), scope_of(op), mask)
    return []


defop("mem.fence", Operands(), attrs={"order": Attr("enum", FENCE_ORDERS, required=False,
                                                    doc="acquire, release, acq_rel or sc (sc when absent)"),
                                      "scope": SCOPE_ATTR},
      traits=(READS_MEMORY, WRITES_MEMORY, SIDE_EFFECT), simulate=_fence_sim, min_sm_for=scope_min_sm,
      example="mem.fence {order = acq_rel, scope = gpu}",
      doc="A memory fence (PTX `fence.sc` or `fence.acq_rel` at the scope): with a later relaxed "
          "atomic write it releases, after an earlier relaxed atomic read it acquires.")


def _atomic_load_sim(m, op, args, mask):
    return [m.atomic_load(op, args[0], args[1], op.results[0].type, mask)]


def _atomic_store_sim(m, op, args, mask):
    m.atomic_store(op, args[0], args[1], op.operands[2].type, args[2], mask)
    return []


_ATOMIC_TYPES = "{i32,u32,i64,u64,f32,f64}"

defop("mem.atomic_load", Load(), operands=f"ptr: *T{_ATOMIC_TYPES}, index: I", results="result: T",
      attrs={"order": order_attr("relaxed", "acquire"), "scope": SCOPE_ATTR},
      traits=(READS_MEMORY, WRITES_MEMORY, MAY_FAULT), simulate=_atomic_load_sim, min_sm_for=scope_min_sm,
      example="%v = mem.atomic_load %p[%i] {order = acquire, scope = gpu} : u32",
      example_args="%p: *mut global u32, %i: u32",
      doc="An atomic load of p[i] (PTX `ld.relaxed` or `ld.acquire` at the scope). It writes nothing, "
          "but counts as a write for the passes: later accesses must not move above an acquire.")
defop("mem.atomic_store", Atomic(None, 1), operands=f"ptr: *T{_ATOMIC_TYPES}, index: I, value: T",
      attrs={"order": order_attr("relaxed", "release"), "scope": SCOPE_ATTR},
      traits=(WRITES_MEMORY, MAY_FAULT), simulate=_atomic_store_sim, min_sm_for=scope_min_sm,
      example="mem.atomic_store %p[%i], %v {order = release, scope = gpu} : u32",
      example_args="%v: u32, %p: *mut global u32, %i: u32",
      doc="An atomic store to p[i] (PTX `st.relaxed` or `st.release` at the scope).")
