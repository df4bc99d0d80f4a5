#include "CUDAUtils.cuh"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include <ember/c10/Exception.h>

namespace ember::at::cuda {

unsigned int grid_size(int64_t n, int threads) {
  static const int sms = [] {
    int dev = 0, count = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      (void)cudaGetLastError();
      return 108;
    }
    return count;
  }();
  const int64_t want = ceil_div<int64_t>(std::max<int64_t>(n, 1), threads);
  return static_cast<unsigned int>(std::min<int64_t>(want, int64_t{sms} * 32));
}

namespace {

constexpr int kMaxDevices = 64;

std::mutex& error_mutex() {
  static std::mutex m;
  return m;
}
struct ErrorOp {
  std::string text;  // the op name, or the whole message with {index} / {dim} / {size}
  bool is_format;
  bool index_error;
};
std::vector<ErrorOp>& error_ops() {
  static std::vector<ErrorOp> v;
  return v;
}

int register_error_entry(const char* text, bool is_format, bool index_error) {
  std::lock_guard<std::mutex> lock(error_mutex());
  auto& ops = error_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].text == text && ops[i].is_format == is_format && ops[i].index_error == index_error) {
      return static_cast<int>(i);
    }
  }
  ops.push_back(ErrorOp{text, is_format, index_error});
  return static_cast<int>(ops.size() - 1);
}

void replace_all(std::string& s, const std::string& key, const std::string& value) {
  for (size_t p = s.find(key); p != std::string::npos; p = s.find(key, p + value.size()))
    s.replace(p, key.size(), value);
}
// host and device views of each device's slot (mapped pinned memory)
DeviceError* host_slots[kMaxDevices] = {};
DeviceError* device_slots[kMaxDevices] = {};

int resolve(int device) {
  if (device >= 0) return device;
  int d = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

}  // namespace

int register_error_op(const char* name) { return register_error_entry(name, false, true); }

int register_error_format(const char* format, bool index_error) {
  return register_error_entry(format, true, index_error);
}

DeviceError* device_error_slot(int device) {
  device = resolve(device);
  EMBER_CHECK(device < kMaxDevices, "device_error_slot: device index ", device, " too large");
  std::lock_guard<std::mutex> lock(error_mutex());
  if (!device_slots[device]) {
    c10::DeviceGuard guard(c10::Device(c10::DeviceType::CUDA, device));
    void* host = nullptr;
    EMBER_CUDA_CHECK(cudaHostAlloc(&host, sizeof(DeviceError), cudaHostAllocMapped | cudaHostAllocPortable));
    *static_cast<DeviceError*>(host) = DeviceError{};
    void* dev = nullptr;
    EMBER_CUDA_CHECK(cudaHostGetDevicePointer(&dev, host, 0));
    host_slots[device] = static_cast<DeviceError*>(host);
    device_slots[device] = static_cast<DeviceError*>(dev);
  }
  return device_slots[device];
}

void check_device_errors(int device) {
  DeviceError found{};
  {
    std::lock_guard<std::mutex> lock(error_mutex());
    const int lo = device >= 0 ? device : 0, hi = device >= 0 ? device + 1 : kMaxDevices;
    for (int d = lo; d < hi && d < kMaxDevices; ++d) {
      volatile DeviceError* s = host_slots[d];
      if (s && s->flag == 2) {
        found = DeviceError{2, s->op, s->dim, s->index, s->size};
        s->flag = 0;
        break;
      }
    }
  }
  if (found.flag == 0) return;
  ErrorOp op{"CUDA kernel", false, true};
  {
    std::lock_guard<std::mutex> lock(error_mutex());
    if (found.op >= 0 && found.op < static_cast<int>(error_ops().size())) op = error_ops()[found.op];
  }
  if (op.is_format) {
    std::string msg = op.text;
    replace_all(msg, "{index}", std::to_string(found.index));
    replace_all(msg, "{dim}", std::to_string(found.dim));
    replace_all(msg, "{size}", std::to_string(found.size));
    if (op.index_error) throw c10::IndexError(msg);
    throw c10::Error(msg);
  }
  throw c10::IndexError(c10::str(op.text, ": index ", found.index, " is out of bounds for dimension ", found.dim,
                                 " with size ", found.size));
}

}  // namespace ember::at::cuda
