#pragma once
// PyTorch's cubic convolution (Keys' kernel with A = -0.75): the weights of the four taps at
// offsets -1, 0, 1, 2 around a position whose fractional part is t. One definition for
// upsample_bicubic2d (Resample.cpp) and grid_sampler_2d's bicubic mode on the CPU and CUDA
// (GridSamplerPoint.h).
#include <ember/c10/Macros.h>

namespace ember::at::native {

template <typename T>
EMBER_HOST_DEVICE inline void cubic_weights(T t, T w[4]) {
  const T a = T(-0.75);
  const T near0 = t, near1 = 1 - t;    // distances |x| <= 1 of the inner taps
  const T far0 = t + 1, far1 = 2 - t;  // distances 1 < |x| < 2 of the outer taps
  w[0] = ((a * far0 - 5 * a) * far0 + 8 * a) * far0 - 4 * a;
  w[1] = ((a + 2) * near0 - (a + 3)) * near0 * near0 + 1;
  w[2] = ((a + 2) * near1 - (a + 3)) * near1 * near1 + 1;
  w[3] = ((a * far1 - 5 * a) * far1 + 8 * a) * far1 - 4 * a;
}

// The derivatives of those weights with respect to t (grid_sampler_2d's grad_grid).
template <typename T>
EMBER_HOST_DEVICE inline void cubic_weights_grad(T t, T dw[4]) {
  const T a = T(-0.75);
  // d/dt of each weight above: d/dx of the polynomial times dx/dt (+1 for t, t + 1; -1 for
  // 1 - t, 2 - t)
  const T near0 = t, near1 = 1 - t, far0 = t + 1, far1 = 2 - t;
  dw[0] = (3 * a * far0 - 10 * a) * far0 + 8 * a;
  dw[1] = (3 * (a + 2) * near0 - 2 * (a + 3)) * near0;
  dw[2] = -((3 * (a + 2) * near1 - 2 * (a + 3)) * near1);
  dw[3] = -((3 * a * far1 - 10 * a) * far1 + 8 * a);
}

}  // namespace ember::at::native
