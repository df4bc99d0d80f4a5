// Advanced indexing and the ops that read through an index: x[idx] (index),
// x[idx] = v (index_put_), index_select, gather, take, masked_fill, masked_select,
// masked_scatter, nonzero. The scatter family and index_add/copy/fill/reduce are
// in TensorAdvancedIndexing.cpp; the element loops in cpu/IndexKernel.cpp.
#include "Indexing.h"

#include <algorithm>

#include <ember/aten/Dispatch.h>

namespace ember::at::native {

DEFINE_DISPATCH(index_stub);
DEFINE_DISPATCH(index_put_stub);
DEFINE_DISPATCH(masked_fill_stub);
DEFINE_DISPATCH(masked_select_stub);
DEFINE_DISPATCH(masked_scatter_stub);
DEFINE_DISPATCH(nonzero_stub);
DEFINE_DISPATCH(index_reduce_stub);
DEFINE_DISPATCH(divide_by_count_stub);

// ---------------------------------------------------------------------------
// shared helpers
// ---------------------------------------------------------------------------

void throw_index_out_of_range(int64_t index, int64_t dim, int64_t size, IndexMode mode) {
  if (mode == IndexMode::Take) {
    throw c10::IndexError(
        c10::str("out of range: tried to access index ", index, " on a tensor of ", size, " elements."));
  }
  throw c10::IndexError(c10::str("index ", index, " is out of bounds for dimension ", dim, " with size ", size));
}

void check_index_range(const Tensor& index, int64_t size, int64_t dim, IndexMode mode) {
  // CUDA indices are checked by the kernels, on the device (see Indexing.h).
  if (index.numel() == 0 || index.is_cuda()) return;
  const Tensor idx = index.contiguous();
  const int64_t* p = idx.data_ptr<int64_t>();
  const int64_t n = idx.numel();
  const int64_t lo = mode == IndexMode::NoWrap ? 0 : -size;
  // The common case (all valid) in one branch-free pass; the offender is found after.
  struct MinMax {
    int64_t lo, hi;
  };
  // A min/max pass is memory-bound and cheap: threads only pay off on large indices.
  constexpr int64_t kGrain = int64_t{1} << 19;
  const MinMax mm = parallel_reduce(
      int64_t{0}, n, kGrain, MinMax{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()},
      [p](int64_t b, int64_t e) {
        MinMax r{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
        for (int64_t i = b; i < e; ++i) {
          r.lo = std::min(r.lo, p[i]);
          r.hi = std::max(r.hi, p[i]);
        }
        return r;
      },
      [](MinMax a, MinMax b) { return MinMax{std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; });
  if (mm.lo >= lo && mm.hi < size) return;
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] < lo || p[i] >= size) throw_index_out_of_range(p[i], dim, size, mode);
  }
}

void check_same_device(const Tensor& self, const Tensor& other, const char* what, const char* op) {
  if (self.device() == other.device()) return;
  Device a = self.device(), b = other.device();
  if (a.is_cpu() && !b.is_cpu()) std::swap(a, b);
  EMBER_CHECK(false, "Expected all tensors to be on the same device, but found at least two devices, ", a, " and ", b,
              "! (when checking argument for argument ", what, " in method ", op, ")");
}

Tensor ensure_1d(const Tensor& t) { return t.dim() == 0 ? t.as_strided({1}, {1}) : t; }

const char* c_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "bool";
    case ScalarType::Byte:
      return "unsigned char";
    case ScalarType::Char:
      return "signed char";
    case ScalarType::Short:
      return "short int";
    case ScalarType::Int:
      return "int";
    case ScalarType::Long:
      return "long int";
    case ScalarType::Half:
      return "c10::Half";
    case ScalarType::BFloat16:
      return "c10::BFloat16";
    case ScalarType::Float:
      return "float";
    case ScalarType::Double:
      return "double";
    default:
      return c10::toString(t);
  }
}

