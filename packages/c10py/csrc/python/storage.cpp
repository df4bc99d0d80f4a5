// StorageImpl: bytes + allocator + device, with the buffer protocol on CPU.
#include "bindings.h"

#include <cstring>

#include <ember/c10/SharedMemory.h>
#include <ember/c10/StorageImpl.h>

namespace py = pybind11;
using namespace ember::c10;

namespace ember::c10::python {

namespace {

// Owns a Py_buffer for a storage that wraps a Python object's memory.
struct BufferContext {
  Py_buffer view;
};

void release_buffer(void* p) {
  auto* ctx = static_cast<BufferContext*>(p);
  // At interpreter shutdown the object may already be gone: leak rather than crash.
  if (!Py_IsInitialized() || _Py_IsFinalizing()) return;
  PyGILState_STATE s = PyGILState_Ensure();
  PyBuffer_Release(&ctx->view);
  delete ctx;
  PyGILState_Release(s);
}

intrusive_ptr<StorageImpl> storage_from_buffer(py::handle obj, bool writable) {
  auto* ctx = new BufferContext();
  const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(obj.ptr(), &ctx->view, flags) != 0) {
    delete ctx;
    throw py::error_already_set();
  }
  const size_t n = static_cast<size_t>(ctx->view.len);
  void* data = ctx->view.buf;
  return make_intrusive<StorageImpl>(n, DataPtr(data, ctx, &release_buffer, Device(DeviceType::CPU)), nullptr, false);
}

// A storage over a read-only Python buffer (from_buffer(bytes, writable=False)) must
// not hand out a writable buffer: writing through it would change an immutable object.
bool is_readonly(const StorageImpl& s) {
  if (s.data_ptr().get_deleter() != &release_buffer) return false;
  return static_cast<const BufferContext*>(s.data_ptr().get_context())->view.readonly != 0;
}

void check_nbytes(int64_t nbytes, const char* what) {
  EMBER_CHECK_VALUE(nbytes >= 0, what, ": nbytes must be non-negative, got ", nbytes);
}

void check_cpu(const StorageImpl& s, const char* what) {
  EMBER_CHECK(s.device().is_cpu(), what, ": the storage is on ", s.device(), "; copy it to the CPU first");
}

}  // namespace

