"""Going on after a graph break: generated CPython 3.11, 3.12 and 3.13 code objects.

At a graph break the host program hands back the break's live arrays. With the trace's resume
plan (Tracer::resumePlan) they recreate the frame state before the breaking instruction: its
locals and its value stack. Two kinds of code objects, both cut from the original code object
so that lines, columns and exception handlers stay those of the user's source, take it from
there:

* a *step* function runs the breaking instruction (with the PRECALL/KW_NAMES of a call) for
  real on the top of the stack and returns the new top: the unsupported call, the print, the
  store into an argument happens once, with real values;
* a *resume* function takes the locals and the stack as arguments, pushes the stack back and
  jumps into the original bytecode at the resume offset. Dynamir compiles it like any other
  function (traced from its real arguments, guarded, cached: a continuation), or runs it
  eagerly when the rest of the frame cannot be compiled.

TorchDynamo does the same with its `__resume_at_*` functions. A resume function is always cut
from the original code, never from another resume function, so a break inside a loop resumes
the same continuation on every iteration instead of nesting prologues.

The code is the running interpreter's: opcodes are looked up by name in its `dis.opmap` (3.13
renumbered nearly all of them) and inline cache sizes in its `dis._inline_cache_entries`. What a
call looks like on the stack (3.11/3.12: NULL before the callable, PRECALL in 3.11, KW_NAMES
before CALL; 3.13: NULL after the callable, the kwnames tuple on the stack for CALL_KW) is the
resume plan's business: the stack layout and the step's instruction range say it, and the code
here pushes and runs exactly that. What differs here per version:

* free-variable slots move up by the number of stack arguments: LOAD_DEREF and friends in every
  version, and in 3.13 also LOAD_FAST on a cell or free slot (LOAD_CLOSURE became LOAD_FAST);
* liveness reads 3.12's LOAD_FAST_CHECK and LOAD_FAST_AND_CLEAR and 3.13's fused
  LOAD_FAST_LOAD_FAST, STORE_FAST_LOAD_FAST and STORE_FAST_STORE_FAST; RETURN_CONST (3.12+)
  does not fall through;
* 3.12 inlines comprehensions, whose exception-table entries lead to a handler that only puts
  the comprehension variable back and re-raises: that is not a try block.

The line table and exception table formats are the same in all three versions.
"""

import dis
import functools
import inspect
import sys
import types

__all__ = ["Unresumable", "in_try_block", "live_locals", "origin", "resume_function",
           "step_function"]

_VERSION = sys.version_info[:2]
_SUPPORTED_VERSIONS = ((3, 11), (3, 12), (3, 13))
_OP = dis.opmap  # the running interpreter's numbers: 3.13 renumbered almost every opcode


def _opcodes(*names):
    """The numbers of those of `names` this interpreter has as real opcodes (3.12+ also lists
    pseudo-instructions, numbered from 256, which never appear in co_code)."""
    return {_OP[name] for name in names if _OP.get(name, 256) < 256}


def _cache_entries():
    """Inline cache units after each opcode, as a list by number. dis._inline_cache_entries is
    a list by number in 3.11 and 3.12 and a dict by name in 3.13."""
    entries = getattr(dis, "_inline_cache_entries", None)
    table = [0] * 256
    if isinstance(entries, dict):
        for name, count in entries.items():
            if _OP.get(name, 256) < 256:
                table[_OP[name]] = count
    elif entries is not None:
        table[:len(entries)] = entries[:256]
    return table


_CACHE_ENTRIES = _cache_entries()
_HAS_ARGUMENT = (set(dis.hasarg) if hasattr(dis, "hasarg")  # 3.12+
                 else set(range(dis.HAVE_ARGUMENT, 256)))
# Instructions whose argument is an index into the "fast locals plus cells plus free variables"
# array: adding stack arguments after the locals moves the free variables up.
_FREE_VARIABLE_OPS = _opcodes("LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF", "LOAD_CLOSURE",
                              "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF")
# Instructions on a local's slot; in 3.13 LOAD_FAST also loads a cell for a closure (the
# LOAD_CLOSURE pseudo-instruction), so an argument past co_varnames is a cell or free slot.
_LOCAL_OPS = _opcodes("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "STORE_FAST",
                      "DELETE_FAST")
# 3.13: two locals in one argument, (first << 4) | second.
_FUSED_LOCAL_OPS = _opcodes("LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST",
                            "STORE_FAST_STORE_FAST")
_NOT_RESUMABLE_FLAGS = (inspect.CO_GENERATOR | inspect.CO_COROUTINE |
                        inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE)


class Unresumable(Exception):
    """The frame cannot be resumed at this point; it finishes eagerly from its start."""


# resume code object -> (original code object, bytes of prologue before the original code)
_origins = {}
_resume_cache = {}
_step_cache = {}


