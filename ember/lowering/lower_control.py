"""Lowering of calls and of structured control flow into a CFG (branches, loops and
phis); each op with regions is a generator that yields `L.region(...)` per region."""

from __future__ import annotations

from .registry import lowers
from .llvm_lower import lltype


@lowers("func.call")
def _call(L, op, args):
    callee = L.L.functions[op.attrs["callee"]]
    r = L.b.call(callee, args)
    if len(op.results) > 1:
        return [L.b.extract_value(r, i) for i in range(len(op.results))]
    return [r] if op.results else []


@lowers("scf.if")
def _if(L, op, args):
    b = L.b
    then_bb, else_bb, merge_bb = L.block("then"), L.block("else"), L.block("endif")
    b.cbranch(args[0], then_bb, else_bb)
    incoming = []
    for bb, region in ((then_bb, op.regions[0]), (else_bb, op.regions[1])):
        b.position_at_end(bb)
        vals = yield L.region(region)
        incoming.append((vals, b.block))
        b.branch(merge_bb)
    b.position_at_end(merge_bb)
    results = []
    for i, r in enumerate(op.results):
        phi = b.phi(lltype(r.type))
        for vals, bb in incoming:
            phi.add_incoming(vals[i], bb)
        results.append(phi)
    return results


@lowers("scf.for")
def _for(L, op, args):
    b = L.b
    lo, hi, step, *inits = args
    t = op.operands[0].type
    pre = b.block
    header, body_bb, exit_bb = L.block("for.head"), L.block("for.body"), L.block("for.end")
    b.branch(header)
    b.position_at_end(header)
    iv = b.phi(lo.type)
    iv.add_incoming(lo, pre)
    carried = []
    for v in inits:
        p = b.phi(v.type)
        p.add_incoming(v, pre)
        carried.append(p)
    cond = b.icmp_signed("<", iv, hi) if t.signed else b.icmp_unsigned("<", iv, hi)
    b.cbranch(cond, body_bb, exit_bb)
    b.position_at_end(body_bb)
    body = op.regions[0]
    L.bind_args(body, [iv] + carried)
    yielded = yield L.region(body)
    nxt = b.add(iv, step)
    latch = b.block
    b.branch(header)
    iv.add_incoming(nxt, latch)
    for p, v in zip(carried, yielded):
        p.add_incoming(v, latch)
    b.position_at_end(exit_bb)
    return carried


@lowers("scf.while")
def _while(L, op, args):
    b = L.b
    pre = b.block
    before_bb, after_bb, exit_bb = L.block("while.cond"), L.block("while.body"), L.block("while.end")
    b.branch(before_bb)
    b.position_at_end(before_bb)
    phis = []
    for v in args:
        p = b.phi(v.type)
        p.add_incoming(v, pre)
        phis.append(p)
    before, after = op.regions
    L.bind_args(before, phis)
    cond, *forwarded = yield L.region(before)
    b.cbranch(cond, after_bb, exit_bb)
    b.position_at_end(after_bb)
    L.bind_args(after, forwarded)
    yielded = yield L.region(after)
    latch = b.block
    b.branch(before_bb)
    for p, v in zip(phis, yielded):
        p.add_incoming(v, latch)
    b.position_at_end(exit_bb)
    return forwarded


