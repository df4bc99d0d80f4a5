// tril_indices / triu_indices on the CPU; the row counts also serve cuda/TriangularIndices.cu.
#include "TriangularIndices.h"

#include <algorithm>

#include <ember/aten/Parallel.h>

#include "TensorFactories.h"

namespace ember::at::native {

TriangleRows triangle_rows(const char* op, int64_t row, int64_t col, int64_t offset, bool lower, ScalarType dtype) {
  EMBER_CHECK(row >= 0, "row must be non-negative, got", row);
  EMBER_CHECK(col >= 0, "col must be non-negative, got", col);
  EMBER_CHECK(dtype == ScalarType::Long || dtype == ScalarType::Int, "\"", op, "\" not implemented for '",
              c10::toString(dtype), "'");
  TriangleRows r;
  r.first_col.resize(static_cast<size_t>(row));
  r.start.resize(static_cast<size_t>(row) + 1);
  r.start[0] = 0;
  for (int64_t i = 0; i < row; ++i) {
    int64_t first = 0, count = 0;
    if (lower) {  // columns 0 .. i + offset
      count = std::clamp<int64_t>(i + offset + 1, 0, col);
    } else {  // columns max(0, i + offset) .. col - 1
      first = std::clamp<int64_t>(i + offset, 0, col);
      count = col - first;
    }
    r.first_col[static_cast<size_t>(i)] = first;
    r.start[static_cast<size_t>(i) + 1] = r.start[static_cast<size_t>(i)] + count;
  }
  return r;
}

namespace {

template <typename index_t>
void fill_rows(const TriangleRows& r, index_t* out) {
  const int64_t n_rows = static_cast<int64_t>(r.first_col.size());
  parallel_for(0, n_rows, 64, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const size_t row = static_cast<size_t>(i);
      fill_triangle_row(i, r.first_col[row], r.start[row], r.start[row + 1] - r.start[row], r.total(), out);
    }
  });
}

Tensor triangle_indices_cpu(const char* op, int64_t row, int64_t col, int64_t offset, bool lower,
                            std::optional<ScalarType> dtype, std::optional<Device> device,
                            std::optional<bool> pin_memory) {
  const ScalarType dt = dtype.value_or(ScalarType::Long);
  const TriangleRows r = triangle_rows(op, row, col, offset, lower, dt);
  const int64_t n = r.total();
  const DimVector shape{2, n};
  Tensor out = factory_empty(shape, dt, device ? *device : Device(DeviceType::CPU), pin_memory);
  if (dt == ScalarType::Long) {
    fill_rows<int64_t>(r, out.data_ptr<int64_t>());
  } else {
    fill_rows<int32_t>(r, out.data_ptr<int32_t>());
  }
  return out;
}

}  // namespace

Tensor tril_indices_cpu(int64_t row, int64_t col, int64_t offset, std::optional<ScalarType> dtype,
                        std::optional<Device> device, std::optional<bool> pin_memory) {
  return triangle_indices_cpu("tril_indices", row, col, offset, true, dtype, device, pin_memory);
}

Tensor triu_indices_cpu(int64_t row, int64_t col, int64_t offset, std::optional<ScalarType> dtype,
                        std::optional<Device> device, std::optional<bool> pin_memory) {
  return triangle_indices_cpu("triu_indices", row, col, offset, false, dtype, device, pin_memory);
}

}  // namespace ember::at::native
