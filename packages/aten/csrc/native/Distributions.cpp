// Random operators: argument checks as PyTorch's, the generator's counters reserved
// for each draw, then the kernels of cpu/DistributionsKernel.cpp (whose comment block
// is the stream layout). rand/randn/randint and the *_like factories allocate and call
// the in-place ops; multinomial is written here (plain loops over rows; for a CUDA input
// it runs on the host with the CUDA generator's counters and copies the result over).
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <ember/aten/Parallel.h>
#include <ember/aten/TensorIterator.h>

#include "Distributions.h"
#include "TensorFactories.h"  // pin_memory=

namespace ember::at::native {

DEFINE_DISPATCH(uniform_stub);
DEFINE_DISPATCH(normal_stub);
DEFINE_DISPATCH(random_from_to_stub);
DEFINE_DISPATCH(exponential_stub);
DEFINE_DISPATCH(cauchy_stub);
DEFINE_DISPATCH(log_normal_stub);
DEFINE_DISPATCH(geometric_stub);
DEFINE_DISPATCH(bernoulli_stub);

namespace {

// Reserves the counters of a draw of n values (V per block) and returns where they start.
PhiloxDraw reserve(Generator& gen, int64_t n, int64_t V) {
  if (n == 0) return {};
  const auto [seed, offset] = gen.philox_reserve(static_cast<uint64_t>(divup(n, V)));
  return {seed, offset};
}

void check_no_internal_overlap(const Tensor& self, const char* op) {
  for (int64_t d = 0; d < self.dim(); ++d) {
    EMBER_CHECK(!(self.size(d) > 1 && self.stride(d) == 0), op,
                ": unsupported operation: more than one element of the written-to tensor refers to a single memory "
                "location. Please clone() the tensor before performing the operation.");
  }
}

// fill(t) writes the draw into a contiguous t: self itself, or a temporary copied into
// self (so value i is always self's i-th element in row-major order).
template <typename F>
void fill_rowmajor(const Tensor& self, const char* op, const F& fill) {
  check_no_internal_overlap(self, op);
  if (self.numel() == 0) return;
  if (self.is_contiguous()) {
    fill(self);
    return;
  }
  Tensor tmp = at::empty(self.sizes(), self.dtype(), self.device());
  fill(tmp);
  self.copy_(tmp);
}

// PyTorch's dtype-dispatch error: "normal_kernel_cpu" not implemented for 'Long'.
void check_floating(const Tensor& self, const char* kernel_name) {
  EMBER_CHECK(isFloatingType(self.dtype()), "\"", kernel_name, "\" not implemented for '", c10::toString(self.dtype()),
              "'");
}

// lowest and max of a floating dtype, as doubles.
std::pair<double, double> float_range(ScalarType t) {
  switch (t) {
    case ScalarType::Half:
      return {-65504.0, 65504.0};
    case ScalarType::BFloat16:
      return {-3.3895313892515355e38, 3.3895313892515355e38};
    case ScalarType::Float:
      return {-static_cast<double>(std::numeric_limits<float>::max()),
              static_cast<double>(std::numeric_limits<float>::max())};
    default:
      return {std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max()};
  }
}

// min and max of an integral (or bool) dtype.
std::pair<int64_t, int64_t> int_range(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return {0, 1};
    case ScalarType::Byte:
      return {0, 255};
    case ScalarType::Char:
      return {-128, 127};
    case ScalarType::Short:
      return {-32768, 32767};
    case ScalarType::Int:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    default:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

// Digits of a floating dtype's significand (integers up to 2^digits are exact).
int float_digits(ScalarType t) {
  switch (t) {
    case ScalarType::Half:
      return 11;
    case ScalarType::BFloat16:
      return 8;
    case ScalarType::Float:
      return 24;
    default:
      return 53;
  }
}

void check_from_to_in_range(int64_t from, int64_t to_inc, ScalarType t) {
  const char* name = c10::toPythonName(t);
  if (isFloatingType(t)) {
    const auto [lo, hi] = float_range(t);
    EMBER_CHECK(static_cast<double>(from) >= lo && static_cast<double>(from) <= hi, "from is out of bounds for ", name);
    EMBER_CHECK(static_cast<double>(to_inc) >= lo && static_cast<double>(to_inc) <= hi, "to - 1 is out of bounds for ",
                name);
  } else {
    const auto [lo, hi] = int_range(t);
    EMBER_CHECK(from >= lo && from <= hi, "from is out of bounds for ", name);
    EMBER_CHECK(to_inc >= lo && to_inc <= hi, "to - 1 is out of bounds for ", name);
  }
}

void check_sizes(IntArrayRef size) {
  for (int64_t s : size) EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", size);
}

Device device_or_cpu(const std::optional<Device>& d) { return d ? *d : Device(DeviceType::CPU); }

// The result of a factory: `out` resized to `size`, or a new tensor.
Tensor factory_result(IntArrayRef size, ScalarType dtype, const std::optional<Device>& device, const Tensor& out,
                      std::optional<bool> pin_memory = std::nullopt) {
  check_sizes(size);
  if (out.defined()) {
    resize_output(out, size);
    return out;
  }
  return factory_empty(size, dtype, device_or_cpu(device), pin_memory);
}

// The result of a *_like factory.
Tensor like_result(const Tensor& self, std::optional<ScalarType> dtype, const std::optional<Device>& device,
                   std::optional<bool> pin_memory, const std::optional<MemoryFormat>& memory_format) {
  const ScalarType dt = dtype.value_or(self.dtype());
  const MemoryFormat fmt = memory_format.value_or(MemoryFormat::Preserve);
  if (pinned_requested(pin_memory, device.value_or(self.device()))) {
    return empty_strided_pinned(self.sizes(), like_strides(self, fmt), dt);
  }
  if (device && *device != self.device()) {
    Tensor t = at::empty(self.sizes(), dt, *device);
    return fmt == MemoryFormat::ChannelsLast || fmt == MemoryFormat::ChannelsLast3d ? t.contiguous(fmt) : t;
  }
  return at::empty_like(self, dt, fmt);
}

// Output of normal(mean, std) given as tensors: `out` resized, or a new contiguous tensor.
Tensor normal_result(IntArrayRef shape, const Tensor& like, const Tensor& out) {
  if (out.defined()) {
    check_same_device("normal", out, like);
    resize_output(out, shape);
    return out;
  }
  return at::empty(shape, like.dtype(), like.device());
}

// A float64 CPU copy of t for checking its values on the host.
Tensor host_double(const Tensor& t) {
  const Tensor c = t.is_cpu() ? t : t.to(Device(DeviceType::CPU));
  return c.to(ScalarType::Double).contiguous();
}

void check_std_tensor(const Tensor& std_) {
  check_floating(std_, "normal_kernel_cpu");
  const Tensor s = host_double(std_);
  const double* p = s.data_ptr<double>();
  for (int64_t i = 0; i < s.numel(); ++i) EMBER_CHECK(p[i] >= 0.0, "normal expects all elements of std >= 0.0");
}

// mean + std * z into result, mean/std either tensors (broadcast to result) or scalars.
void normal_fill(const Tensor& result, const Tensor& mean_t, double mean, const Tensor& std_t, double std_,
                 const std::optional<Generator>& generator) {
  check_floating(result, "normal_kernel_cpu");
  Generator gen = get_generator_or_default(generator, result.device());
  const auto dense = [&](const Tensor& t) {
    return t.defined() ? t.to(result.dtype()).expand(result.sizes()).contiguous() : Tensor();
  };
  const Tensor m = dense(mean_t), s = dense(std_t);
  fill_rowmajor(result, "normal_", [&](const Tensor& t) {
    normal_stub(t.device().type, t, m, mean, s, std_, reserve(gen, t.numel(), real_values_per_block(t.dtype())));
  });
}

// random_ over [base, base + range) (range 0: 2^64).
const Tensor& random_fill(const Tensor& self, uint64_t range, int64_t base, const std::optional<Generator>& generator) {
  Generator gen = get_generator_or_default(generator, self.device());
  fill_rowmajor(self, "random_", [&](const Tensor& t) {
    random_from_to_stub(t.device().type, t, range, base, reserve(gen, t.numel(), int_values_per_block(range)));
  });
  return self;
}

}  // namespace

// ============================================================ in-place distributions

Tensor uniform_(const Tensor& self, double from, double to, const std::optional<Generator>& generator) {
  check_floating(self, "check_uniform_bounds");
  const auto [lo, hi] = float_range(self.dtype());
  const char* name = c10::toPythonName(self.dtype());
  EMBER_CHECK(from >= lo && from <= hi, "from is out of bounds for ", name);
  EMBER_CHECK(to >= lo && to <= hi, "to is out of bounds for ", name);
  EMBER_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  EMBER_CHECK(to - from <= hi, "uniform_ expects to-from <= std::numeric_limits<", c10::toString(self.dtype()),
              ">::max(), but found to=", to, " and from=", from, " which result in to-from to exceed the limit");
  Generator gen = get_generator_or_default(generator, self.device());
  fill_rowmajor(self, "uniform_", [&](const Tensor& t) {
    uniform_stub(t.device().type, t, from, to, reserve(gen, t.numel(), real_values_per_block(t.dtype())));
  });
  return self;
}

Tensor normal_(const Tensor& self, double mean, double std, const std::optional<Generator>& generator) {
  check_floating(self, "normal_kernel_cpu");
  EMBER_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  normal_fill(self, Tensor(), mean, Tensor(), std, generator);
  return self;
}

Tensor log_normal_(const Tensor& self, double mean, double std, const std::optional<Generator>& generator) {
  EMBER_CHECK(std > 0.0, "log_normal_ expects std > 0.0, but found std=", std);
  check_floating(self, "log_normal_cpu");
  Generator gen = get_generator_or_default(generator, self.device());
  fill_rowmajor(self, "log_normal_", [&](const Tensor& t) {
    log_normal_stub(t.device().type, t, mean, std, reserve(gen, t.numel(), real_values_per_block(t.dtype())));
  });
  return self;
}

Tensor exponential_(const Tensor& self, double lambd, const std::optional<Generator>& generator) {
  EMBER_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  check_floating(self, "exponential_cpu");
  Generator gen = get_generator_or_default(generator, self.device());
  fill_rowmajor(self, "exponential_", [&](const Tensor& t) {
    exponential_stub(t.device().type, t, lambd, reserve(gen, t.numel(), real_values_per_block(t.dtype())));
  });
  return self;
}

Tensor cauchy_(const Tensor& self, double median, double sigma, const std::optional<Generator>& generator) {
  EMBER_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  EMBER_CHECK(isFloatingType(self.dtype()),
              "Cauchy distribution is a continuous probability distribution. dtype must be a floating point but you "
              "specified ",
              c10::toPythonName(self.dtype()));
  Generator gen = get_generator_or_default(generator, self.device());
  fill_rowmajor(self, "cauchy_", [&](const Tensor& t) {
    cauchy_stub(t.device().type, t, median, sigma, reserve(gen, t.numel(), real_values_per_block(t.dtype())));
  });
  return self;
}

Tensor geometric_(const Tensor& self, double p, const std::optional<Generator>& generator) {
  EMBER_CHECK(0 < p && p < 1, "geometric_ expects p to be in (0, 1), but got p=", p);
  EMBER_CHECK(self.dtype() != ScalarType::Bool, "\"geometric_cpu\" not implemented for 'Bool'");
  Generator gen = get_generator_or_default(generator, self.device());
  const double log1m_p = std::log1p(-p);
  fill_rowmajor(self, "geometric_", [&](const Tensor& t) {
    geometric_stub(t.device().type, t, log1m_p, reserve(gen, t.numel(), kDoubleValuesPerBlock));
  });
  return self;
}

// random_(): [0, 2^digits] for floating dtypes, [0, max] for integers, {0, 1} for bool.
Tensor random_(const Tensor& self, const std::optional<Generator>& generator) {
  const ScalarType t = self.dtype();
  uint64_t range;
  if (isFloatingType(t))
    range = (uint64_t{1} << float_digits(t)) + 1;
  else
    range = static_cast<uint64_t>(int_range(t).second) + 1;
  return random_fill(self, range, 0, generator);
}

// random_(from, to): [from, to); to=None: [from, the largest value the dtype holds exactly].
Tensor random_from(const Tensor& self, int64_t from, std::optional<int64_t> to,
                   const std::optional<Generator>& generator) {
  const ScalarType t = self.dtype();
  if (to) {
    EMBER_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", *to);
    check_from_to_in_range(from, *to - 1, t);
    return random_fill(self, static_cast<uint64_t>(*to) - static_cast<uint64_t>(from), from, generator);
  }
  if (from != std::numeric_limits<int64_t>::min()) {
    int64_t to_inc;
    if (isFloatingType(t)) {
      to_inc = int64_t{1} << float_digits(t);
      EMBER_CHECK(from < to_inc,
                  "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to dtype, but "
                  "got from=",
                  from, " > to_inc=", to_inc);
    } else {
      to_inc = int_range(t).second;
    }
    check_from_to_in_range(from, to_inc, t);
    return random_fill(self, static_cast<uint64_t>(to_inc) - static_cast<uint64_t>(from) + 1, from, generator);
  }
  // [int64 min, int64 max]: all 2^64 values.
  EMBER_CHECK(t == ScalarType::Long || t == ScalarType::Double || t == ScalarType::Float || t == ScalarType::BFloat16,
              "random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16");
  return random_fill(self, 0, from, generator);
}

Tensor random_to(const Tensor& self, int64_t to, const std::optional<Generator>& generator) {
  return random_from(self, 0, to, generator);
}

// ============================================================ bernoulli

Tensor bernoulli_tensor_(const Tensor& self, const Tensor& p, const std::optional<Generator>& generator) {
  EMBER_CHECK(isFloatingType(p.dtype()), "\"bernoulli_tensor_cpu_p_\" not implemented for '", c10::toString(p.dtype()),
              "'");
  check_same_device("bernoulli_", self, p);
  Generator gen = get_generator_or_default(generator, self.device());
  Tensor pd = p.to(ScalarType::Double).expand(self.sizes()).contiguous();
  if (pd.is_alias_of(self)) pd = pd.clone();
  const Tensor host = host_double(pd);
  const double* pp = host.data_ptr<double>();
  for (int64_t i = 0; i < host.numel(); ++i) {
    EMBER_CHECK(pp[i] >= 0.0 && pp[i] <= 1.0, "Expected p_in >= 0 && p_in <= 1 to be true, but got p=", pp[i]);
  }
  fill_rowmajor(self, "bernoulli_", [&](const Tensor& t) {
    bernoulli_stub(t.device().type, t, pd, 0.0, reserve(gen, t.numel(), kDoubleValuesPerBlock));
  });
  return self;
}

Tensor bernoulli_scalar_(const Tensor& self, double p, const std::optional<Generator>& generator) {
  EMBER_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  Generator gen = get_generator_or_default(generator, self.device());
  fill_rowmajor(self, "bernoulli_", [&](const Tensor& t) {
    bernoulli_stub(t.device().type, t, Tensor(), p, reserve(gen, t.numel(), kDoubleValuesPerBlock));
  });
  return self;
}

// bernoulli(input): input holds the probabilities; the result has its dtype.
Tensor bernoulli_out(const Tensor& self, const std::optional<Generator>& generator, const Tensor& out) {
  Tensor result = out;
  if (result.defined()) {
    check_same_device("bernoulli", result, self);
    resize_output(result, self.sizes());
  } else {
    result = at::empty(self.sizes(), self.dtype(), self.device());
  }
  bernoulli_tensor_(result, self, generator);
  return result;
}

Tensor bernoulli_p(const Tensor& self, double p, const std::optional<Generator>& generator) {
  Tensor result = at::empty(self.sizes(), self.dtype(), self.device());
  bernoulli_scalar_(result, p, generator);
  return result;
}

// ============================================================ normal

Tensor normal_Tensor_float_out(const Tensor& mean, double std, const std::optional<Generator>& generator,
                               const Tensor& out) {
  EMBER_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  Tensor result = normal_result(mean.sizes(), mean, out);
  normal_fill(result, mean, 0.0, Tensor(), std, generator);
  return result;
}

Tensor normal_float_Tensor_out(double mean, const Tensor& std, const std::optional<Generator>& generator,
                               const Tensor& out) {
  check_std_tensor(std);
  Tensor result = normal_result(std.sizes(), std, out);
  normal_fill(result, Tensor(), mean, std, 0.0, generator);
  return result;
}

Tensor normal_Tensor_Tensor_out(const Tensor& mean, const Tensor& std, const std::optional<Generator>& generator,
                                const Tensor& out) {
  check_std_tensor(std);
  check_same_device("normal", mean, std);
  const DimVector shape = infer_size(mean.sizes(), std.sizes(), "normal");
  Tensor result = normal_result(shape, mean, out);
  normal_fill(result, mean, 0.0, std, 0.0, generator);
  return result;
}

Tensor normal_float_float(double mean, double std, IntArrayRef size, const std::optional<Generator>& generator,
                          std::optional<ScalarType> dtype, std::optional<Device> device,
                          std::optional<bool> pin_memory) {
  EMBER_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  Tensor result = factory_result(size, dtype.value_or(get_default_dtype()), device, Tensor(), pin_memory);
  normal_fill(result, Tensor(), mean, Tensor(), std, generator);
  return result;
}

Tensor normal_float_float_out(double mean, double std, IntArrayRef size, const std::optional<Generator>& generator,
                              const Tensor& out) {
  EMBER_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  Tensor result = factory_result(size, out.dtype(), std::nullopt, out);
  normal_fill(result, Tensor(), mean, Tensor(), std, generator);
  return result;
}

// ============================================================ factories

Tensor rand(IntArrayRef size, const std::optional<Generator>& generator, std::optional<ScalarType> dtype,
            std::optional<Device> device, std::optional<bool> pin_memory) {
  Tensor result = factory_result(size, dtype.value_or(get_default_dtype()), device, Tensor(), pin_memory);
  return uniform_(result, 0.0, 1.0, generator);
}

Tensor rand_out(IntArrayRef size, const std::optional<Generator>& generator, const Tensor& out) {
  Tensor result = factory_result(size, out.dtype(), std::nullopt, out);
  return uniform_(result, 0.0, 1.0, generator);
}

Tensor randn(IntArrayRef size, const std::optional<Generator>& generator, std::optional<ScalarType> dtype,
             std::optional<Device> device, std::optional<bool> pin_memory) {
  Tensor result = factory_result(size, dtype.value_or(get_default_dtype()), device, Tensor(), pin_memory);
  return normal_(result, 0.0, 1.0, generator);
}

Tensor randn_out(IntArrayRef size, const std::optional<Generator>& generator, const Tensor& out) {
  Tensor result = factory_result(size, out.dtype(), std::nullopt, out);
  return normal_(result, 0.0, 1.0, generator);
}

Tensor randint_low(int64_t low, int64_t high, IntArrayRef size, const std::optional<Generator>& generator,
                   std::optional<ScalarType> dtype, std::optional<Device> device, std::optional<bool> pin_memory) {
  Tensor result = factory_result(size, dtype.value_or(ScalarType::Long), device, Tensor(), pin_memory);
  return random_from(result, low, high, generator);
}

Tensor randint_low_out(int64_t low, int64_t high, IntArrayRef size, const std::optional<Generator>& generator,
                       const Tensor& out) {
  return random_from(factory_result(size, out.dtype(), std::nullopt, out), low, high, generator);
}

Tensor randint(int64_t high, IntArrayRef size, const std::optional<Generator>& generator,
               std::optional<ScalarType> dtype, std::optional<Device> device, std::optional<bool> pin_memory) {
  return randint_low(0, high, size, generator, dtype, device, pin_memory);
}

Tensor randint_out(int64_t high, IntArrayRef size, const std::optional<Generator>& generator, const Tensor& out) {
  return randint_low_out(0, high, size, generator, out);
}

Tensor rand_like(const Tensor& self, const std::optional<Generator>& generator, std::optional<ScalarType> dtype,
                 std::optional<Device> device, std::optional<bool> pin_memory,
                 std::optional<MemoryFormat> memory_format) {
  return uniform_(like_result(self, dtype, device, pin_memory, memory_format), 0.0, 1.0, generator);
}

Tensor randn_like(const Tensor& self, const std::optional<Generator>& generator, std::optional<ScalarType> dtype,
                  std::optional<Device> device, std::optional<bool> pin_memory,
                  std::optional<MemoryFormat> memory_format) {
  return normal_(like_result(self, dtype, device, pin_memory, memory_format), 0.0, 1.0, generator);
}

Tensor randint_like_low_dtype(const Tensor& self, int64_t low, int64_t high, const std::optional<Generator>& generator,
                              std::optional<ScalarType> dtype, std::optional<Device> device,
                              std::optional<bool> pin_memory, std::optional<MemoryFormat> memory_format) {
  return random_from(like_result(self, dtype, device, pin_memory, memory_format), low, high, generator);
}

Tensor randint_like(const Tensor& self, int64_t high, const std::optional<Generator>& generator,
                    std::optional<ScalarType> dtype, std::optional<Device> device, std::optional<bool> pin_memory,
                    std::optional<MemoryFormat> memory_format) {
  return randint_like_low_dtype(self, 0, high, generator, dtype, device, pin_memory, memory_format);
}

// ============================================================ multinomial

namespace {

// The exponential race (without replacement, or one sample): category j of a row gets
// the key p_j / E_j, E_j ~ Exp(1); the num_samples largest keys, in order, are the draw.
void multinomial_race(const double* p, int64_t rows, int64_t K, int64_t S, PhiloxDraw d, int64_t* out) {
  parallel_for(0, rows, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(K, 1)), [&](int64_t r0, int64_t r1) {
    std::vector<std::pair<double, int64_t>> keys(static_cast<size_t>(K));
    for (int64_t r = r0; r < r1; ++r) {
      for (int64_t j = 0; j < K; ++j) {
        const int64_t i = r * K + j;  // value index of the draw
        const PhiloxBlock b = philox4x32_10(d.seed, d.offset + static_cast<uint64_t>(i / 2));
        const int l = static_cast<int>(i % 2);
        const double e = -dist::log_d(1.0 - uniform_double(b.x[2 * l], b.x[2 * l + 1]));
        const double pj = p[r * K + j];
        keys[j] = {pj > 0.0 ? pj / e : -1.0, j};
      }
      std::partial_sort(keys.begin(), keys.begin() + S, keys.end(), [](const auto& a, const auto& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
      });
      for (int64_t s = 0; s < S; ++s) out[r * S + s] = keys[s].second;
    }
  });
}

// With replacement: inverse CDF by binary search.
void multinomial_with_replacement(const double* p, int64_t rows, int64_t K, int64_t S, PhiloxDraw d, int64_t* out) {
  parallel_for(0, rows, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(K + S, 1)), [&](int64_t r0, int64_t r1) {
    std::vector<double> cdf(static_cast<size_t>(K));
    for (int64_t r = r0; r < r1; ++r) {
      double sum = 0.0;
      int64_t last = 0;
      for (int64_t j = 0; j < K; ++j) {
        sum += p[r * K + j];
        cdf[j] = sum;
        if (p[r * K + j] > 0.0) last = j;
      }
      for (int64_t j = 0; j < K; ++j) cdf[j] = j >= last ? 1.0 : cdf[j] / sum;
      for (int64_t s = 0; s < S; ++s) {
        const int64_t i = r * S + s;
        const PhiloxBlock b = philox4x32_10(d.seed, d.offset + static_cast<uint64_t>(i / 2));
        const int l = static_cast<int>(i % 2);
        const double u = uniform_double(b.x[2 * l], b.x[2 * l + 1]);
        out[r * S + s] = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
      }
    }
  });
}

}  // namespace

