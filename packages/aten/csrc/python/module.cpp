// ember.aten._C: kernels for the Python dispatcher, plus generators, settings and
// the hooks ember.aten uses at import.
#include <ember/aten/TensorIterator.h>
#include <ember/aten/native/DispatchStub.h>
#include <ember/aten/python/casters.h>
#include <ember/aten/python/tensor_object.h>

#include "interned.h"

namespace py = pybind11;
using namespace ember;
using namespace ember::at;

namespace ember::at::generated {
void register_all(python::KernelSink& sink);
}
namespace ember::at::python {  // python_glue/casters.cpp: the Tensor class and its TensorBase
void set_tensor_class(PyObject* type, PyObject* wrap);
namespace tensor_base {
bool set_impl_of(PyObject* t, const c10::intrusive_ptr<c10::TensorImpl>& impl);
}  // namespace tensor_base
}  // namespace ember::at::python
namespace ember::at::native {
void set_cpu_capability(const std::string& name);
bool cpu_capability_built(CPUCapability c);  // csrc/core/DispatchStub.cpp (EMBER_CPU_CAPABILITIES)
// bfloat16 GEMM's micro-kernel (native/BFloat16Gemm.h)
std::string bf16_gemm_kernel_name();
void set_bf16_gemm_kernel(const std::string& name);
// matmul precision flags (Blas.cpp), read by the cuBLAS kernels
bool cublas_allow_tf32();
void set_cublas_allow_tf32(bool v);
bool cudnn_allow_tf32();
void set_cudnn_allow_tf32(bool v);
bool cublas_allow_fp16_reduced_precision_reduction();
void set_cublas_allow_fp16_reduced_precision_reduction(bool v);
bool cublas_allow_bf16_reduced_precision_reduction();
void set_cublas_allow_bf16_reduced_precision_reduction(bool v);
}  // namespace ember::at::native
void init_tensor_new(py::module_& m);
void init_dlpack(py::module_& m);
void init_dispatch_entry(py::module_& m);
void init_autograd_engine(py::module_& m);  // csrc/python/autograd_engine.cpp
void init_serialization(py::module_& m);    // csrc/python/serialization.cpp
#ifdef EMBER_WITH_CUDA
// Declared in csrc/native/cuda/CUDAUtils.cuh, which needs cuda_runtime.h (not included
// outside csrc/native/cuda/).
namespace ember::at::cuda {
void check_device_errors(int device);
}
#endif

