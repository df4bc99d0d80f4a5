#pragma once
// What ember_aten_testing exposes (module.cpp binds it): host emulations of ember-aten's CUDA
// kernels and host copies of their index math, so the CPU test suite checks the CUDA code's
// logic on machines without a GPU. Test-only: this module is built by the test sessions
// (noxfile.py) and never ships in the ember-aten wheel.
//
// What the emulation checks is the kernels' arithmetic and indexing -- not launches, shared
// memory, synchronisation, atomics or device memory: each *_emulation(on) puts a host loop
// over a kernel's block or element code into the CPU slots of its DispatchStubs (on=True;
// on=False puts the CPU kernels back) and returns the previous state; the cuda_emulated_*
// functions run a CUDA operator's host code on CPU tensors with its launches (or cuBLAS
// calls) run on the host.
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <ember/aten/Tensor.h>

namespace ember::at::native::cuda_emulation {

// LoopsTesting.cu: gpu_kernel's offset calculator and 32-bit split
std::vector<std::vector<int64_t>> cuda_loops_offsets(const std::vector<int64_t>& shape,
                                                     const std::vector<std::vector<int64_t>>& strides,
                                                     const std::vector<int64_t>& linear);
std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cuda_loops_split(const std::vector<Tensor>& tensors);

bool cuda_indexing_emulation(bool on);       // IndexingEmulation.cu
bool cuda_distributions_emulation(bool on);  // DistributionsEmulation.cu
bool cuda_sdpa_emulation(bool on);           // AttentionEmulation.cu
bool cuda_softmax_emulation(bool on);        // SoftMaxEmulation.cu
bool cuda_row_norm_emulation(bool on);       // NormalizationEmulation.cu
bool cuda_grid_sampler_emulation(bool on);   // GridSamplerEmulation.cpp
bool cuda_cross_emulation(bool on);          // CrossEmulation.cu

// BlasEmulation.cpp: the cuBLAS callers with a host emulation of cuBLAS
void cuda_emulated_gemm_batched(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta,
                                const Scalar& alpha);
Tensor cuda_emulated_convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                                 IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                 IntArrayRef output_padding, int64_t groups);
std::tuple<Tensor, Tensor, Tensor> cuda_emulated_convolution_backward(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight,
    const std::optional<c10::DimVector>& bias_sizes, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
    bool transposed, IntArrayRef output_padding, int64_t groups, const std::vector<bool>& output_mask);

// LossCTCEmulation.cu: ctc_loss_cuda / ctc_loss_backward_cuda with their blocks run on the host
std::tuple<Tensor, Tensor> cuda_emulated_ctc_loss(const Tensor& log_probs, const Tensor& targets,
                                                  IntArrayRef input_lengths, IntArrayRef target_lengths, int64_t blank,
                                                  bool zero_infinity);
Tensor cuda_emulated_ctc_loss_backward(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                                       IntArrayRef input_lengths, IntArrayRef target_lengths,
                                       const Tensor& neg_log_likelihood, const Tensor& log_alpha, int64_t blank,
                                       bool zero_infinity);

}  // namespace ember::at::native::cuda_emulation
