// The checksum helpers of ember.aten.serialization: CRC-32 over any buffer (bytes,
// memoryview, mmap, a storage), and a copy fused with it, so that loading a record from
// memory reads its bytes once (the copy into the storage and the check in one pass).
// The GIL is released while they run.
#include <pybind11/pybind11.h>

#include <cstring>

#include <ember/aten/Crc32.h>

namespace py = pybind11;

namespace {

// A simple (C-contiguous) byte view of obj; writable when asked.
struct ByteView {
  Py_buffer view{};
  ByteView(py::handle obj, bool writable, const char* what) {
    const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj.ptr(), &view, flags) != 0) {
      PyErr_Clear();
      throw py::type_error(std::string(what) + ": expected a " + (writable ? "writable " : "") +
                           "C-contiguous buffer, got " +
                           py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>());
    }
  }
  ~ByteView() { PyBuffer_Release(&view); }
  ByteView(const ByteView&) = delete;
  ByteView& operator=(const ByteView&) = delete;
  size_t size() const { return static_cast<size_t>(view.len); }
};

}  // namespace

void init_serialization(py::module_& m) {
  m.def(
      "_crc32",
      [](py::handle data, uint32_t value) {
        ByteView v(data, false, "_crc32");
        py::gil_scoped_release nogil;
        return ember::at::crc32(v.view.buf, v.size(), value);
      },
      py::arg("data"), py::arg("value") = 0,
      "zlib.crc32(data, value): CRC-32 of a buffer's bytes, continuing from value.");
  m.def(
      "_copy_crc32",
      [](py::handle dst, py::handle src, uint32_t value) {
        ByteView d(dst, true, "_copy_crc32");
        ByteView s(src, false, "_copy_crc32");
        if (d.size() != s.size())
          throw py::value_error("_copy_crc32: the destination holds " + std::to_string(d.size()) +
                                " bytes but the source " + std::to_string(s.size()));
        const char* dp = static_cast<const char*>(d.view.buf);
        const char* sp = static_cast<const char*>(s.view.buf);
        if (d.size() > 0 && dp < sp + s.size() && sp < dp + d.size())
          throw py::value_error("_copy_crc32: the destination and the source overlap");
        py::gil_scoped_release nogil;
        return ember::at::copy_crc32(d.view.buf, s.view.buf, d.size(), value);
      },
      py::arg("dst"), py::arg("src"), py::arg("value") = 0,
      "Copies src's bytes into dst (same length, not overlapping); returns their CRC-32 continuing from value.");
}
