#pragma once
// tril_indices / triu_indices: the (2, N) coordinates of a row x col matrix's lower / upper
// triangle below / above the diagonal `offset`, in row-major order (PyTorch's
// TensorFactories). Both backends build the per-row counts here and fill the coordinates
// row by row (TriangularIndices.cpp, cuda/TriangularIndices.cu).
#include <cstdint>
#include <optional>
#include <vector>

#include <ember/aten/Tensor.h>

#include "HostDevice.h"

namespace ember::at::native {

struct TriangleRows {
  std::vector<int64_t> first_col;  // the first column of each row in the triangle
  std::vector<int64_t> start;      // each row's position in the output; start[row] = total
  int64_t total() const { return start.back(); }
};

// Checks row, col and dtype (int32 / int64 only) and counts each row's entries.
TriangleRows triangle_rows(const char* op, int64_t row, int64_t col, int64_t offset, bool lower, ScalarType dtype);

// Row i's coordinates: its `count` entries start at position `start` of the (2, total)
// output `out`, in columns first_col, first_col + 1, ... (the CPU loop and the CUDA
// kernel's thread of row i).
template <typename index_t>
EMBER_HOST_DEVICE inline void fill_triangle_row(int64_t i, int64_t first_col, int64_t start, int64_t count,
                                                int64_t total, index_t* out) {
  for (int64_t k = 0; k < count; ++k) {
    out[start + k] = static_cast<index_t>(i);
    out[total + start + k] = static_cast<index_t>(first_col + k);
  }
}

}  // namespace ember::at::native
