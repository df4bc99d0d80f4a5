// ember's fused recurrent layers: _lstm_layer / _gru_layer run one layer and direction of
// an LSTM / GRU over a whole (packed) sequence in C++, and their _backward ops run the
// recurrence back (derivatives.yaml pairs them). nn.LSTM / nn.GRU call them per layer and
// direction (ember/nn/_functional_rnn.py), with the input projection x W_ih^T + b as one
// GEMM over every step before, and dropout between layers after.
//
// The recurrence, per time step t (rows = batch_sizes[t], the sequences still running):
//   gh[rows] = h[rows] @ W_hh^T              one GEMM (gemm_cpu / gemm_batched: OpenBLAS or cuBLAS)
//   the cell's pointwise kernel               one pass over the input gates and gh (RNN.h)
// On CPU in float32 / float64 the whole loop runs in cpu/RNNKernel.cpp (one block of batch
// rows per thread, RNN.h); other dtypes and CUDA run it below over Tensors. With train=False
// (inference: nn's front passes it under no_grad) no workspace is written and gh is a
// scratch of one step's rows.
// The states h (and c) are one (B, H) buffer each, B = batch_sizes[0]. Data is in PyTorch's
// packed layout (the rows of step t follow those of step t-1; a padded (T, B) batch is
// batch_sizes = [B] * T), and a step touches only the first `rows` rows of the states:
//   forward direction (t = 0 .. T-1): a sequence that ended keeps its last state in its
//     row, so the buffer holds every sequence's final state at the end;
//   reverse direction (t = T-1 .. 0): a sequence not yet begun still holds h0 in its row,
//     which is where its recurrence starts.
// The backward walks the steps in the opposite order over gradient buffers (dh, dc) laid
// out the same way, so the same two facts make it right; dW_hh is one GEMM at the end,
// dgates^T @ h_prev over all steps (h_prev is saved in the workspace).
#include <numeric>
#include <vector>

#include <ember/aten/Tensor.h>
#include <ember/c10/DeviceGuard.h>
#include <ember/c10/ScalarType.h>

#include "Blas.h"
#include "RNN.h"

