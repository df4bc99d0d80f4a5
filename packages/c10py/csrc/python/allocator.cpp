// Allocator statistics and cache control, per device type.
#include "bindings.h"

#include <ember/c10/CPUAllocator.h>

namespace py = pybind11;
using namespace ember::c10;

namespace ember::c10::python {

namespace {
py::dict stats_dict(const AllocatorStats& s) {
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
}
}  // namespace

void init_allocator(py::module_& m) {
  m.def(
      "memory_stats", [](const Device& d) { return stats_dict(GetAllocator(d.type)->stats(d.index)); },
      py::arg("device") = Device(DeviceType::CPU), "Counters of the allocator of `device` (bytes and calls).");
  m.def(
      "reset_peak_memory_stats", [](const Device& d) { GetAllocator(d.type)->reset_peak_stats(d.index); },
      py::arg("device") = Device(DeviceType::CPU));
  m.def(
      "empty_cache", [](const Device& d) { GetAllocator(d.type)->empty_cache(); },
      py::arg("device") = Device(DeviceType::CPU),
      "Returns every cached block of that device's allocator to the system.");
  m.def("cpu_allocator_round_size", &cpu_allocator_round_size, py::arg("nbytes"),
        "The size class a CPU allocation of `nbytes` is served from.");
  m.def("set_cpu_cache_limit", &cpu_allocator_set_max_cached_bytes, py::arg("nbytes"),
        "Caps the bytes the CPU allocator keeps cached (trimming the cache if it holds more).");
  m.def("cpu_cache_limit", &cpu_allocator_max_cached_bytes);
}

}  // namespace ember::c10::python