PYBIND11_MODULE(_C, m) {
  m.doc() = "ember.aten._C: aten's C++ kernels and runtime hooks.";

  m.attr("TensorBase") = py::handle(reinterpret_cast<PyObject*>(python::tensor_base_type()));
  m.def(
      "_set_tensor_class", [](py::object type, py::object wrap) { python::set_tensor_class(type.ptr(), wrap.ptr()); },
      py::arg("type"), py::arg("wrap"),
      "Tells the C++ casters which TensorBase subclass is ember.aten.Tensor (the class of every output).");
  m.def(
      "_wrap",
      [](const c10::intrusive_ptr<c10::TensorImpl>& impl, py::object cls) -> py::object {
        PyObject* type = cls.is_none() ? python::tensor_class().type : cls.ptr();
        if (type == nullptr || !PyType_Check(type) ||
            !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(type), python::tensor_base_type())) {
          throw py::type_error("_wrap: cls must be ember.aten.Tensor or a subclass");
        }
        PyObject* r = python::new_tensor_object(reinterpret_cast<PyTypeObject*>(type), Tensor(impl));
        if (!r) throw py::error_already_set();
        return py::reinterpret_steal<py::object>(r);
      },
      py::arg("impl"), py::arg("cls") = py::none(),
      "A new Tensor (or `cls` instance) that is the handle of `impl`: no _base, no _meta.");
  m.def(
      "_set_impl",
      [](py::handle t, const c10::intrusive_ptr<c10::TensorImpl>& impl) {
        if (!python::tensor_base::set_impl_of(t.ptr(), impl)) throw py::error_already_set();
      },
      py::arg("t"), py::arg("impl"), "Makes t the handle of another TensorImpl (`t.data = other`).");
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

  // ---- Generator (ember.aten.Generator; ember.aten.random builds manual_seed & co. on it) ----
  // The state is (seed, offset): get_state()/set_state() carry it as 16 bytes, each
  // number little-endian, in a CPU uint8 tensor (the layout of PyTorch's CUDA state).
  py::class_<Generator>(m, "Generator",
                        "Generator(device='cpu') -> Generator\n\n"
                        "A Philox4x32-10 random number generator whose whole state is (seed, offset); usable as\n"
                        "generator= in every random operator.\n\n"
                        "    >>> g = ember.aten.Generator().manual_seed(0)\n"
                        "    >>> ember.aten.rand(2, generator=g)")
      .def(py::init([](py::object device) {
             if (device.is_none()) return Generator(c10::Device(c10::DeviceType::CPU));
             if (py::isinstance<py::str>(device)) return Generator(c10::Device(device.cast<std::string>()));
             return Generator(device.cast<c10::Device>());
           }),
           py::arg("device") = "cpu")
      .def(
          "manual_seed",
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
                throw c10::ValueError(
                    "Overflow when unpacking long: the seed must be in [-0x8000000000000000, "
                    "0xffffffffffffffff]");
              }
            } else if (overflow < 0) {
              throw c10::ValueError(
                  "Overflow when unpacking long: the seed must be in [-0x8000000000000000, "
                  "0xffffffffffffffff]");
            } else {
              u = static_cast<uint64_t>(s);
            }
            g.manual_seed(u);
            return g;
          },
          py::arg("seed"), py::return_value_policy::reference_internal,
          "Sets the seed (and rewinds the offset to 0); returns the generator.")
      .def("seed", &Generator::seed, "Seeds from a non-deterministic source; returns the new seed.")
      .def("initial_seed", &Generator::initial_seed, "The seed of the last manual_seed() / seed().")
      .def_property_readonly("device", &Generator::device)
      .def(
          "get_state",
          [](const Generator& g) {
            const auto [seed, offset] = g.get_state();
            Tensor t = at::empty({16}, ScalarType::Byte);
            auto* p = static_cast<uint8_t*>(t.data_ptr());
            for (int i = 0; i < 8; ++i) {
              p[i] = static_cast<uint8_t>(seed >> (8 * i));
              p[8 + i] = static_cast<uint8_t>(offset >> (8 * i));
            }
            return t;
          },
          "The state as a uint8 tensor of 16 bytes: the seed, then the Philox offset (little-endian).")
      .def(
          "set_state",
          [](Generator& g, py::handle state) -> Generator& {
            const char* expected = "RNG state must be an ember.aten.ByteTensor (a CPU tensor of dtype uint8)";
            if (!python::is_tensor(state)) throw c10::TypeError(expected);
            const Tensor t = python::unpack_tensor(state);
            if (t.dtype() != ScalarType::Byte || !t.is_cpu()) throw c10::TypeError(expected);
            EMBER_CHECK(t.numel() == 16, "RNG state is wrong size: expected 16 bytes (seed and offset), got ",
                        t.numel());
            const Tensor c = t.contiguous();
            const auto* p = static_cast<const uint8_t*>(c.data_ptr());
            uint64_t seed = 0, offset = 0;
            for (int i = 0; i < 8; ++i) {
              seed |= static_cast<uint64_t>(p[i]) << (8 * i);
              offset |= static_cast<uint64_t>(p[8 + i]) << (8 * i);
            }
            g.set_state(seed, offset);
            return g;
          },
          py::arg("new_state"), py::return_value_policy::reference_internal,
          "Restores a state from get_state(); returns the generator.")
      .def("_get_state", &Generator::get_state, "(seed, offset)")
      .def("_set_state", &Generator::set_state, py::arg("seed"), py::arg("offset"))
      .def("_philox_reserve", &Generator::philox_reserve, py::arg("blocks"),
           "Reserves `blocks` counters; returns (seed, first counter).")
      .def("__eq__", [](const Generator& a,
                        py::handle b) { return py::isinstance<Generator>(b) && a == b.cast<const Generator&>(); })
      .def("__hash__", [](const Generator& g) { return static_cast<size_t>(g.identity()); })
      .def(py::pickle(
          [](const Generator& g) {
            const auto [seed, offset] = g.get_state();
            return py::make_tuple(g.device().str(), seed, offset);
          },
          [](const py::tuple& t) {
            EMBER_CHECK_VALUE(t.size() == 3, "Generator.__setstate__: expected (device, seed, offset)");
            Generator g{c10::Device(t[0].cast<std::string>())};
            g.set_state(t[1].cast<uint64_t>(), t[2].cast<uint64_t>());
            return g;
          }))
      .def("__repr__", [](const Generator& g) { return "<ember.aten.Generator object on " + g.device().str() + ">"; });

  m.def(
      "default_generator", [](const c10::Device& d) { return default_generator(d); },
      py::arg("device") = c10::Device(c10::DeviceType::CPU),
      "The process-wide generator of a device (shares its state with the C++ default).");
  m.def(
      "_philox_block",
      [](uint64_t seed, uint64_t counter, uint64_t subseq) {
        auto b = philox4x32_10(seed, counter, subseq);
        return py::make_tuple(b.x[0], b.x[1], b.x[2], b.x[3]);
      },
      py::arg("seed"), py::arg("counter"), py::arg("subsequence") = 0,
      "One Philox4x32-10 block: key = seed, counter words = (counter, subsequence), low word first.");

  m.def("_get_default_dtype", &get_default_dtype);
  m.def("_set_default_dtype", &set_default_dtype, py::arg("dtype"));
  m.def("get_num_threads", &get_num_threads);
  m.def("set_num_threads", &set_num_threads, py::arg("num_threads"));
  m.def("_get_cpu_capability", [] { return native::cpu_capability_name(native::get_cpu_capability()); });
  m.def("_detected_cpu_capability", [] { return native::cpu_capability_name(native::detected_cpu_capability()); });
  m.def(
      "_built_cpu_capabilities",
      [] {
        std::vector<std::string> names;
        for (int c = 0; c < static_cast<int>(native::CPUCapability::NUM_OPTIONS); ++c) {
          const auto cap = static_cast<native::CPUCapability>(c);
          if (native::cpu_capability_built(cap)) names.emplace_back(native::cpu_capability_name(cap));
        }
        return names;
      },
      "The CPU capabilities this build compiled the kernels for (EMBER_CPU_CAPABILITIES).");
  m.def("_set_cpu_capability", &native::set_cpu_capability, py::arg("capability"),
        "Switches every DispatchStub to 'default', 'avx2' or 'avx512' (tests run each).");
  m.def("_bf16_gemm_kernel", &native::bf16_gemm_kernel_name,
        "The micro-kernel bfloat16 CPU matrix products run now: 'avx512_bf16' (vdpbf16ps) or 'fallback'.");
  m.def("_set_bf16_gemm_kernel", &native::set_bf16_gemm_kernel, py::arg("kernel"),
        "'fallback' forces the float32-panel micro-kernel of bfloat16 CPU matrix products on every CPU (as "
        "EMBER_BF16_GEMM_KERNEL=fallback at start-up); 'auto' lets the CPU choose again.");
  m.def(
      "_dispatch_stubs",
      [] {
        std::vector<std::pair<std::string, bool>> out;
        for (const auto& s : native::registered_stubs()) out.emplace_back(s.name, s.has_cuda());
        return out;
      },
      "[(stub name, has a CUDA kernel)] for every DispatchStub, in registration order.");