def origin(code):
    """The original code object `code` was cut from and the offset shift between them."""
    return _origins.get(code, (code, 0))


def _emit(out, op, arg=0):
    """Appends one instruction with the EXTENDED_ARG prefixes its argument needs."""
    if arg > 0xFFFFFF:
        raise Unresumable("instruction argument too large")
    for shift in (16, 8):
        if arg >> shift:
            out += bytes([_OP["EXTENDED_ARG"], (arg >> shift) & 0xFF])
    out += bytes([op, arg & 0xFF])
    out += bytes(2 * _CACHE_ENTRIES[op])


def _instructions(code_bytes):
    """(offset, opcode, argument) of each instruction, EXTENDED_ARG folded in, caches skipped."""
    i, extended = 0, 0
    while i < len(code_bytes):
        op, arg = code_bytes[i], code_bytes[i + 1] | extended
        if op == _OP["EXTENDED_ARG"]:
            extended = arg << 8
            i += 2
            continue
        extended = 0
        yield i, op, arg
        i += 2 + 2 * _CACHE_ENTRIES[op]


def _varint(out, value):
    """Location table varint: 6-bit chunks, least significant first, 0x40 = more follow."""
    while value >= 0x40:
        out.append(0x40 | (value & 0x3F))
        value >>= 6
    out.append(value)


def _linetable(positions, first_line):
    """Encodes one (line, end_line, col, end_col) or None per code unit as a 3.11 co_linetable."""
    out = bytearray()
    line = first_line
    i = 0
    while i < len(positions):
        position = positions[i]
        n = 1
        while n < 8 and i + n < len(positions) and positions[i + n] == position:
            n += 1
        if position is None or position[0] is None:
            out.append(0x80 | (15 << 3) | (n - 1))  # no location
        else:
            start, end, col, end_col = position
            delta = start - line
            signed = (-delta << 1) | 1 if delta < 0 else delta << 1
            if end is None or col is None or end_col is None:
                out.append(0x80 | (13 << 3) | (n - 1))  # line only
                _varint(out, signed)
            else:
                out.append(0x80 | (14 << 3) | (n - 1))  # long form
                _varint(out, signed)
                _varint(out, end - start)
                _varint(out, col + 1)
                _varint(out, end_col + 1)
            line = start
        i += n
    return bytes(out)


def _read_exception_varint(data, i):
    value = data[i] & 0x3F
    while data[i] & 0x40:
        i += 1
        value = (value << 6) | (data[i] & 0x3F)
    return value, i + 1


def _write_exception_varint(out, value, first):
    chunks = [value & 0x3F]
    value >>= 6
    while value:
        chunks.append(value & 0x3F)
        value >>= 6
    chunks.reverse()
    for k, chunk in enumerate(chunks):
        out.append(chunk | (0x40 if k < len(chunks) - 1 else 0) | (0x80 if first and k == 0
                                                                    else 0))


def _exception_entries(table):
    """(start, size, target, depth_lasti) of each 3.11 exception table entry, in code units."""
    i = 0
    while i < len(table):
        entry = []
        for _ in range(4):
            value, i = _read_exception_varint(table, i)
            entry.append(value)
        yield tuple(entry)


def _shift_exception_table(table, units):
    """The 3.11 exception table with every start and target moved by `units` code units."""
    out = bytearray()
    for start, size, target, depth_lasti in _exception_entries(table):
        _write_exception_varint(out, start + units, True)
        _write_exception_varint(out, size, False)
        _write_exception_varint(out, target + units, False)
        _write_exception_varint(out, depth_lasti, False)
    return bytes(out)


def _check_version():
    if _VERSION not in _SUPPORTED_VERSIONS:
        raise Unresumable("resuming frames needs CPython 3.11, 3.12 or 3.13 bytecode, not "
                          f"{_VERSION[0]}.{_VERSION[1]}")


def _check_supported(code):
    _check_version()
    if code.co_flags & _NOT_RESUMABLE_FLAGS:
        raise Unresumable("generators and coroutines are not resumed")
    if code.co_cellvars:
        raise Unresumable("the frame has variables captured by inner functions")


@functools.lru_cache(maxsize=1024)
def _instructions_at(code):
    return {ins.offset: ins for ins in dis.get_instructions(code)}


# What a handler that only puts locals back may do before it re-raises.
_RESTORING_OPS = _opcodes("SWAP", "POP_TOP", "STORE_FAST", "STORE_FAST_STORE_FAST", "NOP")


def _restoring_handler(code, target):
    """The offset of the RERAISE ending the handler at `target` if the handler only shuffles
    the stack and stores locals before re-raising: 3.12+'s cleanup of an inlined comprehension,
    which puts the comprehension variable back. Else None."""
    instructions = _instructions_at(code)
    offset = target
    while offset in instructions:
        ins = instructions[offset]
        if ins.opname == "RERAISE":
            return offset
        if ins.opcode not in _RESTORING_OPS:
            return None
        offset += 2 + 2 * _CACHE_ENTRIES[ins.opcode]
    return None