void check_no_internal_overlap(const Tensor& t, const char* op) {
  if (t.numel() <= 1) return;
  for (int64_t d = 0; d < t.dim(); ++d) {
    EMBER_CHECK(!(t.size(d) > 1 && t.stride(d) == 0), op,
                ": unsupported operation: more than one element of the written-to tensor refers to a single memory "
                "location. Please clone() the tensor before performing the operation.");
  }
}

namespace {
// out= of an indexing op: the dtype, and no memory shared with self or with `other` (the index
// or mask read while out is written), as PyTorch's assert_no_overlap
void check_out(const Tensor& out, const Tensor& self, ScalarType dtype, const char* op,
               const Tensor& other = Tensor()) {
  EMBER_CHECK(out.dtype() == dtype, op, ": expected out tensor to have dtype ", c10::toPythonName(dtype), ", but got ",
              c10::toPythonName(out.dtype()), " instead");
  check_no_internal_overlap(out, op);
  for (const Tensor* in : {&self, &other}) {
    EMBER_CHECK(!in->defined() || out.numel() == 0 || !out.is_alias_of(*in), op,
                ": unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                "single memory location. Please clone() the tensor before performing the operation.");
  }
}
}  // namespace

Tensor prepare_out_like_self(const Tensor& self, const Tensor& out, const char* op) {
  if (!out.defined()) return self.clone();
  if (out.is_same(self)) {
    check_no_internal_overlap(self, op);
    return self;
  }
  check_out(out, self, self.dtype(), op);
  resize_output(out, self.sizes());
  out.copy_(self);
  return out;
}

Tensor check_vector_index(const Tensor& index, const char* op, bool allow_int32) {
  EMBER_CHECK_INDEX(index.dim() <= 1, op, "(): Index is supposed to be a vector");
  const ScalarType t = index.dtype();
  if (allow_int32) {
    EMBER_CHECK(t == ScalarType::Long || t == ScalarType::Int, op, "(): Expected dtype int32 or int64 for index");
  } else {
    EMBER_CHECK(t == ScalarType::Long, op, "(): Expected dtype int64 for index");
  }
  const Tensor idx = t == ScalarType::Long ? index : index.to(ScalarType::Long);
  return ensure_1d(idx);
}

TensorIterator make_index_iter(const Tensor& dst, const Tensor& src, const std::vector<Tensor>& indices,
                               const char* name) {
  TensorIteratorConfig config;
  config.name(name)
      .check_all_same_dtype(false)
      .check_all_same_device(false)
      .resize_outputs(false)
      .check_mem_overlap(false)  // dst is a restrided view with stride-0 dims by design
      .add_output(dst)
      .add_input(src);
  for (const auto& idx : indices) config.add_input(idx);
  return config.build();
}

// ---------------------------------------------------------------------------
// advanced indexing: index / index_put_
// ---------------------------------------------------------------------------

namespace {

// self indexed by one int64 tensor per dim (undefined: the dim is not indexed),
// restrided as described in Indexing.h.
struct AdvancedIndex {
  Tensor src;                   // self viewed in the result's shape (stride 0 over the index dims)
  std::vector<Tensor> indices;  // the index tensors, shaped to broadcast to the result
  std::vector<Tensor> raw;      // the same, before reshaping (for check_index_range)
  IndexedDims dims;
  DimVector result_shape;
};

// Turns the Tensor?[] argument into one long tensor (or undefined) per dim of self:
// bool/uint8 masks become their nonzero() coordinates, int32 becomes int64, a 0-dim
// mask becomes a new dim of size 1 indexed by [0] or [] (NumPy's rule).
std::vector<Tensor> expand_indices(Tensor& self, const std::vector<std::optional<Tensor>>& indices) {
  std::vector<Tensor> out;
  int64_t dim = 0;
  auto too_many = [&](int64_t got) {
    EMBER_CHECK_INDEX(got <= self.dim(), "too many indices for tensor of dimension ", self.dim(), " (got ", got, ")");
  };
  for (const auto& entry : indices) {
    if (!entry || !entry->defined()) {
      out.emplace_back();
      too_many(++dim);
      continue;
    }
    // Indices may live on the CPU for a CUDA self (PyTorch moves them), not elsewhere.
    EMBER_CHECK(entry->is_cpu() || entry->device() == self.device(),
                "indices should be either on cpu or on the same device as the indexed tensor (", self.device(), ")");
    const Tensor t = entry->device() == self.device() ? *entry : entry->to(self.device());
    const ScalarType st = t.dtype();
    if (st == ScalarType::Bool || st == ScalarType::Byte) {
      if (t.dim() == 0) {
        self = self.unsqueeze(dim);
        out.push_back(t.item().toBool() ? zeros({1}, ScalarType::Long, self.device())
                                        : empty({0}, ScalarType::Long, self.device()));
        ++dim;
        continue;
      }
      too_many(dim + t.dim());
      for (int64_t j = 0; j < t.dim(); ++j) {
        EMBER_CHECK_INDEX(t.size(j) == self.size(dim + j), "The shape of the mask ", t.sizes(), " at index ", j,
                          " does not match the shape of the indexed tensor ", self.sizes(), " at index ", dim + j);
      }
      const Tensor nz = nonzero_stub(t.device().type, t);
      for (int64_t j = 0; j < t.dim(); ++j) out.push_back(nz.select(1, j));
      dim += t.dim();
    } else if (st == ScalarType::Long || st == ScalarType::Int) {
      too_many(++dim);
      out.push_back(st == ScalarType::Long ? t : t.to(ScalarType::Long));
    } else {
      EMBER_CHECK_INDEX(false, "tensors used as indices must be long, int, byte or bool tensors");
    }
  }
  out.resize(self.dim());
  return out;
}

AdvancedIndex make_info(Tensor self, std::vector<Tensor> idx) {
  AdvancedIndex info;
  // Broadcast the index tensors together.
  DimVector bshape;
  bool first = true;
  std::string shapes;
  for (const auto& t : idx) {
    if (!t.defined()) continue;
    shapes += (shapes.empty() ? "" : ", ") + shape_str(t.sizes());
  }
  for (const auto& t : idx) {
    if (!t.defined()) continue;
    if (first) {
      bshape = DimVector(t.sizes());
      first = false;
      continue;
    }
    // IndexError naming every shape, as NumPy and PyTorch do.
    const size_t n = std::max(bshape.size(), static_cast<size_t>(t.dim()));
    DimVector merged(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t da = static_cast<int64_t>(bshape.size()) - static_cast<int64_t>(n - i);
      const int64_t db = t.dim() - static_cast<int64_t>(n - i);
      const int64_t a = da >= 0 ? bshape[da] : 1;
      const int64_t b = db >= 0 ? t.size(db) : 1;
      EMBER_CHECK_INDEX(a == b || a == 1 || b == 1,
                        "shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes);
      merged[i] = a == 1 ? b : a;
    }
    bshape = merged;
  }
  // Indexed dims that are not adjacent go to the front (NumPy's rule): permute self.
  std::vector<int64_t> pos;
  for (size_t d = 0; d < idx.size(); ++d)
    if (idx[d].defined()) pos.push_back(static_cast<int64_t>(d));
  DimVector perm;
  for (int64_t d = 0; d < self.dim(); ++d) perm.push_back(d);
  if (!pos.empty() && pos.back() - pos.front() + 1 != static_cast<int64_t>(pos.size())) {
    perm.clear();
    std::vector<Tensor> reordered;
    for (int64_t d : pos) {
      perm.push_back(d);
      reordered.push_back(idx[d]);
    }
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (!idx[d].defined()) {
        perm.push_back(d);
        reordered.emplace_back();
      }
    }
    self = self.permute(perm);
    idx = reordered;
    pos.clear();
    for (size_t d = 0; d < idx.size(); ++d)
      if (idx[d].defined()) pos.push_back(static_cast<int64_t>(d));
  }
  const int64_t before = pos.front();
  const int64_t k = static_cast<int64_t>(pos.size());
  const int64_t after = self.dim() - before - k;
  const int64_t bdim = static_cast<int64_t>(bshape.size());
  DimVector src_strides;
  for (int64_t d = 0; d < before; ++d) {
    info.result_shape.push_back(self.size(d));
    src_strides.push_back(self.stride(d));
  }
  for (int64_t s : bshape) {
    info.result_shape.push_back(s);
    src_strides.push_back(0);
  }
  for (int64_t d = before + k; d < self.dim(); ++d) {
    info.result_shape.push_back(self.size(d));
    src_strides.push_back(self.stride(d));
  }
  info.src = self.as_strided(info.result_shape, src_strides);
  const int64_t isz = static_cast<int64_t>(self.itemsize());
  for (int64_t d = before; d < before + k; ++d) {
    const Tensor& t = idx[d];
    info.dims.push_back(IndexedDim{self.size(d), self.stride(d) * isz, perm[d]});
    // [1]*before + (t right-aligned in the broadcast shape) + [1]*after, stride 0 on the 1s
    DimVector sizes(before + bdim - t.dim(), 1), strides(before + bdim - t.dim(), 0);
    for (int64_t j = 0; j < t.dim(); ++j) {
      sizes.push_back(t.size(j));
      strides.push_back(t.stride(j));
    }
    for (int64_t j = 0; j < after; ++j) {
      sizes.push_back(1);
      strides.push_back(0);
    }
    info.indices.push_back(t.as_strided(sizes, strides));
    info.raw.push_back(t);
  }
  return info;
}

// Whether `from` broadcasts to exactly `to`.
bool broadcastable_to(IntArrayRef from, IntArrayRef to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    const int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

// The positions and shape of a lone mask index (everything else None): x[mask] is
// then masked_select over self with the mask broadcast along the other dims.
struct LoneMask {
  Tensor mask;
  int64_t dim = -1;
};
LoneMask lone_mask(const Tensor& self, const std::vector<std::optional<Tensor>>& indices) {
  LoneMask r;
  int64_t p = 0;
  for (const auto& e : indices) {
    if (!e || !e->defined()) {
      ++p;
      continue;
    }
    if (r.mask.defined()) return LoneMask{};
    const ScalarType st = e->dtype();
    if ((st != ScalarType::Bool && st != ScalarType::Byte) || e->dim() == 0) return LoneMask{};
    r.mask = *e;
    r.dim = p;
    p += e->dim();
  }
  if (!r.mask.defined() || r.dim + r.mask.dim() > self.dim()) return LoneMask{};
  for (int64_t j = 0; j < r.mask.dim(); ++j)
    if (r.mask.size(j) != self.size(r.dim + j)) return LoneMask{};  // the general path words the error
  if (r.mask.device() != self.device()) {
    if (!r.mask.is_cpu()) return LoneMask{};  // the general path words the error
    r.mask = r.mask.to(self.device());
  }
  return r;
}

// The mask as a view in self's shape (stride 0 along the dims it does not cover).
Tensor mask_in_shape_of(const Tensor& self, const LoneMask& lm) {
  DimVector strides(self.dim(), 0);
  for (int64_t j = 0; j < lm.mask.dim(); ++j) strides[lm.dim + j] = lm.mask.stride(j);
  return lm.mask.as_strided(self.sizes(), strides);
}

}  // namespace

Tensor index_out(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& out) {
  EMBER_CHECK_INDEX(!indices.empty(), "index: at least one index must be provided");
  if (out.defined()) check_same_device(self, out, "out", "index");
  if (out.defined()) check_out(out, self, self.dtype(), "index");
  // x[mask]: one pass to count, one to copy, instead of nonzero() + gather.
  const LoneMask lm = lone_mask(self, indices);
  if (lm.mask.defined()) {
    int64_t others = 1;
    for (int64_t d = 0; d < self.dim(); ++d)
      if (d < lm.dim || d >= lm.dim + lm.mask.dim()) others *= self.size(d);
    if (others > 0) {
      const Tensor flat = masked_select_stub(self.device().type, self, mask_in_shape_of(self, lm));
      DimVector shape;
      for (int64_t d = 0; d < lm.dim; ++d) shape.push_back(self.size(d));
      shape.push_back(flat.numel() / others);
      for (int64_t d = lm.dim + lm.mask.dim(); d < self.dim(); ++d) shape.push_back(self.size(d));
      const Tensor r = flat.view(shape);
      if (!out.defined()) return r;
      resize_output(out, shape);
      out.copy_(r);
      return out;
    }
  }
  Tensor s = self;
  std::vector<Tensor> expanded = expand_indices(s, indices);  // may unsqueeze s (0-dim masks)
  if (std::none_of(expanded.begin(), expanded.end(), [](const Tensor& t) { return t.defined(); })) {
    // only None entries: a copy of self
    Tensor r = out.defined() ? out : empty(s.sizes(), self.dtype(), self.device());
    resize_output(r, s.sizes());
    r.copy_(s);
    return r;
  }
  const AdvancedIndex info = make_info(s, std::move(expanded));
  Tensor result = out;
  if (result.defined()) {
    resize_output(result, info.result_shape);
  } else {
    result = empty(info.result_shape, self.dtype(), self.device());
  }
  if (result.numel() == 0) return result;
  auto iter = make_index_iter(result, info.src, info.indices, "index");
  index_stub(self.device().type, iter, info.dims, IndexMode::Wrap, "index");
  return result;
}

Tensor index_put_(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                  bool accumulate) {
  EMBER_CHECK_INDEX(!indices.empty(), "index_put_: at least one index must be provided");
  EMBER_CHECK(values.dtype() == self.dtype(), "Index put requires the source and destination dtypes match, got ",
              c10::toString(self.dtype()), " for the destination and ", c10::toString(values.dtype()),
              " for the source.");
  check_no_internal_overlap(self, "index_put_");
  // A 0-dim CPU value may fill a CUDA self; anything else must be on self's device.
  const bool cpu_scalar = values.dim() == 0 && values.is_cpu();
  if (!cpu_scalar) check_same_device(self, values, "values", "index_put_");
  // Reading values while writing self through another view of the same memory would
  // see half-written data: take a copy first.
  const Tensor vals = values.is_alias_of(self) ? values.clone() : cpu_scalar ? values.to(self.device()) : values;
  // x[mask] = scalar: a masked_fill, no index tensors at all.
  if (!accumulate && vals.numel() == 1) {
    const LoneMask lm = lone_mask(self, indices);
    if (lm.mask.defined()) {
      if (self.numel() == 0) return self;
      auto iter = TensorIteratorConfig()
                      .name("index_put_")
                      .add_output(self)
                      .add_input(mask_in_shape_of(self, lm))
                      .check_all_same_dtype(false)
                      .resize_outputs(false)
                      .check_mem_overlap(false)
                      .build();
      // the stub reads the value on the host
      const Tensor v = vals.reshape({}).to(Device(DeviceType::CPU)).contiguous();
      masked_fill_stub(self.device().type, iter, v.data_ptr());
      return self;
    }
  }
  Tensor s = self;
  std::vector<Tensor> expanded = expand_indices(s, indices);  // may unsqueeze s (0-dim masks)
  if (std::none_of(expanded.begin(), expanded.end(), [](const Tensor& t) { return t.defined(); })) {
    EMBER_CHECK(broadcastable_to(vals.sizes(), s.sizes()), "shape mismatch: value tensor of shape ", vals.sizes(),
                " cannot be broadcast to indexing result of shape ", s.sizes());
    if (!accumulate) {
      s.copy_(vals);
    } else {
      // self += values, through the serial loop (no index tensors: one dim of size 1, stride 0)
      const Tensor idx = zeros({}, ScalarType::Long, self.device());
      auto iter = make_index_iter(s, vals, {idx}, "index_put_");
      IndexedDims dims;
      dims.push_back(IndexedDim{1, 0, 0});
      index_reduce_serial(iter, dims, IndexMode::Wrap, ReduceOp::Add, Scalar(int64_t{1}), "index_put_");
    }
    return self;
  }
  const AdvancedIndex info = make_info(s, std::move(expanded));
  EMBER_CHECK(broadcastable_to(vals.sizes(), info.result_shape), "shape mismatch: value tensor of shape ", vals.sizes(),
              " cannot be broadcast to indexing result of shape ", IntArrayRef(info.result_shape));
  int64_t n = 1;
  for (int64_t d : info.result_shape) n *= d;
  if (n == 0) return self;
  for (size_t q = 0; q < info.raw.size(); ++q) {
    check_index_range(info.raw[q], info.dims[q].size, info.dims[q].dim, IndexMode::Wrap);
  }
  auto iter = make_index_iter(info.src, vals, info.indices, "index_put_");
  if (accumulate) {
    index_reduce_serial(iter, info.dims, IndexMode::Wrap, ReduceOp::Add, Scalar(int64_t{1}), "index_put_");
  } else {
    index_put_stub(self.device().type, iter, info.dims, IndexMode::Wrap, "index_put_");
  }
  return self;
}

Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                 bool accumulate) {
  Tensor result = self.clone();
  index_put_(result, indices, values, accumulate);
  return result;
}

// ---------------------------------------------------------------------------
// index_select, gather, take
// ---------------------------------------------------------------------------

Tensor index_select_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  check_same_device(self, index, "index", "index_select");
  if (out.defined()) check_same_device(self, out, "out", "index_select");
  const Tensor idx = check_vector_index(index, "index_select", true);
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  const int64_t n = idx.numel();
  if (self.dim() == 0) {
    EMBER_CHECK_INDEX(n == 1, "index_select(): Index to scalar can have only 1 value, got ", n, " value(s)");
  }
  if (self.dim() > 0 && self.size(d) == 0 && n > 0) {
    // nothing to select from (PyTorch's two messages: 1-d and n-d)
    EMBER_CHECK_INDEX(self.dim() != 1, "index out of range in self");
    EMBER_CHECK(false, "index_select(): self indexing axis dim should be positive");
  }
  DimVector shape(self.sizes());
  if (self.dim() > 0) shape[d] = n;
  Tensor result = out;
  if (result.defined()) {
    check_out(result, self, self.dtype(), "index_select", index);
    resize_output(result, shape);
  } else {
    result = empty(shape, self.dtype(), self.device());
  }
  if (result.numel() == 0) return result;
  const Tensor self1 = ensure_1d(self);
  const Tensor result1 = ensure_1d(result);
  DimVector src_strides(self1.strides());
  src_strides[d] = 0;
  const Tensor src = self1.as_strided(result1.sizes(), src_strides);
  DimVector isizes(self1.dim(), 1), istrides(self1.dim(), 0);
  isizes[d] = n;
  istrides[d] = idx.stride(0);
  auto iter = make_index_iter(result1, src, {idx.as_strided(isizes, istrides)}, "index_select");
  IndexedDims dims;
  dims.push_back(IndexedDim{self1.size(d), self1.stride(d) * static_cast<int64_t>(self.itemsize()), d});
  index_stub(self.device().type, iter, dims, IndexMode::NoWrap, "index_select()");
  return result;
}

