// ember_aten_testing: the host emulation of ember-aten's CUDA kernels, for the tests on
// machines without a GPU (Emulation.h says what it checks and what not). Test-only: built and
// installed by the test sessions (noxfile.py), never part of the ember-aten wheel; its
// functions work on CPU tensors of the ember.aten it was built against.
#include <ember/aten/python/casters.h>

#include "Emulation.h"

namespace py = pybind11;
using namespace ember;
using namespace ember::at;
namespace emu = ember::at::native::cuda_emulation;

PYBIND11_MODULE(ember_aten_testing, m) {
  m.doc() = "ember_aten_testing: host emulation of ember.aten's CUDA kernels (tests only, never shipped).";

  // -- gpu_kernel's index math (LoopsTesting.cu)
  m.def("cuda_loops_offsets", &emu::cuda_loops_offsets, py::arg("shape"), py::arg("strides"), py::arg("linear"),
        "Byte offsets gpu_kernel's offset calculator computes (a host copy of its math).");
  m.def("cuda_loops_split", &emu::cuda_loops_split, py::arg("tensors"),
        "[(shape, byte starts)] of the 32-bit pieces of an iteration over (out, *inputs).");

  // -- stub switches: on=True puts the CUDA kernels' host emulation into the CPU slots
  m.def("cuda_indexing_emulation", &emu::cuda_indexing_emulation, py::arg("on"),
        "on=True: the CPU slots of the indexing stubs run a host emulation of their CUDA kernels (the same "
        "element code, serially, on CPU tensors) so tests check that code without a GPU; returns the previous state.");
  m.def("cuda_distributions_emulation", &emu::cuda_distributions_emulation, py::arg("on"),
        "on=True: the CPU slots of the random distribution stubs run the CUDA kernels' code on the host (their "
        "Philox block bodies, serially, on CPU tensors); returns the previous state.");
  m.def("cuda_sdpa_emulation", &emu::cuda_sdpa_emulation, py::arg("on"),
        "on=True: the CPU slots of the fused attention stubs run a host emulation of their CUDA kernels (the same "
        "block code, one thread per block) so tests check it without a GPU; returns the previous state.");
  m.def("cuda_softmax_emulation", &emu::cuda_softmax_emulation, py::arg("on"),
        "on=True: the CPU slots of the softmax stubs run a host emulation of their CUDA kernels (the same block "
        "code, one block of one thread); returns the previous state.");
  m.def("cuda_row_norm_emulation", &emu::cuda_row_norm_emulation, py::arg("on"),
        "on=True: the CPU slots of the row-norm stubs (layer / RMS norm, group norm statistics) run a host emulation "
        "of their CUDA kernels (the same block code, blocks of one thread); returns the previous state.");
  m.def("cuda_grid_sampler_emulation", &emu::cuda_grid_sampler_emulation, py::arg("on"),
        "on=True: the CPU slots of the grid_sampler_2d stubs run the CUDA kernels' per-location code on the "
        "host, serially, so tests check it without a GPU; returns the previous state.");
  m.def("cuda_cross_emulation", &emu::cuda_cross_emulation, py::arg("on"),
        "on=True: the CPU slot of cross_stub runs the CUDA kernel's per-position code on the host (same "
        "32-bit split and offset calculator) so tests check it without a GPU; returns the previous state.");

  // -- CUDA host code on CPU tensors (BlasEmulation.cpp, LossCTCEmulation.cu)
  m.def("cuda_emulated_gemm_batched", &emu::cuda_emulated_gemm_batched, py::arg("out"), py::arg("a"), py::arg("b"),
        py::arg("beta"), py::arg("alpha"),
        "gemm_batched_cuda on CPU tensors, its cuBLAS calls run by a host emulation of cuBLAS.");
  m.def(
      "cuda_emulated_convolution",
      [](const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, std::vector<int64_t> stride,
         std::vector<int64_t> padding, std::vector<int64_t> dilation, bool transposed,
         std::vector<int64_t> output_padding, int64_t groups) {
        return emu::cuda_emulated_convolution(input, weight, bias, stride, padding, dilation, transposed,
                                              output_padding, groups);
      },
      "convolution_cuda on CPU tensors, its cuBLAS calls emulated on the host.");
  m.def(
      "cuda_emulated_convolution_backward",
      [](const Tensor& grad_output, const Tensor& input, const Tensor& weight,
         std::optional<std::vector<int64_t>> bias_sizes, std::vector<int64_t> stride, std::vector<int64_t> padding,
         std::vector<int64_t> dilation, bool transposed, std::vector<int64_t> output_padding, int64_t groups,
         std::vector<bool> output_mask) {
        std::optional<c10::DimVector> bs;
        if (bias_sizes) bs = c10::DimVector(bias_sizes->begin(), bias_sizes->end());
        auto r = emu::cuda_emulated_convolution_backward(grad_output, input, weight, bs, stride, padding, dilation,
                                                         transposed, output_padding, groups, output_mask);
        auto opt = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; };
        return std::make_tuple(opt(std::get<0>(r)), opt(std::get<1>(r)), opt(std::get<2>(r)));
      },
      "convolution_backward_cuda on CPU tensors, its cuBLAS calls emulated on the host.");
  m.def(
      "cuda_emulated_ctc_loss",
      [](const Tensor& log_probs, const Tensor& targets, std::vector<int64_t> input_lengths,
         std::vector<int64_t> target_lengths, int64_t blank, bool zero_infinity) {
        return emu::cuda_emulated_ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity);
      },
      "ctc_loss_cuda on CPU tensors, its kernel's blocks run on the host.");
  m.def(
      "cuda_emulated_ctc_loss_backward",
      [](const Tensor& grad, const Tensor& log_probs, const Tensor& targets, std::vector<int64_t> input_lengths,
         std::vector<int64_t> target_lengths, const Tensor& neg_log_likelihood, const Tensor& log_alpha, int64_t blank,
         bool zero_infinity) {
        return emu::cuda_emulated_ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths,
                                                    neg_log_likelihood, log_alpha, blank, zero_infinity);
      },
      "ctc_loss_backward_cuda on CPU tensors, its kernel's blocks run on the host.");
}