@functools.lru_cache(maxsize=4096)
def _in_try_block(code, offset):
    # Entries do not overlap: at most one covers the offset. An exception reaching a restoring
    # handler leaves the frame (locals no longer matter) unless the RERAISE is covered itself.
    for start, size, target, _ in _exception_entries(code.co_exceptiontable):
        if 2 * start <= offset < 2 * (start + size):
            reraise = _restoring_handler(code, 2 * target)
            return reraise is None or _in_try_block(code, reraise)
    return False


_NO_FALLTHROUGH = _opcodes("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
                           "RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE")


def _uses_and_kills(ins):
    """Bit sets of the locals an instruction reads and of those it writes before any read."""
    name, arg = ins.opname, ins.arg
    # DELETE_FAST reads too: it raises on an unbound local. LOAD_FAST_AND_CLEAR (3.12+) saves
    # the value on the stack for the STORE_FAST after an inlined comprehension.
    if name in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR"):
        return 1 << arg, 0
    if name == "DELETE_FAST":
        return 1 << arg, 1 << arg
    if name == "STORE_FAST":
        return 0, 1 << arg
    if name == "LOAD_FAST_LOAD_FAST":
        return 1 << (arg >> 4) | 1 << (arg & 15), 0
    if name == "STORE_FAST_LOAD_FAST":  # stores the first, then loads the second
        return 1 << (arg & 15) & ~(1 << (arg >> 4)), 1 << (arg >> 4)
    if name == "STORE_FAST_STORE_FAST":
        return 0, 1 << (arg >> 4) | 1 << (arg & 15)
    return 0, 0


@functools.lru_cache(maxsize=1024)
def _live_locals(code):
    """Offset -> bit set of the locals (co_varnames indices) some path from that instruction
    reads before writing: a backward data-flow over the jumps, fall-throughs and exception
    edges of the code object."""
    instructions = list(dis.get_instructions(code))
    index = {ins.offset: k for k, ins in enumerate(instructions)}
    handlers = [(2 * start, 2 * (start + size), 2 * target)
                for start, size, target, _ in _exception_entries(code.co_exceptiontable)]
    successors, uses, kills = [], [], []
    for k, ins in enumerate(instructions):
        out = []
        if ins.opcode not in _NO_FALLTHROUGH and k + 1 < len(instructions):
            out.append(k + 1)
        if ins.opcode in dis.hasjrel and ins.argval in index:
            out.append(index[ins.argval])
        out += [index[target] for start, end, target in handlers
                if start <= ins.offset < end and target in index]
        successors.append(out)
        use, kill = _uses_and_kills(ins)
        uses.append(use)
        kills.append(kill)
    live = [0] * len(instructions)
    changed = True
    while changed:
        changed = False
        for k in reversed(range(len(instructions))):
            out = 0
            for succ in successors[k]:
                out |= live[succ]
            value = uses[k] | (out & ~kills[k])
            if value != live[k]:
                live[k], changed = value, True
    return {ins.offset: live[k] for k, ins in enumerate(instructions)}


def live_locals(function, offset):
    """The indices of the original code's locals that are read after `offset` before being
    written: the others need not cross a graph break (and are not guarded)."""
    bits = _live_locals(origin(function.__code__)[0]).get(offset, -1)
    return {j for j in range(len(origin(function.__code__)[0].co_varnames)) if bits >> j & 1}


def in_try_block(function, offset):
    """Whether the instruction at `offset` of the original code has an exception handler (a
    try or with block): an exception it raises must reach that handler, so it cannot run in a
    step function of its own."""
    return _in_try_block(origin(function.__code__)[0], offset)