Tensor gather_out(const Tensor& self, int64_t dim, const Tensor& index_in, bool sparse_grad, const Tensor& out) {
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  if (index_in.numel() == 0) {
    // an empty index of any dtype and rank gives an empty result of its shape, as PyTorch's
    Tensor result = out.defined() ? out : empty(index_in.sizes(), self.dtype(), self.device());
    if (out.defined()) {
      check_out(result, self, self.dtype(), "gather");
      resize_output(result, index_in.sizes());
    }
    return result;
  }
  EMBER_CHECK(index_in.dtype() == ScalarType::Long || index_in.dtype() == ScalarType::Int,
              "gather(): Expected dtype int32/int64 for index");
  // int32 indices are accepted as PyTorch does; the kernel reads int64
  const Tensor index = index_in.dtype() == ScalarType::Long ? index_in : index_in.to(ScalarType::Long);
  check_same_device(self, index, "index", "gather");
  if (out.defined()) check_same_device(self, out, "out", "gather");
  EMBER_CHECK(std::max<int64_t>(index.dim(), 1) == nd,
              "Index tensor must have the same number of dimensions as input tensor");
  const Tensor self1 = ensure_1d(self);
  const Tensor index1 = ensure_1d(index);
  for (int64_t i = 0; i < nd; ++i) {
    if (i == d) continue;
    EMBER_CHECK(index1.size(i) <= self1.size(i), "Size does not match at dimension ", i, " expected index ",
                index.sizes(), " to be smaller than self ", self.sizes(), " apart from dimension ", d);
  }
  Tensor result = out;
  if (result.defined()) {
    check_out(result, self, self.dtype(), "gather");
    EMBER_CHECK(result.numel() == 0 || !result.is_alias_of(index),
                "gather: unsupported operation: the out tensor and index refer to the same memory");
    resize_output(result, index.sizes());
  } else {
    result = empty(index.sizes(), self.dtype(), self.device());
  }
  if (result.numel() == 0) return result;
  DimVector src_strides(self1.strides());
  src_strides[d] = 0;
  const Tensor src = self1.as_strided(index1.sizes(), src_strides);
  auto iter = make_index_iter(ensure_1d(result), src, {index1}, "gather");
  IndexedDims dims;
  dims.push_back(IndexedDim{self1.size(d), self1.stride(d) * static_cast<int64_t>(self.itemsize()), d});
  index_error_as_runtime_error([&] { index_stub(self.device().type, iter, dims, IndexMode::NoWrap, "gather()"); });
  return result;
}

