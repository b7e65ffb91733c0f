//===- PythonMemory.cpp - the memory behind arrays and tensors ------------===//

#include "dynamir/Support/PythonMemory.h"

#include "llvm/ADT/STLExtras.h"

#include <pybind11/numpy.h>

#include <cstdlib>

namespace py = pybind11;

namespace {
/// The memory layout of an array or tensor: its data address, shape and byte strides.
struct Layout {
  uintptr_t data;
  std::vector<int64_t> shape, strides;
  int64_t itemsize;
};

std::optional<Layout> layoutOf(py::handle obj) {
  Layout l;
  if (py::isinstance<py::array>(obj)) {
    auto array = py::reinterpret_borrow<py::array>(obj);
    for (py::ssize_t d = 0; d < array.ndim(); ++d) {
      l.shape.push_back(array.shape(d));
      l.strides.push_back(array.strides(d));
    }
    l.data = reinterpret_cast<uintptr_t>(array.data());
    l.itemsize = array.itemsize();
    return l;
  }
  if (!py::hasattr(obj, "data_ptr") || !py::hasattr(obj, "element_size"))
    return std::nullopt; // not a tensor: a numpy scalar, a device array's host copy
  l.itemsize = obj.attr("element_size")().cast<int64_t>();
  for (py::handle d : obj.attr("shape"))
    l.shape.push_back(d.cast<int64_t>());
  for (py::handle s : obj.attr("stride")())
    l.strides.push_back(s.cast<int64_t>() * l.itemsize);
  l.data = obj.attr("data_ptr")().cast<uintptr_t>();
  return l;
}

/// Whether two elements share memory: the dimensions of more than one element, by stride,
/// each step past everything the smaller ones span (a stride-0 dimension of an expanded view
/// fails at once).
bool overlapsItself(const Layout &l) {
  std::vector<std::pair<int64_t, int64_t>> dims; // (|stride|, size)
  for (size_t d = 0; d < l.shape.size(); ++d) {
    if (l.shape[d] == 0)
      return false;
    if (l.shape[d] > 1)
      dims.emplace_back(std::abs(l.strides[d]), l.shape[d]);
  }
  llvm::sort(dims);
  int64_t spanned = l.itemsize;
  for (auto [stride, size] : dims) {
    if (stride < spanned)
      return true;
    spanned = stride * (size - 1) + spanned;
  }
  return false;
}

/// [first, last) of its elements; none for no elements.
std::optional<std::pair<uintptr_t, uintptr_t>> extentOf(const Layout &l) {
  intptr_t low = 0, high = 0;
  for (size_t d = 0; d < l.shape.size(); ++d) {
    if (l.shape[d] == 0)
      return std::nullopt;
    intptr_t span = static_cast<intptr_t>((l.shape[d] - 1) * l.strides[d]);
    (span < 0 ? low : high) += span;
  }
  return std::make_pair(static_cast<uintptr_t>(static_cast<intptr_t>(l.data) + low),
                        static_cast<uintptr_t>(static_cast<intptr_t>(l.data) + high + l.itemsize));
}
} // namespace

std::optional<std::pair<uintptr_t, uintptr_t>> dynamir::python::memoryExtent(py::handle obj) {
  std::optional<Layout> l = layoutOf(obj);
  return l ? extentOf(*l) : std::nullopt;
}

bool dynamir::python::isWriteable(py::handle obj) {
  if (py::isinstance<py::array>(obj))
    return py::reinterpret_borrow<py::array>(obj).writeable();
  return true;
}

std::string
dynamir::python::writeBackConflict(py::handle written,
                                   const std::vector<std::pair<std::string, py::handle>> &others) {
  if (!isWriteable(written))
    return "is read-only";
  std::optional<Layout> layout = layoutOf(written);
  if (!layout)
    return "";
  // A store into one element is a store into others (x.expand(2, 3)): a value of its own
  // element by element in the graph, so not written back.
  if (overlapsItself(*layout))
    return "has elements that share memory (an expanded view)";
  auto mine = extentOf(*layout);
  if (!mine)
    return "";
  for (const auto &[source, other] : others) {
    auto theirs = memoryExtent(other);
    if (theirs && mine->first < theirs->second && theirs->first < mine->second)
      return "shares memory with " + source;
  }
  return "";
}
