// Test hooks (`_C._test_*`): reach C++ code that has no Python API of its own, so the
// test-suite can check it against NumPy. Not part of the public API.
#include "bindings.h"

#include <cstring>
#include <string>

#include <ember/c10/util/BFloat16.h>
#include <ember/c10/util/Half.h>

namespace py = pybind11;
using namespace ember::c10;

namespace ember::c10::python {

namespace {

// Reads a C-contiguous buffer of `itemsize`-byte elements (any format of that width:
// float32 for 4, uint16/float16 for 2) and applies `convert` to each element.
template <typename In, typename Out, typename F>
py::bytes convert_buffer(const py::buffer& buf, const char* what, F convert) {
  py::buffer_info info = buf.request();
  EMBER_CHECK_TYPE(info.itemsize == static_cast<py::ssize_t>(sizeof(In)), what, ": expected a buffer of ", sizeof(In),
                   "-byte elements, got itemsize ", info.itemsize);
  py::ssize_t n = 1;
  py::ssize_t expected_stride = info.itemsize;
  for (py::ssize_t d = info.ndim - 1; d >= 0; --d) {
    EMBER_CHECK_VALUE(info.shape[d] < 2 || info.strides[d] == expected_stride, what,
                      ": the buffer must be C-contiguous");
    expected_stride *= info.shape[d];
    n *= info.shape[d];
  }
  std::string out(static_cast<size_t>(n) * sizeof(Out), '\0');
  const auto* src = static_cast<const char*>(info.ptr);
  for (py::ssize_t i = 0; i < n; ++i) {
    In x;
    std::memcpy(&x, src + i * static_cast<py::ssize_t>(sizeof(In)), sizeof(In));
    const Out y = convert(x);
    std::memcpy(out.data() + i * static_cast<py::ssize_t>(sizeof(Out)), &y, sizeof(Out));
  }
  return py::bytes(out);
}

}  // namespace

void init_testing(py::module_& m) {
  m.def(
      "_test_half_from_float",
      [](const py::buffer& b) {
        return convert_buffer<float, uint16_t>(b, "_test_half_from_float", [](float f) { return Half(f).x; });
      },
      py::arg("values"), "float32 buffer -> bytes of the float16 bit patterns (c10::Half(float)).");
  m.def(
      "_test_half_to_float",
      [](const py::buffer& b) {
        return convert_buffer<uint16_t, float>(
            b, "_test_half_to_float", [](uint16_t h) { return static_cast<float>(Half(h, Half::from_bits())); });
      },
      py::arg("bits"), "uint16 buffer of float16 bit patterns -> bytes of float32 (float(c10::Half)).");
  m.def(
      "_test_bfloat16_from_float",
      [](const py::buffer& b) {
        return convert_buffer<float, uint16_t>(b, "_test_bfloat16_from_float", [](float f) { return BFloat16(f).x; });
      },
      py::arg("values"), "float32 buffer -> bytes of the bfloat16 bit patterns (c10::BFloat16(float)).");
  m.def(
      "_test_bfloat16_to_float",
      [](const py::buffer& b) {
        return convert_buffer<uint16_t, float>(b, "_test_bfloat16_to_float", [](uint16_t h) {
          return static_cast<float>(BFloat16(h, BFloat16::from_bits()));
        });
      },
      py::arg("bits"), "uint16 buffer of bfloat16 bit patterns -> bytes of float32 (float(c10::BFloat16)).");
}

}  // namespace ember::c10::python