Tensor take_out(const Tensor& self, const Tensor& index, const Tensor& out) {
  EMBER_CHECK(index.dtype() == ScalarType::Long, "take(): Expected a long tensor for index, but got ",
              c10::toString(index.dtype()));
  check_same_device(self, index, "index", "take");
  if (out.defined()) check_same_device(self, out, "out", "take");
  Tensor result = out;
  if (result.defined()) {
    check_out(result, self, self.dtype(), "take", index);
    resize_output(result, index.sizes());
  } else {
    result = empty(index.sizes(), self.dtype(), self.device());
  }
  if (result.numel() == 0) return result;
  const Tensor flat = self.contiguous();
  const Tensor src = flat.as_strided(index.sizes(), DimVector(index.dim(), 0));
  auto iter = make_index_iter(result, src, {index}, "take");
  IndexedDims dims;
  dims.push_back(IndexedDim{flat.numel(), static_cast<int64_t>(self.itemsize()), 0});
  index_stub(self.device().type, iter, dims, IndexMode::Take, "take()");
  return result;
}

// ---------------------------------------------------------------------------
// masked_fill, masked_select, masked_scatter
// ---------------------------------------------------------------------------

Tensor masked_fill__Scalar(const Tensor& self, const Tensor& mask, const Scalar& value) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              c_type_name(mask.dtype()));
  auto iter = TensorIteratorConfig()
                  .name("masked_fill_")
                  .add_output(self)
                  .add_input(mask)
                  .check_all_same_dtype(false)
                  .resize_outputs(false)
                  .build();
  if (self.numel() == 0) return self;
  const Tensor v = scalar_tensor(value, self.dtype());  // on the host: the stub reads it there
  masked_fill_stub(self.device().type, iter, v.data_ptr());
  return self;
}

