//===- Bytecode.cpp - CPython bytecode in a version-neutral form ----------===//

#include "Bytecode.h"

#include <algorithm>
#include <array>

namespace py = pybind11;
using namespace dynamir::frontend;

#include "OpcodeTable.inc"

const int dynamir::frontend::kPythonMinor = DYNAMIR_PYTHON_MINOR;

namespace {
struct TableEntry {
  Opcode op = UNKNOWN_OPCODE;
  int caches = 0;
};

/// The target interpreter's instructions by number.
const std::array<TableEntry, 256> &table() {
  static const std::array<TableEntry, 256> entries = [] {
    std::array<TableEntry, 256> t;
#define OPCODE_ENTRY(number, caches, kind) t[number] = {kind, caches};
#include "OpcodeTable.inc"
    return t;
  }();
  return entries;
}

/// 3.11 spells conditional jumps by direction; later versions only jump forward.
Opcode undirected(Opcode op) {
  switch (op) {
  case POP_JUMP_FORWARD_IF_FALSE:
  case POP_JUMP_BACKWARD_IF_FALSE:
    return POP_JUMP_IF_FALSE;
  case POP_JUMP_FORWARD_IF_TRUE:
  case POP_JUMP_BACKWARD_IF_TRUE:
    return POP_JUMP_IF_TRUE;
  case POP_JUMP_FORWARD_IF_NONE:
  case POP_JUMP_BACKWARD_IF_NONE:
    return POP_JUMP_IF_NONE;
  case POP_JUMP_FORWARD_IF_NOT_NONE:
  case POP_JUMP_BACKWARD_IF_NOT_NONE:
    return POP_JUMP_IF_NOT_NONE;
  default:
    return op;
  }
}

/// Fills in the decoded argument and the jump target of `in` from CPython's `arg`.
void decodeArgument(Instr &in, int arg) {
  int64_t forward = in.next + 2 * int64_t(arg), backward = in.next - 2 * int64_t(arg);
  in.arg = arg;
  switch (in.op) {
  case LOAD_GLOBAL:
    in.arg = arg >> 1;
    in.pushesNull = arg & 1;
    break;
  case LOAD_ATTR:
    if (kPythonMinor >= 12) {
      in.arg = arg >> 1;
      if (arg & 1)
        in.op = LOAD_METHOD;
    }
    break;
  case COMPARE_OP:
    // 3.12 keeps a cache mask in the low 4 bits, 3.13 also a to-bool flag.
    in.arg = kPythonMinor >= 13 ? arg >> 5 : kPythonMinor == 12 ? arg >> 4 : arg;
    break;
  case POP_JUMP_BACKWARD_IF_FALSE:
  case POP_JUMP_BACKWARD_IF_TRUE:
  case POP_JUMP_BACKWARD_IF_NONE:
  case POP_JUMP_BACKWARD_IF_NOT_NONE:
  case JUMP_BACKWARD:
  case JUMP_BACKWARD_NO_INTERRUPT:
    in.target = backward;
    break;
  case POP_JUMP_FORWARD_IF_FALSE:
  case POP_JUMP_FORWARD_IF_TRUE:
  case POP_JUMP_FORWARD_IF_NONE:
  case POP_JUMP_FORWARD_IF_NOT_NONE:
  case POP_JUMP_IF_FALSE:
  case POP_JUMP_IF_TRUE:
  case POP_JUMP_IF_NONE:
  case POP_JUMP_IF_NOT_NONE:
  case JUMP_FORWARD:
  case JUMP_IF_FALSE_OR_POP:
  case JUMP_IF_TRUE_OR_POP:
  case SEND: // where `yield from` goes on once its iterator is exhausted
    in.target = forward;
    break;
  case FOR_ITER:
    // An exhausted 3.12 loop skips the END_FOR its jump names, 3.13's also the POP_TOP after.
    in.target = forward + (kPythonMinor >= 13 ? 4 : kPythonMinor == 12 ? 2 : 0);
    break;
  default:
    break;
  }
  in.op = undirected(in.op);
}
} // namespace

const char *dynamir::frontend::opcodeName(Opcode op) {
  switch (op) {
#define OPCODE(name)                                                                               \
  case name:                                                                                       \
    return #name;
#include "dynamir/Frontend/Opcodes.def"
  case UNKNOWN_OPCODE:
    break;
  }
  return "<unknown>";
}

std::shared_ptr<Code> dynamir::frontend::decode(py::handle codeObject) {
  auto code = std::make_shared<Code>();
  code->object = py::reinterpret_borrow<py::object>(codeObject);
  code->filename = codeObject.attr("co_filename").cast<std::string>();
  code->name = codeObject.attr("co_qualname").cast<std::string>();
  code->argCount = codeObject.attr("co_argcount").cast<int>();
  code->kwOnlyCount = codeObject.attr("co_kwonlyargcount").cast<int>();
  code->flags = codeObject.attr("co_flags").cast<int>();
  for (py::handle n : codeObject.attr("co_varnames"))
    code->localNames.push_back(n.cast<std::string>());
  for (py::handle n : codeObject.attr("co_cellvars")) {
    std::string name = n.cast<std::string>();
    if (std::find(code->localNames.begin(), code->localNames.end(), name) == code->localNames.end())
      code->localNames.push_back(name);
  }
  for (py::handle n : codeObject.attr("co_freevars"))
    code->localNames.push_back(n.cast<std::string>());
  // co_exceptiontable: entries of four varints (6 bits a byte, bit 6 for "more", the first
  // byte of an entry marked by bit 7), offsets in code units; as dis._parse_exception_table.
  std::string handlers = codeObject.attr("co_exceptiontable").cast<py::bytes>();
  size_t at = 0;
  auto varint = [&]() -> int64_t {
    uint8_t byte = static_cast<uint8_t>(handlers[at++]);
    int64_t value = byte & 63;
    while ((byte & 64) && at < handlers.size()) {
      byte = static_cast<uint8_t>(handlers[at++]);
      value = (value << 6) | (byte & 63);
    }
    return value;
  };
  while (at + 3 < handlers.size()) {
    Handler h;
    h.start = 2 * varint();
    h.end = h.start + 2 * varint();
    h.target = 2 * varint();
    int64_t depthLasti = varint();
    h.depth = static_cast<int>(depthLasti >> 1);
    h.lasti = depthLasti & 1;
    code->handlers.push_back(h);
  }

  std::string bytes = codeObject.attr("co_code").cast<py::bytes>();
  py::list positions(codeObject.attr("co_positions")());
  int extended = 0, line = 0;
  int64_t prefixStart = -1;
  for (size_t i = 0; i + 1 < bytes.size();) {
    const TableEntry &entry = table()[static_cast<uint8_t>(bytes[i])];
    int arg = static_cast<uint8_t>(bytes[i + 1]) | extended;
    if (prefixStart < 0)
      prefixStart = static_cast<int64_t>(i);
    if (entry.op == EXTENDED_ARG) {
      extended = arg << 8;
      i += 2;
      continue;
    }
    extended = 0;
    py::tuple pos = positions[i / 2];
    if (!pos[0].is_none())
      line = pos[0].cast<int>();
    int col = pos[2].is_none() ? 0 : pos[2].cast<int>();
    Instr in;
    in.offset = prefixStart;
    in.next = static_cast<int64_t>(i) + 2 + 2 * entry.caches;
    in.op = entry.op;
    in.line = line;
    in.col = col;
    decodeArgument(in, arg);
    code->indexOf[prefixStart] = code->instrs.size();
    code->instrs.push_back(in);
    prefixStart = -1;
    i = static_cast<size_t>(in.next);
  }
  return code;
}
