// Throughput of the statistics kernel (GB/s of tensor read), per element
// type, on 16 Mi elements of normal noise (beyond the caches: memory
// bandwidth counts) and on 256 Ki float32 (1 MiB, in cache: an activation
// just written), with no NaN (the common case) and with one NaN per chunk
// (every chunk takes the counting path).

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "model_inspector/probes.h"

namespace mi {
namespace {

constexpr size_t kCount = size_t{1} << 24;

template <typename T>
std::vector<T> Noise(size_t count = kCount) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal(0.5, 2.0);
  std::vector<T> v(count);
  for (T& x : v) x = static_cast<T>(normal(rng) * 10);
  return v;
}

template <typename T, ProbeDType kType>
void BM_Stats(benchmark::State& state) {
  std::vector<T> data = Noise<T>(
      state.range(1) != 0 ? static_cast<size_t>(state.range(1)) : kCount);
  if (state.range(0) != 0) {
    for (size_t i = 0; i < data.size(); i += 2048) {
      data[i] = static_cast<T>(NAN);
    }
  }
  for (auto _ : state) {
    TensorStats s = ComputeTensorStats(data.data(), data.size(), kType);
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(data.size() * sizeof(T)));
}

void BM_StatsHalf(benchmark::State& state) {
  std::vector<uint16_t> data(kCount);
  std::mt19937 rng(7);
  for (uint16_t& x : data) x = static_cast<uint16_t>(rng() % 0x7c00u);
  for (auto _ : state) {
    TensorStats s =
        ComputeTensorStats(data.data(), data.size(), ProbeDType::kFloat16);
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(data.size() * 2));
}

// Args: NaN per chunk (0/1), element count (0: 16 Mi).
BENCHMARK(BM_Stats<float, ProbeDType::kFloat32>)
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({0, 1 << 18});
BENCHMARK(BM_Stats<double, ProbeDType::kFloat64>)->Args({0, 0});
BENCHMARK(BM_Stats<int64_t, ProbeDType::kInt64>)->Args({0, 0});
BENCHMARK(BM_Stats<int8_t, ProbeDType::kInt8>)->Args({0, 0});
BENCHMARK(BM_StatsHalf);

}  // namespace
}  // namespace mi

BENCHMARK_MAIN();
