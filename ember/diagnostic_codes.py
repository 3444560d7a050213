"""Every diagnostic code with its title and what it means: one home, read by the diagnostics
(`ember.diagnostics`), by `ember explain CODE`, and by docs/diagnostics.md, which
tests/test_docs.py keeps equal to it. Errors are E (compile, exit status 1), S (found by the
simulator while running a kernel), R remarks (asked for with `--remarks`), W warnings."""

CODES: dict[str, tuple[str, str]] = {
    'E0001': ('unexpected token',
              'The parser met a token that cannot come next. The label lists what could; a missing '
              '`;` is reported after the previous token, and `=` in a condition suggests `==`.'),
    'E0002': ('unexpected end of input',
              'The file ended inside a declaration: the error points at the `{` that is never '
              'closed, and a note names the `}` that is probably missing its partner (one indented '
              'less than the line of the `{` it closes).'),
    'E0003': ('unexpected character',
              'A character that is not part of the language (`$`, `@`, `#`, ...). One that would '
              'not print (a NUL, a control character, a lone surrogate in text given from Python) '
              'is named by its code point and shown as a visible stand-in.'),
    'E0004': ('unterminated block comment',
              'A `/*` comment that no `*/` closes before the end of the file.'),
    'E0101': ('undefined name',
              'A name that is not declared in any enclosing scope; a similar name is suggested.'),
    'E0102': ('duplicate definition',
              'Two kernels/functions, parameters or const parameters with one name; or a kernel or '
              "function named like a type, a builtin, or in the `__ember_` namespace of Ember's own "
              'library functions.'),
    'E0103': ('unknown type',
              'A type name that does not exist (`f31`).'),
    'E0104': ('unknown function',
              'A call to something that is not a function: an unknown name, a variable, or a kernel '
              '(kernels cannot be called); also a type or type parameter used as a value.'),
    'E0105': ('unknown field',
              '`thread_idx` and friends have `.x`, `.y`, `.z` only; other values have no fields.'),
    'E0106': ('const parameter has no value',
              "A kernel's const parameter has neither a `-D` value nor a default."),
    'E0107': ('const value parameters are only allowed on kernels',
              '`<const N: u32>` parameters are allowed on kernels only (device functions may take '
              'type parameters, `<const T: type>`, inferred from their arguments); pass values to '
              'functions as arguments.'),
    'E0108': ('recursive device function',
              'A device function calls itself (directly or not); functions are inlined, so '
              'recursion is impossible.'),
    'E0109': ('no kernel in program',
              'The file declares no kernel, so there is nothing to compile.'),
    'E0110': ('cannot import',
              'An `import "path";` names a file that does not exist or cannot be read, or a `std/` '
              'path that leaves the standard library. A path is relative to the importing file, '
              "then each `-I` directory and EMBER_INCLUDE_PATH's; `std/...` is the standard "
              'library.'),
    'E0201': ('mismatched types',
              'Two types that must be equal are not. There are no implicit conversions: write '
              '`T(x)`.'),
    'E0202': ('operator not defined for this type',
              'An operator applied to a type it does not support (e.g. `%` on floats, `-` on '
              'unsigned).'),
    'E0203': ('literal out of range',
              'A constant that does not fit its type (`let a: u8 = 300;`).'),
    'E0204': ('invalid cast',
              'A conversion the language does not have (number to `bool`, `bool` to float, pointer '
              'to number).'),
    'E0205': ('invalid bit cast',
              'A bit cast between types of different sizes, across address spaces, or adding `mut`.'),
    'E0206': ('wrong number of arguments',
              'A call with the wrong number of arguments.'),
    'E0207': ('value cannot be indexed',
              'Indexing something that is neither a pointer nor an array.'),
    'E0208': ('index is not an integer',
              'An index that is not an integer.'),
    'E0209': ('condition is not a bool',
              'An `if`/`while` condition that is not `bool`; compare explicitly (`x != 0`).'),
    'E0210': ('store through a read-only pointer',
              'A store through a `*global T` (read-only) pointer.'),
    'E0211': ('tuple pattern does not match',
              "A tuple pattern whose number of names differs from the tuple's."),
    'E0212': ('tuple used as a single value',
              'A tuple used where a single value is needed; destructure it with `let (a, b) = ...`.'),
    'E0213': ('function without a result used as a value',
              'A call to a function without a result used as a value.'),
    'E0214': ('invalid pointer type',
              'A type that is not allowed where it appears (pointer to `bool`, `bool` kernel '
              'parameter, non-global kernel pointer, misplaced `align` or `stream`, tuple type '
              'outside a result).'),
    'E0216': ('index out of bounds',
              'A constant index outside a per-thread or shared array, or a builtin that touches '
              "elements past an array's end from a constant index (`mma_m16n8k16` reads 8 A, 4 B "
              'and 4 accumulator elements from its indices).'),
    'E0217': ('array used as a value',
              'An array used as a value, or initialized from one (arrays start as zeros and are '
              'used element by element).'),
    'E0218': ('invalid swizzled tile',
              'A `swizzle(N)` shared tile that is not one (N other than 32, 64 or 128; rows of other '
              'than N bytes; rows not in multiples of 8; sized at launch), a swizzled tile passed to '
              'a builtin that would ignore its order, or a `wgmma` operand that is not a swizzled tile '
              'or starts where the hardware cannot read it.'),
    'E0301': ('assignment to an immutable binding',
              'Assignment to a `let` binding, a parameter, a loop variable, a constant or an array '
              'as a whole.'),
    'E0302': ('invalid assignment target',
              'The left side of `=` is neither a variable nor an element `p[i]`.'),
    'E0303': ('`break` or `continue` outside a loop',
              '`break` or `continue` outside a loop.'),
    'E0304': ('wrong kind of `return`',
              '`return value;` in a kernel or result-less function, or `return;` in a function with '
              'a result.'),
    'E0305': ('function may end without returning a value',
              'A function with a result can reach its end without `return`.'),
    'E0306': ('invalid loop step',
              'A `for` loop with a constant step that is not positive.'),
    'E0307': ("shared array outside a kernel's top level",
              "A `shared` array declared outside a kernel's top-level block."),
    'E0401': ('not a constant expression',
              'A constant expression was required (block size, array length, const default) but the '
              'expression depends on runtime values.'),
    'E0402': ('invalid block size',
              'A block size of 0, more than 1024/1024/64 in a dimension, or more than 1024 threads; '
              'a cluster of more than 16 blocks; or an empty array.'),
    'E0403': ('constant evaluation failed',
              'Constant folding failed (division by zero, a float constant with an integer-only '
              'operator, ...).'),
    'E0404': ('invalid value for a const parameter',
              "A `-D` value that does not parse as the const parameter's type or does not fit it; or a "
              "`tune [...]` list that repeats a value, leaves out the parameter's default, or is given "
              'to a type parameter.'),
    'E0405': ('too much shared memory',
              "A kernel's `shared` arrays exceed what a block may declare (48 KB on every "
              'architecture; ptxas places each array 16-byte aligned).'),
    'E0406': ('too much per-thread memory',
              "A per-thread array, or all of a kernel's (with those of the device functions it "
              'inlines, once per call), exceed 512 KB per thread.'),
    'E0407': ('invalid launch bound',
              "`min_blocks(N)` without `block(...)`, or N blocks of the kernel's block size cannot "
              'be resident on one SM at once (more than 32 blocks or 2048 threads).'),
    'E0408': ('static assertion failed',
              '`static_assert(COND)` with a condition that is false for the const values of this '
              'compile (the note lists them): a kernel states what its const parameters must satisfy '
              '(`static_assert(COLS % 8 == 0)`).'),
    'E0409': ('array access out of bounds after unrolling',
              'A load or store of a per-thread or shared array (or the elements an op touches from an '
              'index: an mma\'s fragments, a copy\'s destination) at elements that are constants once '
              'device functions are inlined, `unroll for` loops unrolled and constants folded, and '
              'that lie outside the array (or outside its row of a 2-D array): out of bounds '
              'whenever it runs. Typically a const parameter larger than the arrays a device function '
              'indexes through a pointer parameter; the note names the array. Indices the source '
              'writes as constants are E0216.'),
    'E0501': ('not available on the target architecture',
              'A builtin whose instruction needs a newer GPU (its op declares a minimum `sm`, e.g. '
              'tensor-core ops need sm_80) used with an older `--arch`.'),
    'E0502': ('program too large once inlined',
              'Inlining every device function call would make a kernel larger than 200,000 IR ops '
              '(functions that call others several times multiply); the notes give the call chain.'),
    'E0902': ('PTX validation failed',
              'The emitted PTX did not assemble (`--check`); this is a bug in Ember.'),
    'S0001': ('out-of-bounds access',
              '(simulator) A load or store outside its buffer or array; names the thread, the '
              'element and the size.'),
    'S0002': ('misaligned access',
              '(simulator) An access at an address that is not a multiple of its size (the GPU '
              'faults on these).'),
    'S0003': ('read of uninitialized shared memory',
              '(simulator) A thread reads a shared element no thread of its block has written.'),
    'S0004': ('data race',
              '(simulator) Two threads touch one element, at least one writing, and nothing orders '
              'them: no `barrier()` of their block between them, and no release that the second '
              'thread acquired (a missing fence or a scope too narrow: docs/memory_model.md); or '
              'atomics of one element by different blocks at `cta` scope. Atomics are not races '
              'with each other.'),
    'S0005': ('divergent barrier',
              '(simulator) Some threads of a block reach a `barrier()` that others (not finished '
              'with `return`) do not.'),
    'S0006': ('shuffle from an inactive lane',
              '(simulator) A warp shuffle reads a lane that is not executing it (inside a divergent '
              '`if`, or past the end of a partial warp).'),
    'S0007': ('step limit exceeded',
              '(simulator) A loop ran more iterations than the step limit; it may never end.'),
    'S0008': ('kernel too large to simulate',
              "(simulator) One block's per-thread and shared arrays (with their race-tracking "
              "state) need more than the simulator's 2 GiB of host memory."),
    'S0009': ('access to memory an asynchronous copy is still writing',
              '(simulator) A thread reads or writes shared bytes that a `cp_async_*` copy will '
              'write when its group is waited for (`cp_async_wait`): wait for the group first, and '
              '`barrier()` after the wait when another thread reads them; or reads bytes a '
              '`cp_async_bulk` copy delivers on an mbarrier phase the thread has not waited for '
              '(`mbarrier_try_wait` of its parity).'),
    'S0010': ('warp-wide op run by part of a warp',
              '(simulator) `mma_m16n8k16` or `ldmatrix_*` executed by some lanes of a warp and not '
              'others (inside a divergent branch, or in a block whose size is not a multiple of '
              '32): tensor-core ops are executed by the whole warp together; likewise '
              '`setmaxnreg_*` by part of a warpgroup (4 consecutive warps).'),
    'S0011': ('mbarrier deadlock or extra arrival',
              '(simulator) A wait on an mbarrier phase that nothing running can complete: it lacks '
              'arrivals, or transaction bytes no bulk copy delivers (the message says which); or an '
              'arrival on a phase that already had all it was initialized for.'),
    'S0012': ('bulk store of unfenced shared memory',
              '(simulator) A `cp_async_bulk_store` reads shared bytes that an ordinary store wrote and its '
              'writer has not made visible to the copy engine: the writer must call '
              '`fence_proxy_async()` (then `barrier()` when another thread starts the store); or a '
              '`wgmma` reads such bytes of its tiles.'),
    'S0013': ('wgmma misuse',
              '(simulator) A `wgmma` without a `wgmma_fence()` since its thread touched the registers '
              'it reads (or before its first), with operands that differ across its warpgroup, or with '
              'an operand starting off a multiple of 8 rows or a 16-byte chunk.'),
    'S0014': ('global access before griddep_wait in a programmatic kernel',
              '(simulator) A thread of a kernel that the compiler proved waits at `griddep_wait()` before it '
              'touches global memory (KernelInfo.programmatic: launched as a programmatic dependent launch, '
              'which may start while the kernel before it still runs) read or wrote global memory before '
              'that wait. The proof or a pass that moved the access is wrong: a compiler bug, please '
              'report it.'),
    'S0015': ('access to another block\'s shared memory not ordered before its exit',
              '(simulator) A `dsmem_load` or `dsmem_store` into another block of the cluster that no '
              '`cluster_barrier()` after it orders before that block exits, or an arrival on another '
              'block\'s mbarrier (`mbarrier_arrive_cluster`) that neither that block\'s wait for the '
              'phase it completes nor a cluster barrier orders so: the block may be gone, and its shared '
              'memory with it (the GPU reads or writes what is there, or faults). End such a kernel with a '
              '`cluster_barrier()` after the last remote access.'),
    'R0001': ('memory access not widened',
              '(remark, with `--remarks`) Contiguous loads or stores that the vectorize pass did not '
              'merge into one 64- or 128-bit access, and why: the pointer or the index is not '
              'provably aligned (promise `align(16)` on the parameter, or write the index as a '
              'visible multiple), the accesses are out of order, something between them may '
              'write the same memory, or each index converts a sum (`u64(j + k)`: the narrow sum '
              'may wrap, so the accesses are not known to be adjacent; write `u64(j) + u64(k)`). '
              'Accesses to per-thread arrays get none (they live in registers).'),
    'W0001': ('unused definition from the command line',
              'A `-D NAME` that no kernel declares (often a typo).'),
    'W0002': ('unreachable code',
              'Statements after `return`, `break` or `continue` that can never run.'),
    'W0003': ('`unroll for` not unrolled',
              'An `unroll for` loop the optimiser kept as a loop: its bounds are not constants '
              'after inlining and constant folding, or its trip count (over 1024) or unrolled size '
              'is too large. It runs as written; per-thread arrays it indexes may then live in '
              'local memory.'),
    'W0004': ('per-thread arrays in local memory',
              '(At -O2 and -O3.) A kernel whose compiled code keeps per-thread arrays in local memory (a stack '
              'frame: memory behind the L1 cache, many times slower than registers), because '
              'an array is indexed by a value that is not a constant after unrolling and '
              'inlining (a dynamic index, or a loop that was not unrolled: W0003), or because '
              'the function is so large that the compiler keeps its arrays in memory (over '
              'ember.lowering.ptx.LARGE_FUNCTION LLVM instructions). Index arrays with `unroll '
              'for` variables or constants, or split the kernel; `ember compile --check` shows '
              'the stack frame and spills after assembly.'),
}
