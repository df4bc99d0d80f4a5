#pragma once
// The pointwise halves of ember's fused LSTM / GRU layers (RNN.cpp runs the recurrence:
// one GEMM per time step over the stacked hidden weights, then one of these kernels).
// CPU kernels in cpu/RNNKernel.cpp, CUDA kernels in cuda/RNN.cu.
//
// Every argument is a (rows, width) matrix whose rows are contiguous; row r starts at
// data_ptr() + r * stride(0). H is the hidden size (h.size(1) / dh.size(1)).
//
// LSTM workspace row, (6H): [i f g o | h_prev | c_prev]. The step's kernel gets the gate
//   pre-activations x W_ih^T + b_ih + b_hh + h_prev W_hh^T in the first 4H and replaces
//   them by the activated gates (sigmoid i, f, o; tanh g), and saves h_prev and c_prev
//   beside them for the backward (c = f * c_prev + i * g is recomputed there).
// GRU workspace row, (5H): [r z n | h_prev W_hn^T + b_hn | h_prev].
#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

// ws (rows, 6H) as above; h, c (rows, H): the states, read as h_prev / c_prev and
// overwritten by h / c; out (rows, H): receives h too.
using lstm_cell_fn = void (*)(const Tensor& ws, const Tensor& h, const Tensor& c, const Tensor& out);
// ws: the forward's workspace rows; grad_out (rows, H) or undefined: the gradient of the
// step's output; dh, dc (rows, H): the gradient of h and c after the step, dc overwritten
// by the gradient of c_prev (dh is left for the caller's GEMM); dgates (rows, 4H): the
// gradient of the gate pre-activations.
using lstm_cell_backward_fn = void (*)(const Tensor& ws, const Tensor& grad_out, const Tensor& dh, const Tensor& dc,
                                       const Tensor& dgates);
// gi (rows, 3H): x W_ih^T + b_ih; gh (rows, 3H): h_prev W_hh^T; b_hh (3H) or undefined;
// h (rows, H): read as h_prev, overwritten by h; out (rows, H): receives h; ws (rows, 5H).
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

}  // namespace ember::at::native