#ifdef EMBER_WITH_CUDA
  m.attr("_built_with_cuda") = true;
  m.def(
      "_cuda_check_device_errors", [](int device) { ember::at::cuda::check_device_errors(device); },
      py::arg("device") = -1,
      "Raises IndexError if a kernel on `device` (-1: any) reported a bad index, clearing the report "
      "(ember.aten.cuda.synchronize calls it).");
#else
  m.attr("_built_with_cuda") = false;
#endif
  // ember.aten.backends.cuda.matmul / .cudnn flags (PyTorch's torch._C names)
  m.def("_get_cublas_allow_tf32", &native::cublas_allow_tf32);
  m.def("_set_cublas_allow_tf32", &native::set_cublas_allow_tf32, py::arg("allow"));
  m.def("_get_cudnn_allow_tf32", &native::cudnn_allow_tf32);
  m.def("_set_cudnn_allow_tf32", &native::set_cudnn_allow_tf32, py::arg("allow"));
  m.def("_get_cublas_allow_fp16_reduced_precision_reduction", &native::cublas_allow_fp16_reduced_precision_reduction);
  m.def("_set_cublas_allow_fp16_reduced_precision_reduction",
        &native::set_cublas_allow_fp16_reduced_precision_reduction, py::arg("allow"));
  m.def("_get_cublas_allow_bf16_reduced_precision_reduction", &native::cublas_allow_bf16_reduced_precision_reduction);
  m.def("_set_cublas_allow_bf16_reduced_precision_reduction",
        &native::set_cublas_allow_bf16_reduced_precision_reduction, py::arg("allow"));
  m.def(
      "result_type_of", [](const std::vector<Tensor>& ts) { return result_type(ts); }, py::arg("tensors"),
      "PyTorch's result_type over these tensors (wrapped numbers and 0-dim tensors count as weak).");
  m.def("can_cast", &can_cast, py::arg("from_"), py::arg("to"));
  init_tensor_new(m);
  init_dlpack(m);
  python::names::intern_all();
  init_dispatch_entry(m);
  init_autograd_engine(m);
  init_serialization(m);
  m.def(
      "_item", [](const Tensor& t) { return t.item(); }, py::arg("tensor"),
      "The value of a one-element tensor as a Python number (RuntimeError otherwise).");
  m.def("_wrapped_number", [](const Scalar& s) { return wrapped_scalar_tensor(s); }, py::arg("value"));
}
