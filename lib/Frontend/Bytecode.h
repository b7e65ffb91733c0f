//===- Bytecode.h - CPython bytecode in a version-neutral form ----*- C++ -*-===//
//
// The tracer never reads CPython's encoding: a code object is decoded once into instructions
// whose opcode comes from a version-independent enum (Opcodes.def, matched by name against
// the target interpreter's table generated at build time) and whose arguments are decoded —
// name indices without their flag bits, comparison kinds, absolute jump targets — so that
// the interpreter loop handles what differs between 3.11, 3.12 and 3.13 only where the
// semantics differ (where NULL goes for a call, keyword names on the stack).
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_LIB_FRONTEND_BYTECODE_H
#define DYNAMIR_LIB_FRONTEND_BYTECODE_H

#include "llvm/ADT/DenseMap.h"

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

namespace dynamir::frontend {

enum Opcode : int {
#define OPCODE(name) name,
#include "dynamir/Frontend/Opcodes.def"
  UNKNOWN_OPCODE,
};

/// The CPython minor version the extension is built for, and so runs under (an extension
/// module loads only into the interpreter version it was built for).
extern const int kPythonMinor;

const char *opcodeName(Opcode op);

struct Instr {
  int64_t offset = 0; // of the first EXTENDED_ARG prefix, where jumps land
  int64_t next = 0;   // past the inline caches
  /// 3.11's POP_JUMP_{FORWARD,BACKWARD}_IF_X decode as POP_JUMP_IF_X, and 3.12's LOAD_ATTR
  /// with the method bit as LOAD_METHOD (3.11's spelling of the same instruction).
  Opcode op = NOP;
  /// The argument without flag bits: the name index of LOAD_GLOBAL, LOAD_ATTR and
  /// LOAD_METHOD, the comparison (Py_LT ... Py_GE) of COMPARE_OP, otherwise CPython's.
  int arg = 0;
  bool pushesNull = false; // LOAD_GLOBAL's low bit: a NULL goes with the global, for a call
  /// Where a jump goes; for FOR_ITER where an exhausted loop goes on (past 3.12's END_FOR and
  /// 3.13's END_FOR, POP_TOP, which the interpreter skips); -1 when there is no jump.
  int64_t target = -1;
  int line = 0;
  int col = 0;
};

/// An entry of the exception table (3.11+): an exception raised by an instruction in
/// [start, end) goes to `target`, with the stack cut to `depth` (and the raising instruction's
/// offset pushed first where `lasti`).
struct Handler {
  int64_t start = 0, end = 0, target = 0;
  int depth = 0;
  bool lasti = false;
};

struct Code {
  pybind11::object object;
  std::string filename, name;
  std::vector<Instr> instrs;
  llvm::DenseMap<int64_t, size_t> indexOf;
  std::vector<std::string> localNames; // co_varnames + new cellvars + freevars
  int argCount = 0, kwOnlyCount = 0, flags = 0;
  std::vector<Handler> handlers;
  /// The handler of an exception raised at `offset`, if any (entries do not overlap).
  const Handler *handlerAt(int64_t offset) const {
    for (const Handler &h : handlers)
      if (h.start <= offset && offset < h.end)
        return &h;
    return nullptr;
  }
};

std::shared_ptr<Code> decode(pybind11::handle codeObject);

} // namespace dynamir::frontend

#endif // DYNAMIR_LIB_FRONTEND_BYTECODE_H
