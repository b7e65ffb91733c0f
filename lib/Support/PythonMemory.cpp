//===- PythonMemory.cpp - the memory behind arrays and tensors ------------===//

#include "dynamir/Support/PythonMemory.h"

#include <pybind11/numpy.h>

namespace py = pybind11;

namespace {
/// [first, last) of `size` elements of `itemsize` bytes at `data` with these byte strides.
std::optional<std::pair<uintptr_t, uintptr_t>> extent(uintptr_t data,
                                                      const std::vector<int64_t> &shape,
                                                      const std::vector<int64_t> &strides,
                                                      int64_t itemsize) {
  intptr_t low = 0, high = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0)
      return std::nullopt;
    intptr_t span = static_cast<intptr_t>((shape[d] - 1) * strides[d]);
    (span < 0 ? low : high) += span;
  }
  return std::make_pair(static_cast<uintptr_t>(static_cast<intptr_t>(data) + low),
                        static_cast<uintptr_t>(static_cast<intptr_t>(data) + high + itemsize));
}
} // namespace

std::optional<std::pair<uintptr_t, uintptr_t>> dynamir::python::memoryExtent(py::handle obj) {
  if (py::isinstance<py::array>(obj)) {
    auto array = py::reinterpret_borrow<py::array>(obj);
    std::vector<int64_t> shape, strides;
    for (py::ssize_t d = 0; d < array.ndim(); ++d) {
      shape.push_back(array.shape(d));
      strides.push_back(array.strides(d));
    }
    return extent(reinterpret_cast<uintptr_t>(array.data()), shape, strides, array.itemsize());
  }
  if (!py::hasattr(obj, "data_ptr") || !py::hasattr(obj, "element_size"))
    return std::nullopt; // not a tensor: a numpy scalar, a device array's host copy
  auto itemsize = obj.attr("element_size")().cast<int64_t>();
  std::vector<int64_t> shape, strides;
  for (py::handle d : obj.attr("shape"))
    shape.push_back(d.cast<int64_t>());
  for (py::handle s : obj.attr("stride")())
    strides.push_back(s.cast<int64_t>() * itemsize);
  return extent(obj.attr("data_ptr")().cast<uintptr_t>(), shape, strides, itemsize);
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
  auto mine = memoryExtent(written);
  if (!mine)
    return "";
  for (const auto &[source, other] : others) {
    auto theirs = memoryExtent(other);
    if (theirs && mine->first < theirs->second && theirs->first < mine->second)
      return "shares memory with " + source;
  }
  return "";
}
