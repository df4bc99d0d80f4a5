// searchsorted and bucketize (PyTorch's Bucketization.cpp): the operators of both
// devices -- the checks (searchsorted_plan), then bucketize_stub -- and the CPU's search
// loop, a parallel loop of binary searches, one per value (the CUDA kernel is in
// cuda/Bucketization.cu).
#include "Bucketization.h"

#include <climits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>

namespace ember::at::native {

Tensor amax_out(const Tensor& self, IntArrayRef dim, bool keepdim, const Tensor& out);
Tensor amin_out(const Tensor& self, IntArrayRef dim, bool keepdim, const Tensor& out);

namespace {

std::string shape_str(IntArrayRef s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

}  // namespace

BucketizePlan searchsorted_plan(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                                const std::optional<std::string>& side, const std::optional<Tensor>& sorter,
                                const Tensor& out, bool scalar_input) {
  const char* op = "torch.searchsorted()";
  if (side.has_value()) {
    EMBER_CHECK(*side == "left" || *side == "right", op, ": side can only be 'left' or 'right' but got ", *side);
    EMBER_CHECK(!right || *side == "right", op, ": side and right can't be set to opposites, got side of ", *side,
                " while right was True");
    right = *side == "right";
  }
  check_same_device("searchsorted", sorted_sequence, self);
  const bool has_sorter = sorter.has_value() && sorter->defined();
  if (has_sorter) {
    check_same_device("searchsorted", sorted_sequence, *sorter);
    EMBER_CHECK(sorter->dtype() == ScalarType::Long, op, ": sorter must be a tensor of long dtype but got dtype ",
                c10::toString(sorter->dtype()));
    EMBER_CHECK(sorter->sizes().equals(sorted_sequence.sizes()), op,
                ": boundary and sorter must have the same size, but got boundary tensor ",
                shape_str(sorted_sequence.sizes()), "and got sorter tensor ", shape_str(sorter->sizes()));
  }
  const ScalarType out_dtype = out_int32 ? ScalarType::Int : ScalarType::Long;
  if (out.defined()) {
    check_same_device("searchsorted", sorted_sequence, out);
    EMBER_CHECK(out.dtype() == out_dtype, op,
                ": output tensor's dtype is wrong, it can only be Int(int32) or Long(int64) depending on whether "
                "out_int32 flag is True, but we got output tensor's dtype ",
                c10::toString(out.dtype()), " and out_int32 flag is ", out_int32 ? "True" : "False");
  }
  EMBER_CHECK(sorted_sequence.dim() > 0, op, ": boundaries tensor should have positive dimension, but got 0 dimension");
  if (scalar_input) {
    EMBER_CHECK(sorted_sequence.dim() == 1, op,
                ": input value can be a scalar only when boundaries tensor dimension is 1, but we got boundaries "
                "tensor dim(",
                sorted_sequence.dim(), ") and input value's dim(", self.dim(), ") numel(", self.numel(), ")");
  }
  if (sorted_sequence.dim() > 1) {
    bool match = self.dim() == sorted_sequence.dim();
    for (int64_t d = 0; match && d + 1 < self.dim(); ++d) match = self.size(d) == sorted_sequence.size(d);
    EMBER_CHECK(match, op,
                ": boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input "
                "value tensor must match, but we got boundaries tensor ",
                shape_str(sorted_sequence.sizes()), " and input value tensor ", shape_str(self.sizes()));
  }
  const int64_t row_size = sorted_sequence.size(-1);
  EMBER_CHECK(!out_int32 || row_size < INT_MAX, op, ": the size of boundaries' last dimension should be less than ",
              INT_MAX, ", but we got ", row_size);

  BucketizePlan p;
  p.dtype = c10::promoteTypes(sorted_sequence.dtype(), self.dtype());
  p.boundaries = sorted_sequence.to(p.dtype).contiguous();
  p.input = self.to(p.dtype).contiguous();
  p.row_size = row_size;
  p.inner = sorted_sequence.dim() > 1 ? (self.dim() ? self.size(-1) : 1) : 0;
  p.right = right;
  if (has_sorter) {
    p.sorter = sorter->contiguous();
    if (p.sorter.numel() > 0) {
      const int64_t lo = amin_out(p.sorter, {}, false, Tensor()).item().toLong();
      const int64_t hi = amax_out(p.sorter, {}, false, Tensor()).item().toLong();
      EMBER_CHECK(lo >= 0 && hi < row_size, op, ": sorter index out of range");
    }
  }
  if (out.defined()) {
    resize_output(out, self.sizes());
    p.result = out;
  } else {
    p.result = empty(self.sizes(), out_dtype, self.device());
  }
  const bool direct =
      p.result.is_contiguous() && !(out.defined() && (out.is_alias_of(self) || out.is_alias_of(sorted_sequence)));
  p.buffer = direct ? p.result : empty(self.sizes(), out_dtype, self.device());
  return p;
}

namespace {

template <typename out_t>
void search_cpu(const BucketizePlan& p) {
  const int64_t n = p.input.numel();
  const int64_t* sorter = p.sorter.defined() ? p.sorter.data_ptr<int64_t>() : nullptr;
  out_t* o = static_cast<out_t*>(p.buffer.data_ptr());
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(p.dtype, "searchsorted", [&] {
    using acc_t = opmath_t<scalar_t>;
    const scalar_t* b = static_cast<const scalar_t*>(p.boundaries.data_ptr());
    const scalar_t* v = static_cast<const scalar_t*>(p.input.data_ptr());
    parallel_for(0, n, 2048, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        o[i] = static_cast<out_t>(
            bucketize_position<scalar_t, acc_t>(b, sorter, p.row_size, p.inner, i, static_cast<acc_t>(v[i]), p.right));
      }
    });
  });
}

void bucketize_cpu(const BucketizePlan& p) {
  if (p.buffer.dtype() == ScalarType::Int) {
    search_cpu<int32_t>(p);
  } else {
    search_cpu<int64_t>(p);
  }
}

}  // namespace

DEFINE_DISPATCH(bucketize_stub);
REGISTER_BASELINE_DISPATCH(bucketize_stub, &bucketize_cpu);

namespace {

Tensor run(const BucketizePlan& p) {
  if (p.input.numel() > 0) bucketize_stub(p.input.device().type, p);
  p.finish();
  return p.result;
}

void check_bucketize_boundaries(const Tensor& boundaries) {
  EMBER_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
}

}  // namespace

Tensor searchsorted_out(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                        const std::optional<std::string>& side, const std::optional<Tensor>& sorter,
                        const Tensor& out) {
  return run(searchsorted_plan(sorted_sequence, self, out_int32, right, side, sorter, out, false));
}

Tensor searchsorted_scalar_out(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                               const std::optional<std::string>& side, const std::optional<Tensor>& sorter,
                               const Tensor& out) {
  const Tensor v = scalar_tensor(self, self.type(), sorted_sequence.device());
  return run(searchsorted_plan(sorted_sequence, v, out_int32, right, side, sorter, out, true));
}

Tensor bucketize_out(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right, const Tensor& out) {
  check_bucketize_boundaries(boundaries);
  return run(searchsorted_plan(boundaries, self, out_int32, right, std::nullopt, std::nullopt, out, false));
}

Tensor bucketize_scalar(const Scalar& self, const Tensor& boundaries, bool out_int32, bool right) {
  check_bucketize_boundaries(boundaries);
  const Tensor v = scalar_tensor(self, self.type(), boundaries.device());
  return run(searchsorted_plan(boundaries, v, out_int32, right, std::nullopt, std::nullopt, Tensor(), true));
}

}  // namespace ember::at::native
