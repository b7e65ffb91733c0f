//===- PythonMemory.h - the memory behind arrays and tensors ----*- C++ -*-===//
//
// What a store into an argument needs to know about the caller's array or tensor: whether it
// may be written and which bytes it covers. The tracer asks when it turns a store into a graph
// update plus a write-back, and the runtime's `written` tensor guard asks the same on every
// call, so both decide from this one definition.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_SUPPORT_PYTHONMEMORY_H
#define DYNAMIR_SUPPORT_PYTHONMEMORY_H

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dynamir::python {

/// The bytes [first, last) that the elements of a numpy array or a CPU torch tensor span (for
/// a strided view, from its lowest to its highest element); none for an object with no
/// elements or no memory a store could reach (a numpy scalar is a copy).
std::optional<std::pair<uintptr_t, uintptr_t>> memoryExtent(pybind11::handle obj);

/// Whether a store into the array or tensor is allowed: numpy's `writeable` flag (a
/// broadcast_to result or a read-only buffer is not).
bool isWriteable(pybind11::handle obj);

/// Why `written` cannot be updated by a write-back that no other of `others` sees, or "" when
/// it can: it is read-only, two of its elements share memory (an expanded view: a store into
/// one changes the other eagerly), or its memory overlaps one of theirs (which then reads the
/// store eagerly but not in the graph). Each of `others` is (its source, the object), for every
/// other source the function reads an array or tensor from (the same object under another
/// name is a conflict too).
std::string writeBackConflict(pybind11::handle written,
                              const std::vector<std::pair<std::string, pybind11::handle>> &others);

} // namespace dynamir::python

#endif // DYNAMIR_SUPPORT_PYTHONMEMORY_H
