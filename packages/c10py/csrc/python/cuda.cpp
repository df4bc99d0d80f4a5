// ember.c10py._C.cuda: device queries, streams, events and the CUDA allocators.
// (memory_stats / reset_peak_memory_stats / empty_cache of CUDA devices are the
// generic ones of _C: memory_stats(device('cuda:0')).)
#include "bindings.h"

#include <cstdio>

#include <ember/c10/StorageImpl.h>
#include <ember/c10/cuda/CUDAAllocatorSizes.h>
#include <ember/c10/cuda/CUDAFunctions.h>
#include <ember/c10/cuda/CUDAMemInfo.h>

namespace py = pybind11;
using namespace ember::c10;

namespace ember::c10::python {

namespace {

// A CUDA device argument: None (the current device), an int, or a device/str of
// type cuda ("cuda" meaning the current one). Returns an index or -1 for "current".
int device_index(const py::object& d, const char* what) {
  if (d.is_none()) return -1;
  if (PyLong_Check(d.ptr()) && !PyBool_Check(d.ptr())) {
    const int64_t i = d.cast<int64_t>();
    EMBER_CHECK_VALUE(i >= -1 && i <= 127, what, ": invalid CUDA device index ", i);
    return static_cast<int>(i);
  }
  Device dev = py::isinstance<py::str>(d) ? Device(d.cast<std::string>()) : d.cast<Device>();
  EMBER_CHECK_VALUE(dev.is_cuda(), what, ": expected a CUDA device, got ", dev);
  return dev.index;
}

Device cuda_device(int index) { return Device(DeviceType::CUDA, static_cast<int8_t>(index)); }

std::string stream_repr(const cuda::CUDAStream& s) {
  char handle[32];
  std::snprintf(handle, sizeof(handle), "%#llx",
                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(s.handle)));
  return str("<ember.c10py._C.cuda.Stream device=cuda:", s.device, " handle=", handle, s.handle ? "" : " (default)",
             " priority=", s.priority, ">");
}

}  // namespace

