#pragma once
// tril_indices / triu_indices: the (2, N) coordinates of a row x col matrix's lower / upper
// triangle below / above the diagonal `offset`, in row-major order (PyTorch's
// TensorFactories). Both backends build the per-row counts here and fill the coordinates
// row by row (TriangularIndices.cpp, cuda/TriangularIndices.cu).
#include <cstdint>
#include <optional>
#include <vector>

#include <ember/aten/Tensor.h>

namespace ember::at::native {

struct TriangleRows {
  std::vector<int64_t> first_col;  // the first column of each row in the triangle
  std::vector<int64_t> start;      // each row's position in the output; start[row] = total
  int64_t total() const { return start.back(); }
};

// Checks row, col and dtype (int32 / int64 only) and counts each row's entries.
TriangleRows triangle_rows(const char* op, int64_t row, int64_t col, int64_t offset, bool lower, ScalarType dtype);

}  // namespace ember::at::native