def resume_function(function, offset, stack_layout, unbound):
    """A function that continues `function`'s original code at `offset`.

    Its arguments are the original code's locals (co_varnames, in order) followed by the value
    stack at `offset`, bottom first. `stack_layout[i]` says what stack slot i holds: "value";
    "null", a NULL (pushed back as NULL, its argument is ignored): a call sequence's, before
    the callable in 3.11/3.12 and after it in 3.13, or the unbound comprehension variable that
    3.12+'s LOAD_FAST_AND_CLEAR saved; or
    "iter", a for loop's iterator, passed as a tuple of the items it has left and turned back
    into an iterator by the prologue, so that a continuation traces the rest of the loop.
    `unbound` lists locals not assigned yet (deleted again after the call binds them)."""
    code, _ = origin(function.__code__)
    key = (code, offset, tuple(stack_layout), tuple(unbound))
    made = _resume_cache.get(key)
    if made is not None:
        return types.FunctionType(made, function.__globals__, made.co_name, None,
                                  function.__closure__)
    _check_supported(code)
    nvars, nstack = len(code.co_varnames), len(stack_layout)
    if nvars + nstack + len(code.co_freevars) > 0xFF:
        raise Unresumable("too many locals to resume the frame")
    prologue = bytearray()
    if code.co_freevars:
        _emit(prologue, _OP["COPY_FREE_VARS"], len(code.co_freevars))
    _emit(prologue, _OP["RESUME"], 0)
    for i, kind in enumerate(stack_layout):
        if kind == "null":
            _emit(prologue, _OP["PUSH_NULL"])
        else:
            _emit(prologue, _OP["LOAD_FAST"], nvars + i)
            if kind == "iter":
                _emit(prologue, _OP["GET_ITER"])
    for j in unbound:
        _emit(prologue, _OP["DELETE_FAST"], j)
    # JUMP_FORWARD counts from the end of the jump, which is where the original code starts.
    _emit(prologue, _OP["JUMP_FORWARD"], offset // 2)
    body = bytearray(code.co_code)
    if code.co_freevars and nstack:
        for at, op, arg in _instructions(code.co_code):
            if op in _FREE_VARIABLE_OPS or (op in _LOCAL_OPS and arg >= nvars):
                body[at + 1] = arg + nstack
            elif op in _FUSED_LOCAL_OPS and max(arg >> 4, arg & 15) >= nvars:
                first, second = (j + nstack if j >= nvars else j for j in (arg >> 4, arg & 15))
                if max(first, second) > 15:
                    raise Unresumable("a fused instruction's cell slot moves out of its 4 bits")
                body[at + 1] = first << 4 | second
    shift = len(prologue)
    positions = [None] * (shift // 2) + list(code.co_positions())
    name = f"{code.co_name}_resume_at_{offset}"
    made = code.replace(
        co_code=bytes(prologue + body),
        co_argcount=nvars + nstack, co_posonlyargcount=0, co_kwonlyargcount=0,
        co_nlocals=nvars + nstack,
        co_varnames=code.co_varnames + tuple(f"___stack{i}" for i in range(nstack)),
        co_flags=code.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS),
        co_stacksize=code.co_stacksize + nstack + 1,
        co_linetable=_linetable(positions, code.co_firstlineno),
        co_exceptiontable=_shift_exception_table(code.co_exceptiontable, shift // 2),
        co_name=name, co_qualname=f"{code.co_qualname}_resume_at_{offset}")
    _origins[made] = (code, shift)
    _resume_cache[key] = made
    return types.FunctionType(made, function.__globals__, name, None, function.__closure__)


def step_function(function, start, end, nulls):
    """A function running the original code's instructions [start, end) on its arguments as
    the top of the stack (NULL where `nulls` says) and returning the new top as a tuple, and
    the length of that tuple. For a call, [start, end) is PRECALL (after KW_NAMES if any) and
    CALL in 3.11, KW_NAMES (if any) and CALL in 3.12, CALL or CALL_KW alone in 3.13 (whose
    kwnames tuple is on the stack, one of the arguments)."""
    code, _ = origin(function.__code__)
    key = (code, start, end, tuple(nulls))
    made, depth = _step_cache.get(key, (None, 0))
    if made is None:
        _check_version()
        body = code.co_code[start:end]
        depth = len(nulls)
        for _, op, arg in _instructions(body):
            depth += dis.stack_effect(op, arg if op in _HAS_ARGUMENT else None, jump=False)
        prologue = bytearray()
        _emit(prologue, _OP["RESUME"], 0)
        for i, null in enumerate(nulls):
            _emit(prologue, _OP["PUSH_NULL"] if null else _OP["LOAD_FAST"], 0 if null else i)
        epilogue = bytearray()
        _emit(epilogue, _OP["BUILD_TUPLE"], depth)
        _emit(epilogue, _OP["RETURN_VALUE"])
        all_positions = list(code.co_positions())
        positions = ([None] * (len(prologue) // 2) + all_positions[start // 2:end // 2] +
                     [None] * (len(epilogue) // 2))
        made = code.replace(
            co_code=bytes(prologue + body + epilogue),
            co_argcount=len(nulls), co_posonlyargcount=0, co_kwonlyargcount=0,
            co_nlocals=len(nulls), co_varnames=tuple(f"___top{i}" for i in range(len(nulls))),
            co_cellvars=(), co_freevars=(),
            co_flags=inspect.CO_OPTIMIZED | inspect.CO_NEWLOCALS,
            co_stacksize=len(nulls) + depth + 8,
            co_linetable=_linetable(positions, code.co_firstlineno),
            co_exceptiontable=b"", co_name=code.co_name, co_qualname=code.co_qualname)
        _step_cache[key] = made, depth
    return types.FunctionType(made, function.__globals__, made.co_name), depth