namespace {
Scalar zero_dim_value(const Tensor& value, const char* op) {
  EMBER_CHECK(value.dim() == 0, op, " only supports a 0-dimensional value tensor, but got tensor with ", value.dim(),
              " dimension(s).");
  return value.item();
}

// The out-of-place masked ops return the broadcast of self and mask.
Tensor broadcast_copy(const Tensor& self, const Tensor& mask, const char* op) {
  const DimVector shape = infer_size(self.sizes(), mask.sizes(), op);
  Tensor result = empty(shape, self.dtype(), self.device());
  result.copy_(self);
  return result;
}
}  // namespace

Tensor masked_fill_Scalar(const Tensor& self, const Tensor& mask, const Scalar& value) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              c_type_name(mask.dtype()));
  Tensor result = broadcast_copy(self, mask, "masked_fill");
  masked_fill__Scalar(result, mask, value);
  return result;
}

Tensor masked_fill__Tensor(const Tensor& self, const Tensor& mask, const Tensor& value) {
  return masked_fill__Scalar(self, mask, zero_dim_value(value, "masked_fill_"));
}

Tensor masked_fill_Tensor(const Tensor& self, const Tensor& mask, const Tensor& value) {
  return masked_fill_Scalar(self, mask, zero_dim_value(value, "masked_fill_"));
}

