//===- Text.cpp - Strings formatted from values the graph computes --------===//
//
// `f"loss {loss.item():.4f}"`, `str(t)`, `"%d of %.2f" % (n, m)` of a number read from a tensor,
// a dynamic scalar or an array need their values, which exist only once the graph has run. A
// str made of them is a VK::Text: its parts (`items`) are literal strings, or values with how to
// format them (`keys`: a (conversion, spec) pair, ('%', template) for a %-format of a tuple, or
// ('?',) for the string a data-dependent branch picks, Branches.cpp).
// The host formats it once the graph has run, as eager code would have (`_text` in
// compiler.py): print() prints it, the frame returns it, a store hands it to the caller, a
// break hands it to the continuation. What needs the characters themselves (a comparison, a
// method, len(), a dict key) breaks there (needConstant).
//
// The host formats later what eager code formats now, so a format must not raise: a spec is
// checked against a value of the type it will format (a float for a float tensor's item()), a
// spec for an array of several elements is a break (numpy and torch raise), and so is any
// other format of values the tracer does not know to be pure.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {
/// A Python object of the type that `format` will see for `v` (a number for a dynamic scalar or
/// a one-element tensor's item()), or null where none stands for every value.
py::object formatSample(Tracer &t, const VarPtr &v) {
  Type element;
  if (v->kind == VK::Scalar)
    element = t.typeOf(v->value).getElementType();
  else if (v->kind == VK::Tensor && t.typeOf(v->value).getRank() == 0)
    element = t.typeOf(v->value).getElementType();
  else
    return py::object();
  if (isa<FloatType>(element))
    return py::float_(0.5);
  if (element.isInteger(1))
    return py::bool_(true);
  if (element.isIntOrIndex())
    return py::int_(1);
  return py::object();
}

/// Whether format(sample, spec) accepts the spec.
bool acceptsSpec(py::handle sample, py::handle spec) {
  try {
    py::module_::import("builtins").attr("format")(sample, spec);
    return true;
  } catch (py::error_already_set &) {
    return false;
  }
}
} // namespace

bool Tracer::formattable(const VarPtr &v) {
  if (loopDepth) // a value inside a captured loop's body: the host never sees it
    return false;
  if (v->kind == VK::Scalar)
    return !llvm::is_contained(v->roots, std::string(kLoopVariable));
  return v->kind == VK::Tensor || v->kind == VK::Text;
}

VarPtr Tracer::formattedText(const VarPtr &v, const std::string &conversion,
                             const std::string &spec) {
  if (!formattable(v))
    return nullptr;
  if (v->kind == VK::Text && (conversion.empty() || conversion == "s") && spec.empty())
    return v;
  if (!spec.empty()) {
    // The spec formats the text of a conversion, the number of a scalar or of a 0-d tensor
    // (torch and numpy format its item()); of any other array numpy and torch raise.
    py::object sample = conversion.empty() ? formatSample(*this, v) : py::str("text");
    if (!sample && v->kind == VK::Text)
      sample = py::str("text");
    if (!sample || !acceptsSpec(sample, py::str(spec)))
      return nullptr;
  }
  VarPtr text = makeVar(VK::Text);
  text->items.push_back(printed(v, 0));
  text->keys.push_back(py::make_tuple(conversion, spec));
  return text;
}

VarPtr Tracer::percentText(const VarPtr &format, const VarPtr &args) {
  if (format->kind != VK::Const || !PyUnicode_CheckExact(format->obj.ptr()))
    return nullptr;
  // `template % value` takes a tuple's items, or one value.
  std::vector<VarPtr> values = args->kind == VK::Tuple && !args->cls && args->structType.empty()
                                   ? args->items
                                   : std::vector<VarPtr>{args};
  py::tuple samples(values.size());
  bool deferred = false;
  for (size_t i = 0; i < values.size(); ++i) {
    if (formattable(values[i]) && values[i]->kind != VK::Text) {
      py::object sample = formatSample(*this, values[i]);
      if (!sample)
        return nullptr; // an array: its text holds its shape, which the template may not take
      samples[i] = sample;
      deferred = true;
    } else if (values[i]->kind == VK::Text) {
      samples[i] = py::str("text");
      deferred = true;
    } else if (py::object c = values[i]->kind == VK::Const ? values[i]->obj : py::object()) {
      samples[i] = c;
    } else {
      return nullptr;
    }
  }
  if (!deferred)
    return nullptr;
  try {
    format->obj.attr("__mod__")(args->kind == VK::Tuple ? py::object(samples) : samples[0]);
  } catch (py::error_already_set &) {
    return nullptr; // the template does not take these values: it raises for real
  }
  VarPtr tuple = makeVar(VK::Tuple);
  for (const VarPtr &value : values)
    tuple->items.push_back(printed(value, 0));
  VarPtr text = makeVar(VK::Text);
  text->items.push_back(args->kind == VK::Tuple ? tuple : tuple->items[0]);
  text->keys.push_back(py::make_tuple("%", format->obj));
  return text;
}

VarPtr Tracer::joinText(const std::vector<VarPtr> &parts) {
  if (llvm::none_of(parts, [](const VarPtr &p) { return p->kind == VK::Text; }))
    return nullptr;
  VarPtr text = makeVar(VK::Text);
  for (const VarPtr &part : parts) {
    if (part->kind == VK::Text) {
      text->items.insert(text->items.end(), part->items.begin(), part->items.end());
      text->keys.insert(text->keys.end(), part->keys.begin(), part->keys.end());
    } else if (part->kind == VK::Const && PyUnicode_CheckExact(part->obj.ptr())) {
      text->items.push_back(part);
      text->keys.push_back(py::none());
    } else {
      return nullptr;
    }
  }
  return text;
}
