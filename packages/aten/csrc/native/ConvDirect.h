#pragma once
// A direct 2-d convolution for stride 1, dilation 1, one group, with small channel counts
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
// does not suit the direct kernel at this CPU capability (rows narrower than one tile, too few
// images for the threads, an image or weight too large for the caches). float32 / float64.
using direct_conv_fn = bool (*)(ScalarType dtype, const DirectConvArgs& args);
DECLARE_DISPATCH(direct_conv_fn, direct_conv_stub);

}  // namespace ember::at::native
