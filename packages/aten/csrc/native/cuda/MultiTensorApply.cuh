#pragma once
// Multi-tensor launches (PyTorch's multi_tensor_apply, simplified): the tensors of one
// call are cut into chunks of kChunk elements; a table of per-tensor metadata and a
// table of chunks (tensor, first element) go to the device in ONE host-to-device copy,
// and block b of a single launch walks chunks b, b + gridDim.x, ... with its threads
// striding over the chunk's elements. Used by the fused optimizers and the _foreach_
// fast path.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "CUDAUtils.cuh"

namespace ember::at::native::mta {

constexpr int64_t kChunk = 65536;
constexpr int kThreads = 512;

struct Chunk {
  int64_t tensor;
  int64_t start;
};

// Chunks of tensors whose element counts are offsets[t + 1] - offsets[t].
inline std::vector<Chunk> make_chunks(const std::vector<int64_t>& offsets) {
  std::vector<Chunk> chunks;
  for (size_t t = 0; t + 1 < offsets.size(); ++t) {
    const int64_t n = offsets[t + 1] - offsets[t];
    for (int64_t s = 0; s < n; s += kChunk) chunks.push_back({static_cast<int64_t>(t), s});
  }
  return chunks;
}

inline unsigned int chunk_grid(size_t chunks) {
  return static_cast<unsigned int>(std::max<size_t>(1, std::min<size_t>(chunks, size_t{65535})));
}

// Uploads [metas][chunks] to the current device on the current stream. cudaMemcpyAsync
// from pageable memory returns once the source is staged, so the host vectors may go;
// the returned buffer may be freed when the caller returns (the caching allocator hands
// it out again only to work queued later on the same stream).
template <typename Meta>
Tensor upload_tables(const std::vector<Meta>& metas, const std::vector<Chunk>& chunks, const Meta** dm,
                     const Chunk** dc) {
  static_assert(sizeof(Meta) % alignof(Chunk) == 0, "chunk table must stay aligned");
  int dev = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&dev));
  const size_t mb = metas.size() * sizeof(Meta), cb = chunks.size() * sizeof(Chunk);
  std::vector<char> host(mb + cb);
  std::memcpy(host.data(), metas.data(), mb);
  std::memcpy(host.data() + mb, chunks.data(), cb);
  Tensor buf = at::empty({static_cast<int64_t>(host.size())}, ScalarType::Byte,
                         Device(DeviceType::CUDA, static_cast<int8_t>(dev)));
  EMBER_CUDA_CHECK(
      cudaMemcpyAsync(buf.data_ptr(), host.data(), host.size(), cudaMemcpyHostToDevice, cuda::current_stream()));
  *dm = reinterpret_cast<const Meta*>(buf.data_ptr());
  *dc = reinterpret_cast<const Chunk*>(static_cast<const char*>(buf.data_ptr()) + mb);
  return buf;
}

}  // namespace ember::at::native::mta
