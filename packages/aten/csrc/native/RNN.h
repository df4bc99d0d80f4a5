#pragma once
// The pointwise halves of ember's fused LSTM / GRU layers (RNN.cpp runs the recurrence:
// one GEMM per time step over the stacked hidden weights, then one of these kernels).
// CPU kernels in cpu/RNNKernel.cpp, CUDA kernels in cuda/RNN.cu.
//
// Every argument is a (rows, width) matrix whose rows are contiguous; row r starts at
// data_ptr() + r * stride(0). H is the hidden size (h.size(1) / dh.size(1)).
//
// LSTM workspace row, (6H): [i f g o | h_prev | c_prev]: the activated gates (sigmoid i,
//   f, o; tanh g), h_prev and c_prev, saved for the backward (c = f * c_prev + i * g is
//   recomputed there).
// GRU workspace row, (5H): [r z n | h_prev W_hn^T + b_hn | h_prev].
// A forward run for inference (train=False) saves nothing: the workspace is undefined.
#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

// gi (rows, 4H): the input gates x W_ih^T + b_ih + b_hh; gh (rows, 4H): h_prev W_hh^T (it
// may be the workspace's first 4H columns, which the kernel then overwrites); h, c (rows,
// H): the states, read as h_prev / c_prev and overwritten by h / c; out (rows, H):
// receives h too; ws (rows, 6H) or undefined (nothing saved).
using lstm_cell_fn = void (*)(const Tensor& gi, const Tensor& gh, const Tensor& h, const Tensor& c, const Tensor& out,
                              const Tensor& ws);
// ws: the forward's workspace rows; grad_out (rows, H) or undefined: the gradient of the
// step's output; dh, dc (rows, H): the gradient of h and c after the step, dc overwritten
// by the gradient of c_prev (dh is left for the caller's GEMM); dgates (rows, 4H): the
// gradient of the gate pre-activations.
using lstm_cell_backward_fn = void (*)(const Tensor& ws, const Tensor& grad_out, const Tensor& dh, const Tensor& dc,
                                       const Tensor& dgates);
// gi (rows, 3H): x W_ih^T + b_ih; gh (rows, 3H): h_prev W_hh^T; b_hh (3H) or undefined;
// h (rows, H): read as h_prev, overwritten by h; out (rows, H): receives h; ws (rows, 5H)
// or undefined (nothing saved).
using gru_cell_fn = void (*)(const Tensor& gi, const Tensor& gh, const Tensor& b_hh, const Tensor& h, const Tensor& out,
                             const Tensor& ws);
// ws: the forward's workspace rows; grad_out (rows, H) or undefined; dh (rows, H): the
// gradient of h, overwritten by the direct part of h_prev's (z * dh; the caller adds
// dgh W_hh); dgi, dgh (rows, 3H): the gradients of gi and of h_prev W_hh^T + b_hh.
using gru_cell_backward_fn = void (*)(const Tensor& ws, const Tensor& grad_out, const Tensor& dh, const Tensor& dgi,
                                      const Tensor& dgh);

DECLARE_DISPATCH(lstm_cell_fn, lstm_cell_stub);
DECLARE_DISPATCH(lstm_cell_backward_fn, lstm_cell_backward_stub);
DECLARE_DISPATCH(gru_cell_fn, gru_cell_stub);
DECLARE_DISPATCH(gru_cell_backward_fn, gru_cell_backward_stub);

// ---- CPU float32 / float64: a whole layer's recurrence in the kernel file -------------------
// The per-step GEMM (gemm_cpu, Blas.h) and the cell on raw pointers, with no Tensor made per
// step. Rows of the batch never mix in the recurrence (row r of step t's GEMM reads only
// row r of h), so with several threads the batch is cut into one block of rows per thread
// and each thread runs every step of its block: one parallel region per layer, no barrier.
//
// Forward: input_gates (N, G) contiguous (G = 4H, or 3H for GRU); w_hh (G, H) contiguous;
// h (and c) (B, H) contiguous state buffers, updated in place; output (N, H); ws (N, 6H /
// 5H) or undefined; b_hh (3H) or undefined. Backward: as the stubs above over every step,
// grad_output (N, H) contiguous or undefined; dh (and dc) (B, H) updated in place; dgates
// (N, 4H) (LSTM) or dgi, dgh (N, 3H) (GRU).
struct RnnSteps {
  IntArrayRef sizes, offsets;  // batch_sizes[t] and the first row of step t in the data
  bool reverse;
};
using lstm_layer_cpu_fn = void (*)(const Tensor& input_gates, const Tensor& w_hh, const Tensor& h, const Tensor& c,
                                   const Tensor& output, const Tensor& ws, const RnnSteps& steps);
using lstm_layer_backward_cpu_fn = void (*)(const Tensor& grad_output, const Tensor& w_hh, const Tensor& ws,
                                            const Tensor& dh, const Tensor& dc, const Tensor& dgates,
                                            const RnnSteps& steps);
using gru_layer_cpu_fn = void (*)(const Tensor& input_gates, const Tensor& w_hh, const Tensor& b_hh, const Tensor& h,
                                  const Tensor& output, const Tensor& ws, const RnnSteps& steps);
using gru_layer_backward_cpu_fn = void (*)(const Tensor& grad_output, const Tensor& w_hh, const Tensor& ws,
                                           const Tensor& dh, const Tensor& dgi, const Tensor& dgh,
                                           const RnnSteps& steps);

DECLARE_DISPATCH(lstm_layer_cpu_fn, lstm_layer_cpu_stub);
DECLARE_DISPATCH(lstm_layer_backward_cpu_fn, lstm_layer_backward_cpu_stub);
DECLARE_DISPATCH(gru_layer_cpu_fn, gru_layer_cpu_stub);
DECLARE_DISPATCH(gru_layer_backward_cpu_fn, gru_layer_backward_cpu_stub);

}  // namespace ember::at::native
