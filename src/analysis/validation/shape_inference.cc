#include "analysis/validation/validation.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/validation/validation_internal.h"
#include "base/ids.h"
#include "base/strings.h"
#include "model/model.h"

namespace mi::analysis {
namespace validation_detail {

bool IsDefaultDomain(std::string_view domain) {
  return domain.empty() || domain == "ai.onnx";
}

bool OneOf(std::string_view op, std::initializer_list<std::string_view> ops) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

bool IsBroadcastOp(std::string_view op) {
  return OneOf(op, {"Add",         "Sub",
                    "Mul",         "Div",
                    "Pow",         "Mod",
                    "And",         "Or",
                    "Xor",         "Equal",
                    "Less",        "Greater",
                    "LessOrEqual", "GreaterOrEqual",
                    "BitShift",    "Where",
                    "Max",         "Min",
                    "Mean",        "Sum"});
}

const Attribute* FindAttr(const Model& m, NodeId n, std::string_view name) {
  for (const Attribute& a : m.node_attributes(n)) {
    if (m.str(a.name) == name) return &a;
  }
  return nullptr;
}

int64_t IntAttr(const Model& m, NodeId n, std::string_view name,
                int64_t fallback) {
  const Attribute* a = FindAttr(m, n, name);
  return a != nullptr && a->kind == AttributeKind::kInt ? a->int_value
                                                        : fallback;
}

std::optional<std::vector<int64_t>> Dims(const Model& m, ValueId v) {
  if (!v.valid() || !m.value_has_shape(v)) return std::nullopt;
  auto dims = m.value_dims(v);
  return std::vector<int64_t>(dims.begin(), dims.end());
}

bool Broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
               std::vector<int64_t>* out) {
  size_t rank = std::max(a.size(), b.size());
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    int64_t& r = (*out)[rank - 1 - i];
    if (da == db) {
      r = da;
    } else if (da == 1) {
      r = db;
    } else if (db == 1) {
      r = da;
    } else if (!Known(da) || !Known(db)) {
      // An unknown dim is 1 or equal to the other: the known one (> 1)
      // wins, else unknown.
      r = Known(da) ? da : (Known(db) ? db : -1);
    } else {
      return false;
    }
  }
  return true;
}

int64_t Product(std::span<const int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (!Known(d)) return -1;
    if (d != 0 && p > INT64_MAX / d) return -1;
    p *= d;
  }
  return p;
}

