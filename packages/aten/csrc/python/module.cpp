// ember.aten._C: kernels for the Python dispatcher, plus generators, settings and
// the hooks ember.aten uses at import.
#include <ember/aten/TensorIterator.h>
#include <ember/aten/native/DispatchStub.h>
#include <ember/aten/python/casters.h>

namespace py = pybind11;
using namespace ember;
using namespace ember::at;

namespace ember::at::generated {
void register_all(python::KernelSink& sink);
}
namespace ember::at::native {
void set_cpu_capability(const std::string& name);
}
void init_tensor_new(py::module_& m);

PYBIND11_MODULE(_C, m) {
  m.doc() = "ember.aten._C: aten's C++ kernels and runtime hooks.";

  m.def(
      "_set_tensor_class",
      [](py::object type, py::object wrap) {
        auto& tc = python::tensor_class();
        tc.type = type.release().ptr();
        tc.wrap = wrap.release().ptr();
        tc.impl_name = PyUnicode_InternFromString("_impl");
      },
      py::arg("type"), py::arg("wrap"), "Tells the C++ casters which Python class is ember.aten.Tensor.");

  m.def(
      "_native_kernels",
      [] {
        python::KernelSink sink;
        generated::register_all(sink);
        return sink.records;
      },
      "(qualified op name, dispatch key, kernel name, callable) for every C++ kernel in native_functions.yaml.");

  py::enum_<MemoryFormat>(m, "memory_format", "Memory layout of a dense tensor.")
      .value("contiguous_format", MemoryFormat::Contiguous)
      .value("preserve_format", MemoryFormat::Preserve)
      .value("channels_last", MemoryFormat::ChannelsLast)
      .value("channels_last_3d", MemoryFormat::ChannelsLast3d)
      .def("__repr__", [](MemoryFormat f) {
        switch (f) {
          case MemoryFormat::Contiguous:
            return "ember.aten.contiguous_format";
          case MemoryFormat::Preserve:
            return "ember.aten.preserve_format";
          case MemoryFormat::ChannelsLast:
            return "ember.aten.channels_last";
          case MemoryFormat::ChannelsLast3d:
            return "ember.aten.channels_last_3d";
        }
        return "ember.aten.memory_format";
      });

  py::class_<Generator>(m, "Generator", "A Philox4x32-10 random number generator (state: seed and offset).")
      .def(py::init([](py::object device) {
             if (device.is_none()) return Generator(c10::Device(c10::DeviceType::CPU));
             if (py::isinstance<py::str>(device)) return Generator(c10::Device(device.cast<std::string>()));
             return Generator(device.cast<c10::Device>());
           }),
           py::arg("device") = "cpu")
      .def("manual_seed",
           [](Generator& g, py::int_ seed) -> Generator& {
             // Negative seeds wrap as in PyTorch; anything outside [-2**63, 2**64) is an error.
             const auto v = seed.cast<py::object>();
             long long s = 0;
             int overflow = 0;
             s = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
             uint64_t u;
             if (overflow > 0) {
               u = PyLong_AsUnsignedLongLong(v.ptr());
               if (PyErr_Occurred()) {
                 PyErr_Clear();
                 throw c10::ValueError("Overflow when unpacking long: the seed must be in [-0x8000000000000000, "
                                       "0xffffffffffffffff]");
               }
             } else if (overflow < 0) {
               throw c10::ValueError("Overflow when unpacking long: the seed must be in [-0x8000000000000000, "
                                     "0xffffffffffffffff]");
             } else {
               u = static_cast<uint64_t>(s);
             }
             g.manual_seed(u);
             return g;
           },
           py::arg("seed"), py::return_value_policy::reference_internal)
      .def("seed", &Generator::seed)
      .def("initial_seed", &Generator::initial_seed)
      .def_property_readonly("device", &Generator::device)
      .def("_get_state", &Generator::get_state)
      .def("_set_state", &Generator::set_state, py::arg("seed"), py::arg("offset"))
      .def("_philox_reserve", &Generator::philox_reserve, py::arg("blocks"))
      .def("__eq__", &Generator::operator==)
      .def("__repr__", [](const Generator& g) { return "<ember.aten.Generator object on " + g.device().str() + ">"; });

  m.def("default_generator", [](const c10::Device& d) { return default_generator(d); }, py::arg("device") = c10::Device(c10::DeviceType::CPU));
  m.def("_philox_block", [](uint64_t seed, uint64_t counter, uint64_t subseq) {
    auto b = philox4x32_10(seed, counter, subseq);
    return py::make_tuple(b.x[0], b.x[1], b.x[2], b.x[3]);
  }, py::arg("seed"), py::arg("counter"), py::arg("subsequence") = 0);

  m.def("_get_default_dtype", &get_default_dtype);
  m.def("_set_default_dtype", &set_default_dtype, py::arg("dtype"));
  m.def("get_num_threads", &get_num_threads);
  m.def("set_num_threads", &set_num_threads, py::arg("num_threads"));
  m.def("_get_cpu_capability", [] { return native::cpu_capability_name(native::get_cpu_capability()); });
  m.def("_detected_cpu_capability", [] { return native::cpu_capability_name(native::detected_cpu_capability()); });
  m.def("_set_cpu_capability", &native::set_cpu_capability, py::arg("capability"),
        "Switches every DispatchStub to 'default', 'avx2' or 'avx512' (tests run each).");
  m.def("result_type_of", [](const std::vector<Tensor>& ts) { return result_type(ts); }, py::arg("tensors"),
        "PyTorch's result_type over these tensors (wrapped numbers and 0-dim tensors count as weak).");
  m.def("can_cast", &can_cast, py::arg("from_"), py::arg("to"));
  init_tensor_new(m);
  m.def("_item", [](const Tensor& t) { return t.item(); }, py::arg("tensor"),
        "The value of a one-element tensor as a Python number (RuntimeError otherwise).");
  m.def("_wrapped_number", [](const Scalar& s) { return wrapped_scalar_tensor(s); }, py::arg("value"));
}
