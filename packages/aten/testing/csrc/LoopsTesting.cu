// Host-side checks of gpu_kernel's index math, for tests on machines without a GPU:
// the offset calculator (with its multiply-shift division) and the 32-bit split of
// an iteration (ember_aten_testing.cuda_loops_offsets / cuda_loops_split).
#include <vector>

#include "../../csrc/native/cuda/Loops.cuh"
#include "Emulation.h"

namespace ember::at::native::cuda_emulation {

// Byte offsets of each operand at each linear index, as the CUDA kernels compute
// them: shape innermost first, strides[k][d] operand k's byte stride along dim d.
std::vector<std::vector<int64_t>> cuda_loops_offsets(const std::vector<int64_t>& shape,
                                                     const std::vector<std::vector<int64_t>>& strides,
                                                     const std::vector<int64_t>& linear) {
  constexpr int NT = 3;
  EMBER_CHECK(strides.size() <= NT, "cuda_loops_offsets: at most ", NT, " operands");
  for (const auto& s : strides) EMBER_CHECK(s.size() == shape.size(), "cuda_loops_offsets: one stride per dim");
  const cuda_detail::OffsetCalculator<NT> calc(IntArrayRef(shape), [&](int k) {
    static const std::vector<int64_t> zeros(cuda_detail::kMaxDims, 0);
    return k < static_cast<int>(strides.size()) ? IntArrayRef(strides[k]) : IntArrayRef(zeros);
  });
  std::vector<std::vector<int64_t>> out;
  for (int64_t i : linear) {
    EMBER_CHECK(i >= 0 && i <= 0x7fffffff, "cuda_loops_offsets: linear index out of the 32-bit range");
    const auto off = calc.get(static_cast<uint32_t>(i));
    std::vector<int64_t> row;
    for (size_t k = 0; k < strides.size(); ++k) row.push_back(off.v[k]);
    out.push_back(row);
  }
  return out;
}

// The pieces with_32bit_indexing() cuts an iteration over (out, inputs...) into:
// for each piece, its shape (innermost first) and each operand's byte offset from
// the operand's start.
std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cuda_loops_split(
    const std::vector<Tensor>& tensors) {
  EMBER_CHECK(!tensors.empty(), "cuda_loops_split: expected an output and inputs");
  TensorIteratorConfig config;
  config.add_output(tensors[0]).resize_outputs(false).check_all_same_dtype(false).check_mem_overlap(false);
  for (size_t i = 1; i < tensors.size(); ++i) config.add_input(tensors[i]);
  TensorIterator iter = config.build();
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> out;
  for (const TensorIterator& sub : iter.with_32bit_indexing()) {
    EMBER_CHECK(sub.can_use_32bit_indexing(), "cuda_loops_split: a piece still needs 64-bit offsets");
    std::vector<int64_t> shape(sub.shape().begin(), sub.shape().end());
    std::vector<int64_t> starts;
    for (int k = 0; k < sub.ntensors(); ++k) {
      starts.push_back(static_cast<const char*>(sub.data_ptr(k)) - static_cast<const char*>(iter.data_ptr(k)));
    }
    out.emplace_back(shape, starts);
  }
  return out;
}

}  // namespace ember::at::native::cuda_emulation