namespace {

// Ops whose output has the shape of input 0.
bool IsShapePreserving(std::string_view op) {
  return OneOf(op, {"Relu",
                    "Sigmoid",
                    "Tanh",
                    "Exp",
                    "Log",
                    "Neg",
                    "Abs",
                    "Sqrt",
                    "Erf",
                    "Identity",
                    "Cast",
                    "Softmax",
                    "LogSoftmax",
                    "LeakyRelu",
                    "Elu",
                    "Selu",
                    "HardSigmoid",
                    "HardSwish",
                    "Gelu",
                    "Clip",
                    "Dropout",
                    "BatchNormalization",
                    "LayerNormalization",
                    "InstanceNormalization",
                    "Not",
                    "Reciprocal",
                    "Floor",
                    "Ceil",
                    "Round",
                    "Sign",
                    "Softplus",
                    "Softsign",
                    "Sin",
                    "Cos",
                    "Mish",
                    "PRelu"});
}

std::string_view StringAttr(const Model& m, NodeId n, std::string_view name) {
  const Attribute* a = FindAttr(m, n, name);
  return a != nullptr && a->kind == AttributeKind::kString ? m.str(a->text)
                                                           : "";
}

// A list of ints from its display text "[1,0,2]"; nullopt when absent or
// cut short ("[...]" lists of more items than the importer shows).
std::optional<std::vector<int64_t>> IntsAttr(const Model& m, NodeId n,
                                             std::string_view name) {
  const Attribute* a = FindAttr(m, n, name);
  if (a == nullptr || a->kind != AttributeKind::kInts) return std::nullopt;
  std::string_view text = m.str(a->text);
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
    return std::nullopt;
  }
  text = text.substr(1, text.size() - 2);
  std::vector<int64_t> out;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::optional<int64_t> value = ParseInteger<int64_t>(text.substr(0, comma));
    if (!value) return std::nullopt;
    out.push_back(*value);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

InferredShape Infer(const Model& m, NodeId n) {
  std::string_view op = m.str(m.node_op_type(n));
  std::span<const ValueId> in = m.node_inputs(n);
  InferredShape r;
  auto input = [&](size_t i) {
    return i < in.size() ? Dims(m, in[i]) : std::nullopt;
  };
  if (IsShapePreserving(op)) {
    if (auto x = input(0)) r = {true, *x};
  } else if (IsBroadcastOp(op)) {
    std::vector<int64_t> shape;
    for (size_t i = 0; i < in.size(); ++i) {
      auto x = input(i);
      if (!x) return {};
      std::vector<int64_t> next;
      if (!Broadcast(shape, *x, &next)) return {};
      shape = std::move(next);
    }
    if (!in.empty()) r = {true, shape};
  } else if (op == "MatMul") {
    auto a = input(0);
    auto b = input(1);
    if (!a || !b || a->empty() || b->empty()) return {};
    bool vec_a = a->size() == 1, vec_b = b->size() == 1;
    if (vec_a) a->insert(a->begin(), 1);
    if (vec_b) b->push_back(1);
    std::vector<int64_t> batch;
    if (!Broadcast({a->begin(), a->end() - 2}, {b->begin(), b->end() - 2},
                   &batch)) {
      return {};
    }
    if (!vec_a) batch.push_back((*a)[a->size() - 2]);
    if (!vec_b) batch.push_back(b->back());
    r = {true, batch};
  } else if (op == "Gemm") {
    auto a = input(0);
    auto b = input(1);
    if (!a || !b || a->size() != 2 || b->size() != 2) return {};
    bool ta = IntAttr(m, n, "transA", 0) != 0;
    bool tb = IntAttr(m, n, "transB", 0) != 0;
    r = {true, {ta ? (*a)[1] : (*a)[0], tb ? (*b)[0] : (*b)[1]}};
  } else if (op == "Concat") {
    std::optional<std::vector<int64_t>> out;
    int64_t axis = IntAttr(m, n, "axis", 0);
    for (size_t i = 0; i < in.size(); ++i) {
      auto x = input(i);
      if (!x) return {};
      int64_t rank = static_cast<int64_t>(x->size());
      int64_t a = axis < 0 ? axis + rank : axis;
      if (a < 0 || a >= rank) return {};
      if (!out) {
        out = x;
        continue;
      }
      if (x->size() != out->size()) return {};
      int64_t& d = (*out)[a];
      d = Known(d) && Known((*x)[a]) && d <= INT64_MAX - (*x)[a] ? d + (*x)[a]
                                                                 : -1;
      for (size_t k = 0; k < x->size(); ++k) {
        if (static_cast<int64_t>(k) != a && !Known((*out)[k])) {
          (*out)[k] = (*x)[k];
        }
      }
    }
    if (out) r = {true, *out};
  } else if (op == "Transpose") {
    auto x = input(0);
    if (!x) return {};
    std::vector<int64_t> perm;
    if (auto p = IntsAttr(m, n, "perm")) {
      perm = *p;
    } else if (FindAttr(m, n, "perm") != nullptr) {
      return {};
    } else {
      for (size_t i = x->size(); i-- > 0;) {
        perm.push_back(static_cast<int64_t>(i));
      }
    }
    if (perm.size() != x->size()) return {};
    r.has_shape = true;
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(x->size())) return {};
      r.dims.push_back((*x)[p]);
    }
  } else if (op == "Flatten") {
    auto x = input(0);
    if (!x) return {};
    int64_t rank = static_cast<int64_t>(x->size());
    int64_t axis = IntAttr(m, n, "axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return {};
    std::span<const int64_t> dims(*x);
    r = {true, {Product(dims.subspan(0, axis)), Product(dims.subspan(axis))}};
  } else if (op == "Conv") {
    auto x = input(0);
    auto w = input(1);
    if (!x || !w || x->size() < 3 || x->size() != w->size()) return {};
    size_t spatial = x->size() - 2;
    auto kernel = IntsAttr(m, n, "kernel_shape");
    auto strides = IntsAttr(m, n, "strides");
    auto pads = IntsAttr(m, n, "pads");
    auto dilations = IntsAttr(m, n, "dilations");
    for (std::string_view name :
         {"kernel_shape", "strides", "pads", "dilations"}) {
      // Present but unreadable (cut short): no inference.
      if (FindAttr(m, n, name) != nullptr && !IntsAttr(m, n, name)) return {};
    }
    std::string_view auto_pad = StringAttr(m, n, "auto_pad");
    if ((kernel && kernel->size() != spatial) ||
        (strides && strides->size() != spatial) ||
        (pads && pads->size() != 2 * spatial) ||
        (dilations && dilations->size() != spatial)) {
      return {};
    }
    r.has_shape = true;
    r.dims = {(*x)[0], (*w)[0]};
    for (size_t i = 0; i < spatial; ++i) {
      int64_t in_dim = (*x)[2 + i];
      int64_t k = kernel ? (*kernel)[i] : (*w)[2 + i];
      int64_t s = strides ? (*strides)[i] : 1;
      int64_t d = dilations ? (*dilations)[i] : 1;
      if (!Known(in_dim) || !Known(k) || s <= 0 || d <= 0) {
        r.dims.push_back(-1);
      } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        r.dims.push_back(in_dim / s + (in_dim % s != 0 ? 1 : 0));
      } else {
        __int128 p =
            auto_pad == "VALID" || !pads
                ? 0
                : static_cast<__int128>((*pads)[i]) + (*pads)[i + spatial];
        // 128-bit: dims and attributes come from the file, unchecked.
        __int128 span = static_cast<__int128>(in_dim) + p -
                        static_cast<__int128>(d) * (k - 1) - 1;
        r.dims.push_back(span < 0 || span / s + 1 > INT64_MAX
                             ? -1
                             : static_cast<int64_t>(span / s + 1));
      }
    }
  }
  return r;
}

}  // namespace
}  // namespace validation_detail

InferredShape InferOutputShape(const Model& model, NodeId node, size_t output) {
  if (output != 0 ||
      !validation_detail::IsDefaultDomain(model.str(model.node_domain(node)))) {
    return {};
  }
  return validation_detail::Infer(model, node);
}

}  // namespace mi::analysis