namespace ember::at::native {

DEFINE_DISPATCH(lstm_cell_stub);
DEFINE_DISPATCH(lstm_cell_backward_stub);
DEFINE_DISPATCH(gru_cell_stub);
DEFINE_DISPATCH(gru_cell_backward_stub);
DEFINE_DISPATCH(lstm_layer_cpu_stub);
DEFINE_DISPATCH(lstm_layer_backward_cpu_stub);
DEFINE_DISPATCH(gru_layer_cpu_stub);
DEFINE_DISPATCH(gru_layer_backward_cpu_stub);

namespace {

// The steps of a packed sequence: offsets[t] = the first row of step t in the data.
struct Steps {
  std::vector<int64_t> sizes, offsets;
  int64_t batch = 0, rows = 0;
  int64_t count() const { return static_cast<int64_t>(sizes.size()); }
};

Steps check_batch_sizes(const char* op, IntArrayRef batch_sizes, int64_t data_rows) {
  EMBER_CHECK(!batch_sizes.empty(), "Expected sequence length to be larger than 0 in RNN");
  Steps s;
  s.sizes.assign(batch_sizes.begin(), batch_sizes.end());
  s.batch = s.sizes[0];
  for (size_t t = 0; t < s.sizes.size(); ++t) {
    const int64_t bs = s.sizes[t];
    EMBER_CHECK(bs > 0, op, ": batch_sizes must be positive, got ", bs, " at step ", t);
    EMBER_CHECK(t == 0 || bs <= s.sizes[t - 1], op, ": batch_sizes must be non-increasing, got ", s.sizes[t - 1],
                " then ", bs, " at step ", t);
    s.offsets.push_back(s.rows);
    s.rows += bs;
  }
  EMBER_CHECK(s.rows == data_rows, op, ": batch_sizes sum to ", s.rows, " but the input gates have ", data_rows,
              " rows");
  return s;
}

void check_matrix(const char* op, const char* what, const Tensor& t, int64_t rows, int64_t cols) {
  EMBER_CHECK(t.dim() == 2 && t.size(0) == rows && t.size(1) == cols, op, ": expected ", what, " of shape [", rows,
              ", ", cols, "], got ", shape_str(t.sizes()));
}

void check_like(const char* op, const char* what, const Tensor& t, const Tensor& ref) {
  EMBER_CHECK(t.dtype() == ref.dtype(), op, ": expected ", what, " to have dtype ", c10::toPythonName(ref.dtype()),
              ", got ", c10::toPythonName(t.dtype()));
  check_same_device(op, ref, t);
}

// The state buffer a layer updates in place: a contiguous copy of s (B, H).
Tensor state_copy(const Tensor& s) {
  Tensor out = at::empty(s.sizes(), s.dtype(), s.device());
  out.copy_(s);
  return out;
}

// Zeros (B, H), or a contiguous copy of the gradient that arrived.
Tensor grad_state(const std::optional<Tensor>& g, int64_t batch, int64_t H, const Tensor& like) {
  if (g && g->defined()) return state_copy(*g);
  return at::zeros({batch, H}, like.dtype(), like.device());
}

Tensor rows_of(const Tensor& t, int64_t offset, int64_t rows) { return t.narrow(0, offset, rows); }

// out (m, n) = beta * out + a (m, k) @ b (k, n), through the shared GEMM entry point
void gemm2d(const Tensor& out, const Tensor& a, const Tensor& b, double beta) {
  gemm_batched(out.unsqueeze(0), a.unsqueeze(0), b.unsqueeze(0), Scalar(beta), Scalar(1.0));
}

// The gradient of the step's output rows, or undefined.
Tensor grad_rows(const Tensor& grad_output, int64_t offset, int64_t rows) {
  return grad_output.defined() ? rows_of(grad_output, offset, rows) : Tensor();
}

Tensor contiguous_grad(const char* op, const std::optional<Tensor>& g, int64_t rows, int64_t H, const Tensor& like) {
  if (!g || !g->defined()) return Tensor();
  check_matrix(op, "grad_output", *g, rows, H);
  check_like(op, "grad_output", *g, like);
  return g->contiguous();
}

// The order in which the forward visits the steps (the backward visits them reversed).
int64_t step_at(const Steps& s, int64_t k, bool reverse) { return reverse ? s.count() - 1 - k : k; }

// The CPU float32 / float64 layers run in the kernel file (RNN.h); other dtypes and CUDA
// run the step loop here over Tensors.
bool cpu_layer(const Tensor& t) {
  return t.device().type == DeviceType::CPU && (t.dtype() == ScalarType::Float || t.dtype() == ScalarType::Double);
}

RnnSteps steps_of(const Steps& s, bool reverse) { return {s.sizes, s.offsets, reverse}; }

// A forward run with train=False returns a workspace of no rows: its backward refuses it.
void check_not_inference(const char* op, const Tensor& ws, IntArrayRef batch_sizes) {
  EMBER_CHECK(ws.dim() != 2 || ws.size(0) != 0 || batch_sizes.empty(), op,
              ": the workspace is empty: its forward ran with train=False, which saves nothing for the backward");
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> _lstm_layer(const Tensor& input_gates, const Tensor& w_hh, const Tensor& h0,
                                                       const Tensor& c0, IntArrayRef batch_sizes, bool reverse,
                                                       bool train) {
  const char* op = "_lstm_layer";
  EMBER_CHECK(c10::isFloatingType(input_gates.dtype()), op, ": expected a floating-point input, got ",
              c10::toPythonName(input_gates.dtype()));
  EMBER_CHECK(w_hh.dim() == 2, op, ": expected w_hh to be 2-D, got ", shape_str(w_hh.sizes()));
  const int64_t H = w_hh.size(1);
  check_matrix(op, "w_hh", w_hh, 4 * H, H);
  EMBER_CHECK(input_gates.dim() == 2, op, ": expected 2-D input gates, got ", shape_str(input_gates.sizes()));
  const Steps s = check_batch_sizes(op, batch_sizes, input_gates.size(0));
  check_matrix(op, "input_gates", input_gates, s.rows, 4 * H);
  check_matrix(op, "h0", h0, s.batch, H);
  check_matrix(op, "c0", c0, s.batch, H);
  check_like(op, "w_hh", w_hh, input_gates);
  check_like(op, "h0", h0, input_gates);
  check_like(op, "c0", c0, input_gates);
  c10::DeviceGuard guard(input_gates.device());

  const ScalarType dt = input_gates.dtype();
  const Device dev = input_gates.device();
  const Tensor gi = input_gates.contiguous(), w = w_hh.contiguous();
  Tensor ws = train ? at::empty({s.rows, 6 * H}, dt, dev) : Tensor();
  Tensor output = at::empty({s.rows, H}, dt, dev);
  Tensor h = state_copy(h0), c = state_copy(c0);
  if (cpu_layer(gi)) {
    lstm_layer_cpu_stub(DeviceType::CPU, gi, w, h, c, output, ws, steps_of(s, reverse));
  } else {
    // h_prev W_hh^T goes to the workspace's gate columns, or to a scratch (inference)
    const Tensor scratch = train ? Tensor() : at::empty({s.batch, 4 * H}, dt, dev);
    const Tensor w_t = w.transpose(0, 1);
    for (int64_t k = 0; k < s.count(); ++k) {
      const int64_t t = step_at(s, k, reverse), bs = s.sizes[t], off = s.offsets[t];
      const Tensor h_rows = rows_of(h, 0, bs);
      const Tensor ws_rows = train ? rows_of(ws, off, bs) : Tensor();
      const Tensor gh = train ? ws_rows.narrow(1, 0, 4 * H) : rows_of(scratch, 0, bs);
      gemm2d(gh, h_rows, w_t, 0.0);
      lstm_cell_stub(dev.type, rows_of(gi, off, bs), gh, h_rows, rows_of(c, 0, bs), rows_of(output, off, bs), ws_rows);
    }
  }
  if (!train) ws = at::empty({0, 6 * H}, dt, dev);
  return {output, h, c, ws};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> _lstm_layer_backward(const std::optional<Tensor>& grad_output,
                                                                const std::optional<Tensor>& grad_hy,
                                                                const std::optional<Tensor>& grad_cy,
                                                                const Tensor& w_hh, const Tensor& workspace,
                                                                IntArrayRef batch_sizes, bool reverse) {
  const char* op = "_lstm_layer_backward";
  const int64_t H = w_hh.size(1);
  check_not_inference(op, workspace, batch_sizes);
  const Steps s = check_batch_sizes(op, batch_sizes, workspace.size(0));
  check_matrix(op, "workspace", workspace, s.rows, 6 * H);
  check_like(op, "workspace", workspace, w_hh);
  c10::DeviceGuard guard(w_hh.device());
  const Tensor go = contiguous_grad(op, grad_output, s.rows, H, w_hh);
  Tensor dh = grad_state(grad_hy, s.batch, H, w_hh), dc = grad_state(grad_cy, s.batch, H, w_hh);
  Tensor dgates = at::empty({s.rows, 4 * H}, w_hh.dtype(), w_hh.device());
  const Tensor w = w_hh.contiguous(), ws = workspace.contiguous();
  if (cpu_layer(w)) {
    lstm_layer_backward_cpu_stub(DeviceType::CPU, go, w, ws, dh, dc, dgates, steps_of(s, reverse));
  } else {
    for (int64_t k = s.count() - 1; k >= 0; --k) {
      const int64_t t = step_at(s, k, reverse), bs = s.sizes[t], off = s.offsets[t];
      const Tensor dh_rows = rows_of(dh, 0, bs), dg = rows_of(dgates, off, bs);
      lstm_cell_backward_stub(w.device().type, rows_of(ws, off, bs), grad_rows(go, off, bs), dh_rows,
                              rows_of(dc, 0, bs), dg);
      gemm2d(dh_rows, dg, w, 0.0);
    }
  }
  Tensor grad_w_hh = at::empty({4 * H, H}, w_hh.dtype(), w_hh.device());
  gemm2d(grad_w_hh, dgates.transpose(0, 1), ws.narrow(1, 4 * H, H), 0.0);
  return {dgates, grad_w_hh, dh, dc};
}

std::tuple<Tensor, Tensor, Tensor> _gru_layer(const Tensor& input_gates, const Tensor& w_hh,
                                              const std::optional<Tensor>& b_hh, const Tensor& h0,
                                              IntArrayRef batch_sizes, bool reverse, bool train) {
  const char* op = "_gru_layer";
  EMBER_CHECK(c10::isFloatingType(input_gates.dtype()), op, ": expected a floating-point input, got ",
              c10::toPythonName(input_gates.dtype()));
  EMBER_CHECK(w_hh.dim() == 2, op, ": expected w_hh to be 2-D, got ", shape_str(w_hh.sizes()));
  const int64_t H = w_hh.size(1);
  check_matrix(op, "w_hh", w_hh, 3 * H, H);
  EMBER_CHECK(input_gates.dim() == 2, op, ": expected 2-D input gates, got ", shape_str(input_gates.sizes()));
  const Steps s = check_batch_sizes(op, batch_sizes, input_gates.size(0));
  check_matrix(op, "input_gates", input_gates, s.rows, 3 * H);
  check_matrix(op, "h0", h0, s.batch, H);
  check_like(op, "w_hh", w_hh, input_gates);
  check_like(op, "h0", h0, input_gates);
  Tensor bias;
  if (b_hh && b_hh->defined()) {
    EMBER_CHECK(b_hh->dim() == 1 && b_hh->size(0) == 3 * H, op, ": expected b_hh of shape [", 3 * H, "], got ",
                shape_str(b_hh->sizes()));
    check_like(op, "b_hh", *b_hh, input_gates);
    bias = b_hh->contiguous();
  }
  c10::DeviceGuard guard(input_gates.device());

  const ScalarType dt = input_gates.dtype();
  const Device dev = input_gates.device();
  const Tensor gi = input_gates.contiguous(), w = w_hh.contiguous();
  Tensor ws = train ? at::empty({s.rows, 5 * H}, dt, dev) : Tensor();
  Tensor output = at::empty({s.rows, H}, dt, dev);
  Tensor h = state_copy(h0);
  if (cpu_layer(gi)) {
    gru_layer_cpu_stub(DeviceType::CPU, gi, w, bias, h, output, ws, steps_of(s, reverse));
  } else {
    Tensor gh = at::empty({s.batch, 3 * H}, dt, dev);
    const Tensor w_t = w.transpose(0, 1);
    for (int64_t k = 0; k < s.count(); ++k) {
      const int64_t t = step_at(s, k, reverse), bs = s.sizes[t], off = s.offsets[t];
      const Tensor h_rows = rows_of(h, 0, bs), gh_rows = rows_of(gh, 0, bs);
      gemm2d(gh_rows, h_rows, w_t, 0.0);
      gru_cell_stub(dev.type, rows_of(gi, off, bs), gh_rows, bias, h_rows, rows_of(output, off, bs),
                    train ? rows_of(ws, off, bs) : Tensor());
    }
  }
  if (!train) ws = at::empty({0, 5 * H}, dt, dev);
  return {output, h, ws};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> _gru_layer_backward(const std::optional<Tensor>& grad_output,
                                                               const std::optional<Tensor>& grad_hy, const Tensor& w_hh,
                                                               const Tensor& workspace, IntArrayRef batch_sizes,
                                                               bool reverse, bool has_bias) {
  const char* op = "_gru_layer_backward";
  const int64_t H = w_hh.size(1);
  check_not_inference(op, workspace, batch_sizes);
  const Steps s = check_batch_sizes(op, batch_sizes, workspace.size(0));
  check_matrix(op, "workspace", workspace, s.rows, 5 * H);
  check_like(op, "workspace", workspace, w_hh);
  c10::DeviceGuard guard(w_hh.device());
  const Tensor go = contiguous_grad(op, grad_output, s.rows, H, w_hh);
  Tensor dh = grad_state(grad_hy, s.batch, H, w_hh);
  Tensor dgi = at::empty({s.rows, 3 * H}, w_hh.dtype(), w_hh.device());
  Tensor dgh = at::empty({s.rows, 3 * H}, w_hh.dtype(), w_hh.device());
  const Tensor w = w_hh.contiguous(), ws = workspace.contiguous();
  if (cpu_layer(w)) {
    gru_layer_backward_cpu_stub(DeviceType::CPU, go, w, ws, dh, dgi, dgh, steps_of(s, reverse));
  } else {
    for (int64_t k = s.count() - 1; k >= 0; --k) {
      const int64_t t = step_at(s, k, reverse), bs = s.sizes[t], off = s.offsets[t];
      const Tensor dh_rows = rows_of(dh, 0, bs), dy = rows_of(dgh, off, bs);
      gru_cell_backward_stub(w.device().type, rows_of(ws, off, bs), grad_rows(go, off, bs), dh_rows,
                             rows_of(dgi, off, bs), dy);
      gemm2d(dh_rows, dy, w, 1.0);
    }
  }
  Tensor grad_w_hh = at::empty({3 * H, H}, w_hh.dtype(), w_hh.device());
  gemm2d(grad_w_hh, dgh.transpose(0, 1), ws.narrow(1, 4 * H, H), 0.0);
  Tensor grad_b_hh;
  if (has_bias) {
    // the column sums of dgh, as a (1, N) @ (N, 3H) product
    grad_b_hh = at::empty({1, 3 * H}, w_hh.dtype(), w_hh.device());
    gemm2d(grad_b_hh, at::full({1, s.rows}, Scalar(1.0), w_hh.dtype(), w_hh.device()), dgh, 0.0);
    grad_b_hh = grad_b_hh.view({3 * H});
  }
  return {dgi, grad_w_hh, grad_b_hh, dh};
}

}  // namespace ember::at::native
