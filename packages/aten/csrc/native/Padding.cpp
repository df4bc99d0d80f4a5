// constant_pad_nd: pad (or, with negative amounts, crop) the last dims with a value.
// nn.functional.pad's reflect / replicate / circular modes have their own kernels.
#include <ember/aten/TensorIterator.h>

namespace ember::at::native {

// pad = (last dim left, last dim right, second-to-last left, ...), as PyTorch's.
Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  const int64_t npad = static_cast<int64_t>(pad.size());
  EMBER_CHECK(npad % 2 == 0, "Length of pad must be even but instead it equals ", npad);
  EMBER_CHECK(npad / 2 <= self.dim(),
              "Length of pad should be no more than twice the number of dimensions of the "
              "input. Pad length is ",
              npad, " while the input has ", self.dim(), " dimensions.");
  const int64_t first = self.dim() - npad / 2;  // first padded dim
  DimVector shape(self.sizes());
  // the overlap of input and output along each padded dim: input start, output start, length
  DimVector in_start(self.dim(), 0), out_start(self.dim(), 0), length(self.sizes());
  bool empty_overlap = false;
  for (int64_t d = first; d < self.dim(); ++d) {
    const int64_t k = 2 * (self.dim() - 1 - d);
    const int64_t lo = pad[k], hi = pad[k + 1];
    const int64_t n = self.size(d);
    int64_t new_n;
    EMBER_CHECK(!__builtin_add_overflow(n, lo, &new_n) && !__builtin_add_overflow(new_n, hi, &new_n),
                "constant_pad_nd: padding ", lo, " and ", hi, " of dimension ", d, " overflows int64");
    EMBER_CHECK(new_n >= 0, "The input size ", n, ", plus negative padding ", lo, " and ", hi,
                " resulted in a negative output size, which is invalid. Check dimension ", d, " of your input.");
    shape[d] = new_n;
    in_start[d] = std::max<int64_t>(-lo, 0);
    out_start[d] = std::max<int64_t>(lo, 0);
    length[d] = n + std::min<int64_t>(lo, 0) + std::min<int64_t>(hi, 0);
    if (length[d] <= 0) empty_overlap = true;
  }
  Tensor out = empty(shape, self.dtype(), self.device());
  if (out.numel() == 0) return out;
  out.fill_(value);  // then the input over the part of the output it covers
  if (empty_overlap) return out;
  Tensor dst = out, src = self;
  for (int64_t d = first; d < self.dim(); ++d) {
    dst = dst.narrow(d, out_start[d], length[d]);
    src = src.narrow(d, in_start[d], length[d]);
  }
  dst.copy_(src);
  return out;
}

}  // namespace ember::at::native