Tensor multinomial_out(const Tensor& self, int64_t num_samples, bool replacement,
                       const std::optional<Generator>& generator, const Tensor& out) {
  if (out.defined()) {
    EMBER_CHECK(out.device() == self.device(), "multinomial arguments must have the same device");
  }
  EMBER_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim");
  EMBER_CHECK(isFloatingType(self.dtype()),
              "multinomial only supports floating-point dtypes for input, got: ", c10::toString(self.dtype()));
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == ScalarType::Long,
                "multinomial expects Long tensor out, got: ", c10::toString(out.dtype()));
  }
  EMBER_CHECK(num_samples > 0, "cannot sample n_sample <= 0 samples");
  const int64_t K = self.size(-1);
  EMBER_CHECK(replacement || num_samples <= K,
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  EMBER_CHECK(K <= (int64_t{1} << 24), "number of categories cannot exceed 2^24");
  const int64_t rows = self.dim() == 1 ? 1 : self.size(0);
  const DimVector shape = self.dim() == 1 ? DimVector{num_samples} : DimVector{rows, num_samples};
  Tensor result = out;
  if (result.defined())
    resize_output(result, shape);
  else
    result = at::empty(shape, ScalarType::Long, self.device());
  Generator gen = get_generator_or_default(generator, self.device());
  if (result.numel() == 0) return result;

  // Drawn on the host from the generator of self's device (a CUDA generator's counters
  // give the numbers the CPU one would): the result is copied to the device.
  const Tensor pt = host_double(self);
  const double* p = pt.data_ptr<double>();
  const bool race = !replacement || num_samples == 1;
  if (race) {
    bool valid = true;
    for (int64_t i = 0; i < rows * K; ++i) valid = valid && p[i] >= 0.0 && p[i] < INFINITY;
    EMBER_CHECK(valid, "probability tensor contains either `inf`, `nan` or element < 0");
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0.0;
      for (int64_t j = 0; j < K; ++j) sum += p[r * K + j];
      EMBER_CHECK(sum > 0.0, "invalid multinomial distribution (sum of probabilities <= 0)");
    }
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0.0;
      for (int64_t j = 0; j < K; ++j) {
        const double v = p[r * K + j];
        EMBER_CHECK(v >= 0.0, "invalid multinomial distribution (encountering probability entry < 0)");
        EMBER_CHECK(std::isfinite(v),
                    "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
        sum += v;
      }
      EMBER_CHECK(sum > 0.0, "invalid multinomial distribution (sum of probabilities <= 0)");
    }
  }
  Tensor dst = result.is_cpu() && result.is_contiguous() ? result : at::empty(shape, ScalarType::Long);
  int64_t* o = dst.data_ptr<int64_t>();
  if (race) {
    multinomial_race(p, rows, K, num_samples, reserve(gen, rows * K, kDoubleValuesPerBlock), o);
  } else {
    multinomial_with_replacement(p, rows, K, num_samples, reserve(gen, rows * num_samples, kDoubleValuesPerBlock), o);
  }
  if (!dst.is_same(result)) result.copy_(dst);
  return result;
}

}  // namespace ember::at::native
