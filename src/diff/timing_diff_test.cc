#include <gtest/gtest.h>
#include <fmt/format.h>

#include "model_inspector/diff.h"

namespace mi {
namespace {
const std::string kSrc = MI_SOURCE_DIR;

void Print(const RunDigest& d) {
  fmt::print("runs_from={} run_count={}\n", d.runs_from, d.run_count);
  auto ser = [](const DigestSeries& s) {
    fmt::print("  {}: run={} over={} count={}\n", s.key, fmt::join(s.run_ns, ","),
               fmt::join(s.overlapped_ns, ","), fmt::join(s.count, ","));
  };
  ser(d.total);
  for (auto& s : d.streams) ser(s);
  for (auto& s : d.op_types) ser(s);
  for (auto& p : d.stream_pairs) fmt::print("  pair {} {} {}\n", p.stream_a, p.stream_b, fmt::join(p.overlap_ns, ","));
  fmt::print("  unlinked {}\n", d.unlinked_tasks.size());
}

TEST(Explore, Print) {
  for (std::string f : {"/test/fixtures/samples/traces/kineto/tracelens/h100__gaunernst_bert-small-uncased__1016001.json.gz",
                        "/test/fixtures/samples/traces/kineto/tracelens/inference__sglang_decode__sglang_Qwen3-8B_decode.json.gz",
                        "/test/fixtures/transformer/ort_all/onnxruntime_profile.json",
                        "/test/fixtures/samples/traces/kineto/tb_plugin/samples__resnet50_num_workers_0__worker0.1623143566756.pt.trace.json.gz"}) {
    DiffInputOptions o;
    o.paths = {kSrc + f};
    auto d = LoadDiffInput(o);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    Print(*d);
  }
}
}  // namespace
}  // namespace mi
