#pragma once
// A direct 2-d convolution for stride 1, dilation 1, one group, rows of at least one tile
// (kernel in cpu/ConvDirectKernel.cpp; called by Convolution.cpp before the im2col + GEMM
// path, which handles everything this does not).
//
// Each image is copied once into a zero-padded buffer; then every output tile -- MR output
// channels x 2 vectors of positions along one output row -- is a register-blocked product
// over (c, kh, kw) whose "B" rows are read straight from the padded image (the row segment
// that position ow + kw reads), so no columns matrix is written and none is packed: the
// products run from L1 / L2 at the FMA units' speed. The weights are packed once per call,
// MR output channels interleaved, so a tile's broadcasts read consecutive values.
//
// With flip_weight the weight (C_out, C_in, kH, kW) is read as the flipped, transposed
// (C_in, C_out, kH, kW) kernel: the convolution's grad_input at stride 1 is this direct
// convolution of grad_output with padding kH - 1 - pH, kW - 1 - pW.
#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

struct DirectConvArgs {
  int64_t N = 0, C = 0, H = 0, W = 0;  // the input images, (N, C, H, W) contiguous
  int64_t K = 0, kH = 0, kW = 0;       // output channels and kernel size
  int64_t pH = 0, pW = 0;              // padding
  int64_t oH = 0, oW = 0;              // output size: H + 2 pH - kH + 1, W + 2 pW - kW + 1
  const void* input = nullptr;
  const void* weight = nullptr;  // (K, C, kH, kW) contiguous, or (C, K, kH, kW) with flip_weight
  const void* bias = nullptr;    // (K) or null
  void* output = nullptr;        // (N, K, oH, oW) contiguous
  bool flip_weight = false;
};

// Runs the convolution and returns true, or returns false (nothing written) when the problem
// does not suit the direct kernel at this CPU capability (rows narrower than one tile, one
// tile's weights or one output row's input rows too large for the caches, fewer image rows
// than the threads can share). float32 / float64.
//
// Threads: whole images per thread when the batch splits evenly over the threads (or is
// large); otherwise (a batch of one, say) the threads share each image's output rows. The
// output channels run in blocks whose packed weights stay in L2, each block one pass over
// the image.
using direct_conv_fn = bool (*)(ScalarType dtype, const DirectConvArgs& args);
DECLARE_DISPATCH(direct_conv_fn, direct_conv_stub);

// The weight gradient of the same convolution, directly (no columns matrix):
//
//   grad_weight[k, c, kh, kw] = sum over n, oh, ow of grad_output[n, k, oh, ow] * x_pad[n, c, oh + kh, ow + kw]
//
// The images are copied into zero-padded buffers, a pass of as many whole images as fit 16 MiB
// at a time. A tile -- 8 output channels (4 below AVX-512) x 3 of the flattened (c, kh, kw)
// taps -- accumulates 24 (12) vectors along the output rows (grad_output's row segment times
// the padded image's row segment that tap reads) over slabs of rows whose grad_output stays in
// L1, a group of slabs (across images, up to 256 KiB of its grad_output, in L2) at a time, then
// adds their lane sums to grad_weight. One parallel region per pass; the tiles are split over
// the threads: each grad_weight element has one owner, so its sum runs in the same order at
// any thread count.
constexpr int64_t kDirectWeightMinWidth = 32;  // narrower output rows: im2col + GEMM

struct DirectConvWeightArgs {
  int64_t N = 0, C = 0, H = 0, W = 0;  // the input images, (N, C, H, W) contiguous
  int64_t K = 0, kH = 0, kW = 0;       // output channels and kernel size
  int64_t pH = 0, pW = 0;              // padding
  int64_t oH = 0, oW = 0;              // output size: H + 2 pH - kH + 1, W + 2 pW - kW + 1
  const void* input = nullptr;
  const void* grad_output = nullptr;  // (N, K, oH, oW) contiguous
  void* grad_weight = nullptr;        // (K, C, kH, kW) contiguous, overwritten
};

// Computes grad_weight and returns true, or returns false (nothing written) when the rows are
// too narrow (fewer than kDirectWeightMinWidth output columns). float32 / float64.
using direct_conv_weight_fn = bool (*)(ScalarType dtype, const DirectConvWeightArgs& args);
DECLARE_DISPATCH(direct_conv_weight_fn, direct_conv_weight_stub);

}  // namespace ember::at::native