void init_cuda(py::module_& parent) {
  py::module_ m = parent.def_submodule("cuda", "CUDA devices (absent devices read as is_available() == False).");
  m.def("is_compiled", &cuda::is_compiled, "True if this build of ember.c10py includes CUDA.");
  m.def("is_available", &cuda::is_available, "True if a CUDA device can be used now.");
  m.def("device_count", &cuda::device_count, "Number of usable CUDA devices (0 without a GPU or a driver).");
  m.def("availability_error", &cuda::availability_error,
        "Why is_available() is False (the CUDA runtime's message), or ''.");
  m.def("current_device", &cuda::current_device, "Index of the current CUDA device of this thread.");
  m.def("set_device", &cuda::set_device, py::arg("device"), "Makes `device` (an index) current for this thread.");
  m.def(
      "synchronize",
      [](const py::object& d) {
        const int index = device_index(d, "synchronize");
        py::gil_scoped_release nogil;
        cuda::synchronize(index);
      },
      py::arg("device") = py::none(), "Waits for all work on `device` (default: the current one) to finish.");

  py::class_<cuda::DeviceProperties>(m, "DeviceProperties", "What get_device_properties() returns.")
      .def_readonly("name", &cuda::DeviceProperties::name)
      .def_readonly("major", &cuda::DeviceProperties::major)
      .def_readonly("minor", &cuda::DeviceProperties::minor)
      .def_readonly("total_memory", &cuda::DeviceProperties::total_memory)
      .def_readonly("multi_processor_count", &cuda::DeviceProperties::multi_processor_count)
      .def_readonly("warp_size", &cuda::DeviceProperties::warp_size)
      .def_readonly("shared_memory_per_block", &cuda::DeviceProperties::shared_memory_per_block)
      .def("__repr__", [](const cuda::DeviceProperties& p) {
        return str("DeviceProperties(name='", p.name, "', major=", p.major, ", minor=", p.minor,
                   ", total_memory=", p.total_memory >> 20, "MB, multi_processor_count=", p.multi_processor_count, ")");
      });
  m.def(
      "get_device_properties",
      [](const py::object& d) { return cuda::get_device_properties(device_index(d, "get_device_properties")); },
      py::arg("device") = py::none(), "get_device_properties(0).name -> 'NVIDIA H100 80GB HBM3'");
  m.def(
      "mem_get_info", [](const py::object& d) { return cuda::mem_get_info(device_index(d, "mem_get_info")); },
      py::arg("device") = py::none(), "(free, total) bytes of the device's memory now (cudaMemGetInfo).");

  // ---- streams ----
  py::class_<cuda::CUDAStream>(m, "Stream",
                               "A CUDA stream. Stream(device=None, priority=0) takes one from the device's pool "
                               "(lower priority = more urgent; clamped to the device's range).")
      .def(py::init([](const py::object& d, int priority) {
             return cuda::get_stream_from_pool(device_index(d, "Stream"), priority);
           }),
           py::arg("device") = py::none(), py::arg("priority") = 0)
      .def("query", &cuda::CUDAStream::query, "True if all work queued on the stream has finished.")
      .def("synchronize", &cuda::CUDAStream::synchronize, py::call_guard<py::gil_scoped_release>(),
           "Waits for all work queued on the stream.")
      .def(
          "wait_event", [](const cuda::CUDAStream& s, const cuda::CUDAEvent& e) { e.wait(s); }, py::arg("event"),
          "Makes future work on this stream wait for `event`.")
      .def(
          "wait_stream",
          [](const cuda::CUDAStream& self, const cuda::CUDAStream& other) {
            cuda::CUDAEvent e;
            e.record(other);
            e.wait(self);
          },
          py::arg("stream"), "Makes future work on this stream wait for the work queued so far on `stream`.")
      .def_property_readonly(
          "handle", [](const cuda::CUDAStream& s) { return reinterpret_cast<uintptr_t>(s.handle); },
          "The cudaStream_t as an int (0 for the default stream).")
      .def_property_readonly("device", [](const cuda::CUDAStream& s) { return cuda_device(s.device); })
      .def_property_readonly("device_index", [](const cuda::CUDAStream& s) { return s.device; })
      .def_readonly("priority", &cuda::CUDAStream::priority)
      .def("__eq__", [](const cuda::CUDAStream& a, const cuda::CUDAStream& b) { return a == b; })
      .def("__eq__", [](const cuda::CUDAStream&, py::handle) { return false; })
      .def("__hash__",
           [](const cuda::CUDAStream& s) {
             return std::hash<uintptr_t>()(reinterpret_cast<uintptr_t>(s.handle)) ^ static_cast<size_t>(s.device);
           })
      .def("__repr__", &stream_repr);
  m.def(
      "current_stream", [](const py::object& d) { return cuda::current_stream(device_index(d, "current_stream")); },
      py::arg("device") = py::none(), "This thread's current stream of `device` (the default stream unless set).");
  m.def(
      "default_stream", [](const py::object& d) { return cuda::default_stream(device_index(d, "default_stream")); },
      py::arg("device") = py::none(), "The default (legacy, handle 0) stream of `device`.");
  m.def("set_current_stream", &cuda::set_current_stream, py::arg("stream"),
        "Makes `stream` the current stream of its device for this thread.");
  m.def(
      "stream_priority_range",
      [](const py::object& d) { return cuda::stream_priority_range(device_index(d, "stream_priority_range")); },
      py::arg("device") = py::none(), "(least, greatest) stream priority of `device`, e.g. (0, -5).");

  // ---- events ----
  py::class_<cuda::CUDAEvent>(m, "Event",
                              "A CUDA event: Event(enable_timing=False, blocking=False, interprocess=False). "
                              "Created on the device of the first stream it is recorded on.")
      .def(py::init<bool, bool, bool>(), py::arg("enable_timing") = false, py::arg("blocking") = false,
           py::arg("interprocess") = false)
      .def(
          "record",
          [](cuda::CUDAEvent& e, std::optional<cuda::CUDAStream> s) { e.record(s ? *s : cuda::current_stream(-1)); },
          py::arg("stream") = py::none(), "Records the event on `stream` (default: the current stream).")
      .def(
          "wait",
          [](const cuda::CUDAEvent& e, std::optional<cuda::CUDAStream> s) {
            e.wait(s ? *s : cuda::current_stream(-1));
          },
          py::arg("stream") = py::none(), "Makes future work on `stream` (default: current) wait for this event.")
      .def("query", &cuda::CUDAEvent::query, "True if the recorded work has finished (True if never recorded).")
      .def("synchronize", &cuda::CUDAEvent::synchronize, py::call_guard<py::gil_scoped_release>(),
           "Waits for the recorded work to finish.")
      .def("elapsed_time", &cuda::CUDAEvent::elapsed_time, py::arg("end_event"),
           "Milliseconds between this event and `end_event` (both recorded with enable_timing=True, and completed).")
      .def_property_readonly("handle", [](const cuda::CUDAEvent& e) { return reinterpret_cast<uintptr_t>(e.handle()); })
      .def_property_readonly("device", [](const cuda::CUDAEvent& e) -> py::object {
        if (!e.is_created()) return py::none();
        return py::cast(cuda_device(e.device()));
      });

  // ---- memory ----
  m.def(
      "memory_summary", [](const py::object& d) { return cuda::memory_summary(device_index(d, "memory_summary")); },
      py::arg("device") = py::none(), "A readable report of the caching allocator's state on `device`.");
  m.def(
      "_allocation_sizes",
      [](size_t nbytes) {
        const cuda::AllocationSizes a = cuda::allocation_sizes(nbytes);
        return py::make_tuple(a.block, a.segment, a.small_pool, a.remainder);
      },
      py::arg("nbytes"),
      "(block, segment, small_pool, remainder): the caching allocator's size rules for a request of `nbytes` "
      "(no device needed; for tests).");
  m.def(
      "record_stream",
      [](const StorageImpl& s, const cuda::CUDAStream& stream) { cuda::record_stream(s.data_ptr(), stream); },
      py::arg("storage"), py::arg("stream"),
      "Marks a CUDA storage as used on `stream`: its memory is not reused before the work queued there so far "
      "is done (Tensor.record_stream).");
  m.def(
      "is_pinned", [](uintptr_t ptr) { return cuda::is_pinned(reinterpret_cast<const void*>(ptr)); }, py::arg("ptr"),
      "True if the host address `ptr` is page-locked (pinned) memory.");
  m.def(
      "pinned_storage",
      [](int64_t nbytes) {
        EMBER_CHECK_VALUE(nbytes >= 0, "pinned_storage: nbytes must be non-negative, got ", nbytes);
        return make_intrusive<StorageImpl>(static_cast<size_t>(nbytes), cuda::GetPinnedHostAllocator(), true);
      },
      py::arg("nbytes"), "A new CPU StorageImpl of `nbytes` bytes in pinned host memory.");
  m.def(
      "host_memory_stats",
      [] {
        const AllocatorStats s = cuda::GetPinnedHostAllocator()->stats(-1);
        py::dict d;
        d["allocated_bytes"] = s.allocated_bytes;
        d["peak_allocated_bytes"] = s.peak_allocated_bytes;
        d["reserved_bytes"] = s.reserved_bytes;
        d["peak_reserved_bytes"] = s.peak_reserved_bytes;
        d["cached_bytes"] = s.cached_bytes;
        d["num_allocs"] = s.num_allocs;
        d["num_frees"] = s.num_frees;
        d["num_cache_hits"] = s.num_cache_hits;
        d["num_device_allocs"] = s.num_device_allocs;
        return d;
      },
      "Counters of the pinned host allocator (same keys as memory_stats).");
  m.def(
      "host_empty_cache", [] { cuda::GetPinnedHostAllocator()->empty_cache(); },
      "Returns every cached pinned block to the driver (cudaFreeHost).");

  // ---- copies (what aten's copy_ uses; also lets the tests move bytes) ----
  py::enum_<cuda::CopyKind>(m, "CopyKind")
      .value("HostToDevice", cuda::CopyKind::HostToDevice)
      .value("DeviceToHost", cuda::CopyKind::DeviceToHost)
      .value("DeviceToDevice", cuda::CopyKind::DeviceToDevice);
  m.def(
      "memcpy",
      [](uintptr_t dst, uintptr_t src, size_t nbytes, cuda::CopyKind kind, std::optional<cuda::CUDAStream> stream,
         bool non_blocking) {
        const cuda::CUDAStream s = stream ? *stream : cuda::current_stream(-1);
        py::gil_scoped_release nogil;
        cuda::memcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), nbytes, kind, s, non_blocking);
      },
      py::arg("dst"), py::arg("src"), py::arg("nbytes"), py::arg("kind"), py::arg("stream") = py::none(),
      py::arg("non_blocking") = false,
      "Copies `nbytes` between raw addresses (ints) on `stream` (default: current); waits unless non_blocking.");
  m.def(
      "_sleep",
      [](int64_t microseconds, std::optional<cuda::CUDAStream> stream) {
        cuda::sleep_on_stream(stream ? *stream : cuda::current_stream(-1), microseconds);
      },
      py::arg("microseconds"), py::arg("stream") = py::none(),
      "Keeps `stream` (default: current) busy for a while without device code (for tests).");
}

}  // namespace ember::c10::python
