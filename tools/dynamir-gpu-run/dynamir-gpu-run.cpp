//===- dynamir-gpu-run.cpp - run compiled GPU graphs, check them, time them -===//
//
// The GPU machine Dynamir is checked on has a driver but no LLVM, MLIR or Python of ours: this
// tool (C++ only, linked to libdynamir_cuda.so) loads graph libraries compiled elsewhere for
// CUDA (scripts/gpu-check/prepare.py), feeds them generated inputs, compares their outputs
// with numpy's or torch's (files written when the bundle was made) and measures the time per call.
//
//   dynamir-gpu-run <bundle dir> <results.json>
//
// The bundle's manifest.txt lists workloads, one block each:
//
//   workload <name> <library.so> <bytes moved per call (minimum traffic)>
//   tolerance <t>                       (optional: see Workload::tolerance)
//   input <dtype> <d0>x<d1>...          (values: see generated(); dtype f32, or bool with data)
//   positive                            (optional, after an input: see Tensor::positive)
//   data <file>                         (optional, after an input: see Tensor::data)
//   output <dtype> <shape> <expected.bin | ->  (dtype f32, or bool: one byte each, exact)
//   end
//
//===----------------------------------------------------------------------===//

#include "dynamir/Runtime/CudaRuntime.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {
struct Tensor {
  std::vector<int64_t> shape;
  std::string expected;  // file of expected values, "-" for none
  bool positive = false; // an input generated in [0.5, 1.5] (a variance), not [-1, 1)
  std::string data;      // an input read from this file instead (a bool mask: one byte each)
  bool isBool = false;
  size_t elements() const {
    size_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

struct Workload {
  std::string name, library;
  double bytesMoved = 0;
  // Relative errors are taken against max(|expected|, tolerance): the models' outputs pass
  // through long sums whose near-zero results differ absolutely, not relatively.
  double tolerance = 1e-6;
  std::vector<Tensor> inputs, outputs;
};

std::vector<int64_t> parseShape(const std::string &text) {
  std::vector<int64_t> shape;
  std::stringstream in(text);
  std::string part;
  while (text != "scalar" && std::getline(in, part, 'x'))
    shape.push_back(std::stoll(part));
  return shape;
}

/// Input element i of input k: a hash of (i, k) mapped to [-1, 1), exactly as prepare.py
/// computes it with numpy (uint64 arithmetic, then float32).
float generated(uint64_t i, uint64_t k) {
  uint64_t h = (i * 2654435761ull + (k + 1) * 40503ull) % 4294967296ull;
  return static_cast<float>(static_cast<double>(h) / 4294967296.0 * 2.0 - 1.0);
}

bool readManifest(const std::string &path, std::vector<Workload> &workloads) {
  std::ifstream in(path);
  if (!in)
    return false;
  std::string word;
  Workload current;
  while (in >> word) {
    if (word == "workload") {
      current = Workload();
      in >> current.name >> current.library >> current.bytesMoved;
    } else if (word == "input" || word == "output") {
      std::string dtype, shape;
      Tensor t;
      in >> dtype >> shape;
      t.isBool = dtype == "bool";
      if (dtype != "f32" && !t.isBool) {
        std::fprintf(stderr, "only f32 and bool tensors are supported, got %s\n", dtype.c_str());
        return false;
      }
      t.shape = parseShape(shape);
      if (word == "output")
        in >> t.expected;
      (word == "input" ? current.inputs : current.outputs).push_back(t);
    } else if (word == "data" && !current.inputs.empty()) {
      in >> current.inputs.back().data;
    } else if (word == "positive" && !current.inputs.empty()) {
      current.inputs.back().positive = true;
    } else if (word == "tolerance") {
      in >> current.tolerance;
    } else if (word == "end") {
      workloads.push_back(current);
    }
  }
  return true;
}

/// Appends a memref descriptor (allocated, aligned, offset, sizes, strides) as the lowered
/// code reads it.
size_t appendDescriptor(std::vector<int64_t> &words, void *data,
                        const std::vector<int64_t> &shape) {
  size_t start = words.size();
  words.push_back(reinterpret_cast<int64_t>(data));
  words.push_back(reinterpret_cast<int64_t>(data));
  words.push_back(0);
  words.insert(words.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape[d];
  }
  words.insert(words.end(), strides.begin(), strides.end());
  return start;
}

std::string takeError() {
  const char *error = dynamir_cuda_take_error();
  return error ? error : "";
}

std::string jsonEscape(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <bundle dir> <results.json>\n", argv[0]);
    return 2;
  }
  std::string bundle = argv[1];
  std::ofstream json(argv[2]);
  char why[1024] = {0};
  if (!dynamir_cuda_init(why, sizeof(why))) {
    std::fprintf(stderr, "CUDA is not available: %s\n", why);
    json << "{\"error\": \"" << jsonEscape(why) << "\"}\n";
    return 1;
  }
  char name[256] = {0};
  int cc = 0, sms = 0;
  dynamir_cuda_device(name, sizeof(name), &cc, &sms);
  std::printf("device: %s, compute capability %d.%d, %d SMs\n", name, cc / 10, cc % 10, sms);
  json << "{\"device\": \"" << jsonEscape(name) << "\", \"workloads\": [\n";

  std::vector<Workload> workloads;
  if (!readManifest(bundle + "/manifest.txt", workloads)) {
    std::fprintf(stderr, "cannot read %s/manifest.txt\n", bundle.c_str());
    return 1;
  }
  int failures = 0;
  for (size_t w = 0; w < workloads.size(); ++w) {
    const Workload &work = workloads[w];
    std::string status = "ok", detail;
    double maxError = 0, seconds = 0;
    int iterations = 0;
    std::vector<void *> device;
    auto fail = [&](const std::string &what) {
      status = "failed";
      detail = what;
    };
    void *library = dlopen((bundle + "/" + work.library).c_str(), RTLD_NOW | RTLD_LOCAL);
    auto entry = library
                     ? reinterpret_cast<void (*)(void **)>(dlsym(library, "dynamir_graph_packed"))
                     : nullptr;
    if (!library)
      fail(std::string("dlopen: ") + dlerror());
    else if (!entry)
      fail("no dynamir_graph_packed entry point");
    else if (std::string e = takeError(); !e.empty())
      fail("loading the kernels: " + e);

    // Inputs generated on the host and copied in; outputs allocated on the device.
    std::vector<int64_t> words;
    std::vector<size_t> starts;
    for (size_t k = 0; status == "ok" && k < work.inputs.size(); ++k) {
      const Tensor &t = work.inputs[k];
      std::vector<float> host(t.isBool ? 0 : t.elements());
      std::vector<char> bytes(t.elements() * (t.isBool ? 1 : sizeof(float)));
      for (size_t i = 0; i < host.size(); ++i)
        host[i] = t.positive ? std::fabs(generated(i, k)) + 0.5f : generated(i, k);
      if (!host.empty())
        std::memcpy(bytes.data(), host.data(), bytes.size());
      if (!t.data.empty()) {
        std::ifstream in(bundle + "/" + t.data, std::ios::binary);
        if (!in.read(bytes.data(), bytes.size()))
          fail("cannot read " + t.data);
      }
      void *d = dynamir_cuda_alloc(bytes.size());
      device.push_back(d);
      if (status == "ok" && (!d || !dynamir_cuda_copy(d, bytes.data(), bytes.size())))
        fail("copying input " + std::to_string(k) + ": " + takeError());
      starts.push_back(appendDescriptor(words, d, t.shape));
    }
    for (size_t k = 0; status == "ok" && k < work.outputs.size(); ++k) {
      const Tensor &t = work.outputs[k];
      void *d = dynamir_cuda_alloc(t.elements() * sizeof(float));
      device.push_back(d);
      if (!d)
        fail("allocating output: " + takeError());
      starts.push_back(appendDescriptor(words, d, t.shape));
    }
    std::vector<void *> pointers;
    for (size_t s : starts)
      pointers.push_back(words.data() + s);

    if (status == "ok") {
      entry(pointers.data());
      if (std::string e = takeError(); !e.empty())
        fail("first call: " + e);
    }
    // Check against numpy.
    for (size_t k = 0; status == "ok" && k < work.outputs.size(); ++k) {
      const Tensor &t = work.outputs[k];
      if (t.expected == "-")
        continue;
      std::ifstream in(bundle + "/" + t.expected, std::ios::binary);
      if (t.isBool) { // a flag the host checks (an index in bounds, say): exactly as expected
        std::vector<char> got(t.elements()), want(t.elements());
        dynamir_cuda_copy(got.data(), device[work.inputs.size() + k], got.size());
        if (!in.read(want.data(), want.size()))
          fail("cannot read " + t.expected);
        else if (got != want)
          fail("output " + std::to_string(k) + " (a flag the host checks) differs from torch's");
        continue;
      }
      std::vector<float> got(t.elements()), want(t.elements());
      dynamir_cuda_copy(got.data(), device[work.inputs.size() + k], got.size() * sizeof(float));
      in.read(reinterpret_cast<char *>(want.data()), want.size() * sizeof(float));
      if (!in) {
        fail("cannot read " + t.expected);
        break;
      }
      for (size_t i = 0; i < got.size(); ++i) {
        double error = std::fabs(double(got[i]) - want[i]) /
                       std::max(work.tolerance, std::fabs(double(want[i])));
        if (std::isnan(got[i]) != std::isnan(want[i]))
          error = INFINITY;
        maxError = std::max(maxError, error);
      }
      if (maxError > 1e-4)
        fail("output " + std::to_string(k) + " differs from numpy (max relative error " +
             std::to_string(maxError) + ")");
    }
    // Time: warm up, then calls for about half a second (each call ends synchronized).
    if (status == "ok") {
      for (int i = 0; i < 3; ++i)
        entry(pointers.data());
      auto start = std::chrono::steady_clock::now();
      do {
        entry(pointers.data());
        ++iterations;
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      } while (seconds < 0.5 && iterations < 2000);
      if (std::string e = takeError(); !e.empty())
        fail("timed calls: " + e);
    }
    double perCall = iterations ? seconds / iterations : 0;
    double bandwidth = perCall > 0 ? work.bytesMoved / perCall : 0;
    std::printf("%-28s %-7s %9.1f us  %7.0f GB/s  %5.1f%% of 4.8 TB/s  max rel err %.2e %s\n",
                work.name.c_str(), status.c_str(), perCall * 1e6, bandwidth / 1e9,
                100 * bandwidth / 4.8e12, maxError, detail.c_str());
    json << (w ? ",\n" : "") << "  {\"name\": \"" << work.name << "\", \"status\": \"" << status
         << "\", \"detail\": \"" << jsonEscape(detail) << "\", \"seconds_per_call\": " << perCall
         << ", \"bytes_moved\": " << work.bytesMoved << ", \"bandwidth_gbs\": " << bandwidth / 1e9
         << ", \"percent_of_peak\": " << 100 * bandwidth / 4.8e12
         << ", \"max_relative_error\": " << maxError << "}";
    failures += status != "ok";
    for (void *d : device)
      dynamir_cuda_free(d);
  }
  json << "\n]}\n";
  return failures ? 1 : 0;
}