void init_storage(py::module_& m) {
  py::class_<StorageImpl, intrusive_ptr<StorageImpl>>(m, "StorageImpl", py::buffer_protocol(),
                                                      "Refcounted bytes with an allocator and a device.")
      .def(py::init([](int64_t nbytes, const Device& device, bool resizable) {
             EMBER_CHECK_VALUE(nbytes >= 0, "StorageImpl: nbytes must be non-negative, got ", nbytes);
             return StorageImpl::make(static_cast<size_t>(nbytes), device, resizable);
           }),
           py::arg("nbytes"), py::arg("device") = Device(DeviceType::CPU), py::arg("resizable") = true)
      .def_static("from_buffer", &storage_from_buffer, py::arg("obj"), py::arg("writable") = true,
                  "Wraps a C-contiguous Python buffer without copying; the object stays alive while the storage does.")
      .def_static(
          "from_bytes",
          [](py::bytes b, const Device& device) {
            std::string_view sv = b;
            auto s = StorageImpl::make(sv.size(), device, true);
            check_cpu(*s, "from_bytes");
            if (!sv.empty()) std::memcpy(s->data(), sv.data(), sv.size());
            return s;
          },
          py::arg("data"), py::arg("device") = Device(DeviceType::CPU), "A new storage holding a copy of `data`.")
      .def_property_readonly("nbytes", &StorageImpl::nbytes)
      .def_property_readonly("device", &StorageImpl::device)
      .def_property_readonly("data_ptr", [](const StorageImpl& s) { return reinterpret_cast<uintptr_t>(s.data()); })
      .def_property_readonly("resizable", &StorageImpl::resizable)
      .def_property_readonly("use_count", [](const StorageImpl& s) { return s.use_count(); })
      .def(
          "resize_",
          [](StorageImpl& s, size_t nbytes) {
            // Shrinking under a live view would let the view's kernels read and write freed
            // memory: refused while anything but this storage object holds it (a tensor,
            // a view). PyTorch allows it, and crashes on the next use of the view.
            EMBER_CHECK(nbytes >= s.nbytes() || s.use_count() <= 1, "resize_: cannot shrink a storage of ", s.nbytes(),
                        " bytes to ", nbytes, " while tensors use it (", s.use_count() - 1,
                        " other references); their elements would point into freed memory");
            s.resize(nbytes);
          },
          py::arg("nbytes"))
      .def("tobytes",
           [](const StorageImpl& s) {
             check_cpu(s, "tobytes");
             return py::bytes(static_cast<const char*>(s.data()), s.nbytes());
           })
      .def(
          "copy_from_bytes",
          [](StorageImpl& s, py::bytes b) {
            check_cpu(s, "copy_from_bytes");
            EMBER_CHECK(!is_readonly(s), "copy_from_bytes: the storage wraps a read-only buffer");
            std::string_view sv = b;
            EMBER_CHECK_VALUE(sv.size() == s.nbytes(), "copy_from_bytes: got ", sv.size(), " bytes for a storage of ",
                              s.nbytes());
            if (!sv.empty()) std::memcpy(s.data(), sv.data(), sv.size());
          },
          py::arg("data"))
      .def("share_memory_", &StorageImpl::share_memory_, py::arg("strategy") = "file_descriptor",
           "Moves the bytes into shared memory (in place); other processes can then map them.")
      .def("is_shared", &StorageImpl::is_shared)
      .def(
          "_share_fd", [](const StorageImpl& s) { return shared_fd(s.data_ptr()); },
          "The memfd behind a file_descriptor-shared storage (owned by the storage; dup it to keep it).")
      .def("_share_filename", [](const StorageImpl& s) { return shared_filename(s.data_ptr()); })
      .def_static(
          "_new_shared_fd",
          [](int fd, int64_t nbytes) {
            check_nbytes(nbytes, "_new_shared_fd");
            return make_intrusive<StorageImpl>(static_cast<size_t>(nbytes), map_shared_fd(fd, nbytes), nullptr, false);
          },
          py::arg("fd"), py::arg("nbytes"), "Maps shared memory received as a file descriptor (which is duplicated).")
      .def_static(
          "_new_shared_filename",
          [](const std::string& name, int64_t nbytes) {
            check_nbytes(nbytes, "_new_shared_filename");
            return make_intrusive<StorageImpl>(static_cast<size_t>(nbytes), map_shared_filename(name, nbytes), nullptr,
                                               false);
          },
          py::arg("name"), py::arg("nbytes"))
      .def_static(
          "_new_shared",
          [](int64_t nbytes, const std::string& strategy) {
            check_nbytes(nbytes, "_new_shared");
            EMBER_CHECK_VALUE(strategy == "file_descriptor" || strategy == "file_system",
                              "_new_shared: unknown sharing strategy '", strategy,
                              "' (expected 'file_descriptor' or 'file_system')");
            DataPtr p = strategy == "file_system" ? allocate_shared_filename(nbytes) : allocate_shared_fd(nbytes);
            return make_intrusive<StorageImpl>(static_cast<size_t>(nbytes), std::move(p), nullptr, false);
          },
          py::arg("nbytes"), py::arg("strategy") = "file_descriptor",
          "A new storage allocated directly in shared memory.")
      .def_buffer([](StorageImpl& s) -> py::buffer_info {
        if (!s.device().is_cpu()) {
          throw py::buffer_error("the storage is on " + s.device().str() + "; only CPU storages expose a buffer");
        }
        static uint64_t empty_buffer = 0;  // a valid address for zero-byte storages
        void* data = s.data() ? s.data() : &empty_buffer;
        return py::buffer_info(data, 1, py::format_descriptor<uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(s.nbytes())}, {1}, is_readonly(s));
      })
      .def("__repr__", [](const StorageImpl& s) {
        return "StorageImpl(nbytes=" + std::to_string(s.nbytes()) + ", device='" + s.device().str() + "'" +
               (s.is_shared() ? ", shared" : "") + ")";
      });
}

}  // namespace ember::c10::python
