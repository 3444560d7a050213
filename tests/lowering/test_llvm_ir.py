"""ember.lowering.llvm_ir writes LLVM IR text that LLVM parses and verifies: every builder
method, quoting of names, blocks named like arguments, metadata, globals, inline asm,
instructions inserted before others (allocas in the entry block)."""

import llvmlite.binding as llvm
import pytest

from ember.lowering import llvm_ir as ll

I1, I8, I32, I64 = (ll.IntType(n) for n in (1, 8, 32, 64))
F32 = ll.FloatType()


def parse(module: ll.Module):
    m = llvm.parse_assembly(str(module))
    m.verify()
    return m


def new_module():
    m = ll.Module("t")
    m.triple = "nvptx64-nvidia-cuda"
    return m


def test_every_builder_method_makes_valid_ir():
    m = new_module()
    g = ll.GlobalVariable(m, ll.ArrayType(F32, 8), "k.shared tile", addrspace=3)    # a name to quote
    g.linkage, g.align, g.initializer = "internal", 16, ll.Constant(ll.ArrayType(F32, 8), ll.Undefined)
    table = ll.GlobalVariable(m, ll.ArrayType(I32, 2), "table", addrspace=4)
    table.linkage, table.global_constant = "internal", True
    table.initializer = ll.Constant(ll.ArrayType(I32, 2), [ll.Constant(I32, 3), ll.Constant(I32, 4294967295)])
    fma = ll.Function(m, ll.FunctionType(F32, [F32, F32, F32]), "llvm.fma.f32")
    helper = ll.Function(m, ll.FunctionType(ll.LiteralStructType([F32, I32]), [F32]), "helper")
    helper.linkage = "internal"
    helper.attributes.add("alwaysinline")
    hb = ll.IRBuilder(helper.append_basic_block("entry"))
    agg = hb.insert_value(ll.Constant(ll.LiteralStructType([F32, I32]), ll.Undefined), helper.args[0], 0)
    hb.ret(hb.insert_value(agg, ll.Constant(I32, 7), 1))

    f = ll.Function(m, ll.FunctionType(ll.VoidType(), [ll.PointerType(addrspace=1), I32, F32]), "kern")
    f.calling_convention = "ptx_kernel"
    p, n, x = f.args
    p.name, n.name, x.name = "p", "entry", "x"           # an argument named like the entry block
    p.add_attribute("noalias")
    p.attributes.align = 16
    m.add_named_metadata("nvvm.annotations", m.add_metadata([f, "maxntidx", ll.Constant(I32, 128)]))
    entry = f.append_basic_block("entry")
    b = ll.IRBuilder(entry)
    i = b.add(b.mul(n, ll.Constant(I32, 3)), b.sub(n, ll.Constant(I32, 1)))
    i = b.xor(b.or_(b.and_(i, n), n), b.not_(n))
    i = b.ashr(b.lshr(b.shl(i, ll.Constant(I32, 2)), ll.Constant(I32, 1)), ll.Constant(I32, 1))
    i = b.select(b.icmp_unsigned("<", i, n), b.udiv(i, n), b.urem(i, n))
    i = b.select(b.icmp_signed(">=", i, n), b.sdiv(i, n), b.srem(i, b.neg(n)))
    y = b.fdiv(b.fmul(b.fsub(b.fadd(x, x), x), x), x)
    y = b.call(fma, [y, b.fneg(y), x])
    c = b.and_(b.fcmp_ordered("<", y, x), b.fcmp_unordered("uno", y, y))
    c = b.or_(c, b.not_(b.fcmp_unordered("!=", y, x)))
    w = b.zext(b.trunc(b.sext(i, I64), I8), I32)
    z = b.fptrunc(b.fpext(b.sitofp(w, F32), ll.DoubleType()), F32)
    z = b.fadd(z, b.uitofp(w, F32))
    bits = b.bitcast(z, I32)
    assert b.bitcast(bits, I32) is bits                         # to its own type: the value
    v = b.insert_element(ll.Constant(ll.VectorType(F32, 2), ll.Undefined), z, ll.Constant(I32, 0))
    z = b.extract_element(v, ll.Constant(I32, 0))
    r = b.call(helper, [z])
    z = b.fadd(b.extract_value(r, 0), b.sitofp(b.extract_value(r, 1), F32))
    addr = b.gep(p, [b.zext(w, I64)], source_etype=F32)
    old = b.load(addr, typ=F32, align=4)
    old.set_metadata("invariant.load", m.add_metadata([]))
    b.store(b.fadd(old, z), addr, align=4)
    sh = b.gep(g.gep([ll.Constant(I32, 0), ll.Constant(I32, 0)]), [ll.Constant(I64, 1)], source_etype=F32)
    b.store(z, sh)
    b.atomic_rmw("add", b.bitcast(addr, ll.PointerType(addrspace=1)), bits, "monotonic")
    pair = b.cmpxchg(b.bitcast(addr, ll.PointerType(addrspace=1)), bits, w, "monotonic", "monotonic")
    asm = ll.InlineAsm(ll.FunctionType(I32, [I32]), "abs.s32 $0, $1;", "=r,r")
    w = b.add(b.call(asm, [b.extract_value(pair, 0)]),
              b.asm(ll.FunctionType(I32, [I32]), "mov.b32 $0, $1;", "=r,r", [w], False))
    with b.goto_entry_block():                                  # an alloca before everything
        b.position_before(entry.instructions[0])
        arr = b.alloca(ll.ArrayType(F32, 4))
        arr.align = 4
    loop, body, done = f.append_basic_block("loop"), f.append_basic_block("loop"), f.append_basic_block("done")
    b.cbranch(c, loop, done)
    b.position_at_end(loop)
    iv = b.phi(I32)
    iv.add_incoming(ll.Constant(I32, 0), entry)
    b.branch(body)
    b.position_at_end(body)
    b.store(x, b.gep(arr, [b.zext(iv, I64)], source_etype=F32), align=4)
    nxt = b.add(iv, w)
    iv.add_incoming(nxt, body)
    b.cbranch(b.icmp_unsigned("<", nxt, ll.Constant(I32, 4)), loop, done)
    b.position_at_end(done)
    b.ret_void()
    text = str(m)
    parsed = parse(m)
    assert str(f.blocks[1].name) == "loop" and f.blocks[2].name == "loop.1"
    assert "!invariant.load !1" in text and "nvvm.annotations" in text
    assert '@"k.shared tile"' in str(parsed)
    first = text.split('@"kern"')[1].split('"entry.1":\n')[1].lstrip()
    assert first.startswith("%") and "alloca [4 x float], align 4" in first.splitlines()[0]


def test_i1_constants_and_quoting():
    assert ll.Constant(I1, 1).ref == "true" and ll.Constant(I1, 0).ref == "false"
    m = new_module()
    f = ll.Function(m, ll.FunctionType(ll.VoidType(), []), 'we"ird\\name')
    ll.IRBuilder(f.append_basic_block("then.3")).ret_void()
    assert parse(m).get_function('we"ird\\name').name == 'we"ird\\name'   # escaped, found by its name


def test_a_global_name_is_defined_once():
    m = new_module()
    ll.GlobalVariable(m, I32, "g")
    with pytest.raises(KeyError):
        ll.GlobalVariable(m, I32, "g")