Tensor masked_select_out(const Tensor& self, const Tensor& mask, const Tensor& out) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, "masked_select: expected BoolTensor for mask");
  check_same_device(self, mask, "mask", "masked_select");
  if (out.defined()) check_same_device(self, out, "out", "masked_select");
  if (out.defined()) check_out(out, self, self.dtype(), "masked_select", mask);
  const DimVector shape = infer_size(self.sizes(), mask.sizes(), "masked_select");
  const Tensor r = masked_select_stub(self.device().type, self.expand(shape), mask.expand(shape));
  if (!out.defined()) return r;
  resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

Tensor masked_scatter_(const Tensor& self, const Tensor& mask, const Tensor& source) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              c_type_name(mask.dtype()));
  EMBER_CHECK(self.dtype() == source.dtype(), "masked_scatter_: expected self and source to have same dtypes but got ",
              c10::toString(self.dtype()), " and ", c10::toString(source.dtype()));
  check_same_device(self, mask, "mask", "masked_scatter_");
  check_same_device(self, source, "source", "masked_scatter_");
  const Tensor m = mask.expand(self.sizes());
  check_no_internal_overlap(self, "masked_scatter_");
  if (self.numel() == 0) return self;
  const Tensor src = source.is_alias_of(self) ? source.clone() : source.contiguous();
  masked_scatter_stub(self.device().type, self, m, src);
  return self;
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              c_type_name(mask.dtype()));
  Tensor result = broadcast_copy(self, mask, "masked_scatter");
  masked_scatter_(result, mask, source);
  return result;
}

// ---------------------------------------------------------------------------
// nonzero, argwhere
// ---------------------------------------------------------------------------

Tensor nonzero(const Tensor& self) { return nonzero_stub(self.device().type, self); }

Tensor nonzero_out(const Tensor& self, const Tensor& out) {
  EMBER_CHECK(out.dtype() == ScalarType::Long,
              "nonzero: Expected out tensor to have scalar type Long but got scalar type ", c10::toString(out.dtype()));
  check_same_device(self, out, "out", "nonzero");
  const Tensor r = nonzero_stub(self.device().type, self);
  resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

std::vector<Tensor> nonzero_numpy(const Tensor& self) {
  const Tensor nz = nonzero_stub(self.device().type, self.dim() == 0 ? self.unsqueeze(0) : self);
  std::vector<Tensor> cols;
  for (int64_t j = 0; j < nz.size(1); ++j) cols.push_back(nz.select(1, j));
  return cols;
}

Tensor argwhere(const Tensor& self) { return nonzero_stub(self.device().type, self); }

}  // namespace ember::at::native
