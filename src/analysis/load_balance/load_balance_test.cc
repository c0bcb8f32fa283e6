// Load balance on a hand-built two-rank trace (every figure worked out by
// hand in the comments) and on the two-rank Kineto fixture
// test/fixtures/multirank against its README's hand sums.

#include "analysis/load_balance/load_balance.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "encoders/json_encoder.h"
#include "model_inspector/session.h"

namespace mi::analysis {
namespace {

struct TwoRanks {
  StringPool pool;
  Trace trace{&pool};
  SourceId rank0, rank1;

  TwoRanks() {
    rank0 = Source("rank0.json", 0);
    rank1 = Source("rank1.json", 1);
    // Rank 0, one device, two streams, and a host thread.
    TrackId r0s7 = Stream(rank0, 0, 7);
    TrackId r0s8 = Stream(rank0, 0, 8);
    TrackInfo host;
    host.kind = TrackKind::kHostThread;
    host.source = rank0;
    TrackId r0h = trace.AddTrack(host);
    Task(r0s7, TaskKind::kCompute, "k_gemm", 0, 100);
    Task(r0s7, TaskKind::kCompute, "k_relu", 150, 100);
    Task(r0s7, TaskKind::kCompute, "ncclKernel_AllReduce_Sum", 250, 50);
    Task(r0s8, TaskKind::kDataMovement, "Memcpy HtoD", 50, 70);
    Task(r0h, TaskKind::kHostOp, "aten::mm", 0, 40);  // not execution work
    // Rank 1, two devices.
    TrackId r1d0 = Stream(rank1, 0, 7);
    TrackId r1d1 = Stream(rank1, 1, 7);
    Task(r1d0, TaskKind::kCompute, "k_gemm", 10, 180);
    Task(r1d0, TaskKind::kSync, "Event wait", 190, 10);
    Task(r1d0, TaskKind::kCompute, "hcom_allReduce_1", 200, 100);
    Task(r1d1, TaskKind::kCompute, "k_conv", 20, 60);
    Task(r1d1, TaskKind::kCompute, "AllGather", 100, 30, "communication");
  }

  SourceId Source(std::string_view key, int32_t rank) {
    SourceId s = trace.FindOrAddSource(pool.Intern(key));
    trace.mutable_source(s).rank = rank;
    return s;
  }
  TrackId Stream(SourceId source, int32_t device, int64_t stream) {
    TrackInfo info;
    info.kind = TrackKind::kDeviceStream;
    info.source = source;
    info.device = device;
    info.stream = stream;
    return trace.AddTrack(info);
  }
  void Task(TrackId track, TaskKind kind, std::string_view name, int64_t start,
            int64_t duration, std::string_view category = "") {
    TaskRow row;
    row.kind = kind;
    row.name = pool.Intern(name);
    row.category = pool.Intern(category);
    row.track = track;
    row.start_ns = start;
    row.duration_ns = duration;
    trace.AddTask(row);
  }
};

void ExpectTimes(const LoadBalanceTimes& t, uint64_t tasks, int64_t busy,
                 int64_t compute, int64_t communication, int64_t copies,
                 int64_t sync, int64_t span, int64_t idle) {
  EXPECT_EQ(t.tasks, tasks);
  EXPECT_EQ(t.busy_ns, busy);
  EXPECT_EQ(t.compute_ns, compute);
  EXPECT_EQ(t.communication_ns, communication);
  EXPECT_EQ(t.data_movement_ns, copies);
  EXPECT_EQ(t.sync_ns, sync);
  EXPECT_EQ(t.span_ns, span);
  EXPECT_EQ(t.idle_ns, idle);
}

TEST(LoadBalanceTest, HandBuiltTwoRanks) {
  TwoRanks run;
  LoadBalanceResult r = ComputeLoadBalance(run.trace);
  ASSERT_EQ(r.sources.size(), 2u);
  // Rank 0: busy [0,100) u [50,120) u [150,250) u [250,300) = [0,120) +
  // [150,300) = 120 + 150 = 270; compute (gemm, relu) 100 + 100 = 200;
  // the NCCL kernel 50; the copy 70; span 0..300 = 300, idle 30. The host
  // op is not execution work. One device, two streams.
  const LoadBalanceSource& r0 = r.sources[0];
  EXPECT_EQ(r0.name, "rank 0");
  EXPECT_EQ(r0.rank, 0);
  EXPECT_EQ(r0.devices, 1u);
  ExpectTimes(r0.times, 4, 270, 200, 50, 70, 0, 300, 30);
  // Rank 1: busy [10,190) u [200,300) u [20,80) u [100,130) = 180 + 100 =
  // 280 (the wait [190,200) is not work); compute gemm [10,190) u conv
  // [20,80) = 180; communication hcom_ [200,300) + the "communication"
  // category task [100,130) = 130; the wait 10; span 10..300 = 290, idle
  // 290 - 280 = 10 (the stream waited).
  const LoadBalanceSource& r1 = r.sources[1];
  EXPECT_EQ(r1.name, "rank 1");
  EXPECT_EQ(r1.devices, 2u);
  ExpectTimes(r1.times, 5, 280, 180, 130, 0, 10, 290, 10);

  // Busy: 270 and 280, mean 275; rank 1 is 5 above it, 280 / 275.
  EXPECT_EQ(r.busy.max_ns, 280);
  EXPECT_EQ(r.busy.min_ns, 270);
  EXPECT_DOUBLE_EQ(r.busy.mean_ns, 275);
  EXPECT_DOUBLE_EQ(r.busy.max_over_mean, 280.0 / 275.0);
  EXPECT_EQ(r.busy.slowest_source, 1u);
  EXPECT_EQ(r.busy.slowest_name, "rank 1");
  EXPECT_DOUBLE_EQ(r.busy.slowest_over_mean_ns, 5);
  // Compute: 200 and 180, mean 190: rank 0 computed longest (rank 1's
  // extra busy time is communication).
  EXPECT_EQ(r.compute.max_ns, 200);
  EXPECT_DOUBLE_EQ(r.compute.mean_ns, 190);
  EXPECT_DOUBLE_EQ(r.compute.max_over_mean, 200.0 / 190.0);
  EXPECT_EQ(r.compute.slowest_source, 0u);
  EXPECT_DOUBLE_EQ(r.compute.slowest_over_mean_ns, 10);
  EXPECT_DOUBLE_EQ(r0.busy_over_mean, 270.0 / 275.0);
  EXPECT_DOUBLE_EQ(r1.busy_over_mean, 280.0 / 275.0);

  // Devices: rank 0's one (the source's figures), rank 1's two:
  // device 0 busy [10,190) u [200,300) = 280, compute 180, hcom_ 100,
  // wait 10, idle 10;
  // device 1 conv [20,80) + AllGather [100,130): busy 90, compute 60,
  // communication 30, span 20..130 = 110, idle 20.
  ASSERT_EQ(r.devices.size(), 3u);
  EXPECT_EQ(r.devices[0].name, "device 0");
  EXPECT_EQ(r.devices[0].streams, 2u);
  ExpectTimes(r.devices[0].times, 4, 270, 200, 50, 70, 0, 300, 30);
  EXPECT_EQ(r.devices[1].source_name, "rank 1");
  EXPECT_EQ(r.devices[1].device, 0);
  ExpectTimes(r.devices[1].times, 3, 280, 180, 100, 0, 10, 290, 10);
  EXPECT_EQ(r.devices[2].device, 1);
  ExpectTimes(r.devices[2].times, 2, 90, 60, 30, 0, 0, 110, 20);

  // One source's devices only; the sources stay all.
  LoadBalanceResult one = ComputeLoadBalance(run.trace, 1);
  EXPECT_EQ(one.sources.size(), 2u);
  ASSERT_EQ(one.devices.size(), 2u);
  EXPECT_EQ(one.devices[0].source, 1u);
}

TEST(LoadBalanceTest, WritesItsFields) {
  TwoRanks run;
  std::string json = encoders::EncodeJson(ComputeLoadBalance(run.trace));
  EXPECT_NE(json.find("{\"sources\":[{\"source\":0,\"name\":\"rank 0\","
                      "\"rank\":0,\"devices\":1,\"tasks\":4,\"busy_ns\":270,"
                      "\"compute_ns\":200,\"communication_ns\":50,"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"slowest_source\":1,\"slowest_name\":\"rank 1\","
                      "\"slowest_over_mean_ns\":5}"),
            std::string::npos)
      << json;
}

// test/fixtures/multirank/README.md, "Expected values, by hand": rank 0's
// GPU work 30 + 10 + 5 = 45 us over a span of 85 us (40 compute: mm and
// relu; 5 the copy), rank 1's 50 + 8 + 4 = 62 us over 99 us (58 compute,
// 4 the copy); no overlap, no collectives.
TEST(LoadBalanceTest, TwoRankFixture) {
  OpenOptions options;
  options.paths = {std::string(MI_SOURCE_DIR) + "/test/fixtures/multirank"};
  auto session = Session::Open(options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto result = (*session)->RunAnalysis("load_balance", {});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const auto* r = dynamic_cast<const LoadBalanceResult*>(result->get());
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->sources.size(), 2u);
  EXPECT_EQ(r->sources[0].name, "rank 0");
  ExpectTimes(r->sources[0].times, 3, 45000, 40000, 0, 5000, 0, 85000, 40000);
  EXPECT_EQ(r->sources[1].name, "rank 1");
  ExpectTimes(r->sources[1].times, 3, 62000, 58000, 0, 4000, 0, 99000, 37000);
  // Busy 45 and 62 us: mean 53.5, rank 1 8.5 us above it (62 / 53.5);
  // compute 40 and 58: mean 49, rank 1 9 us above (58 / 49).
  EXPECT_DOUBLE_EQ(r->busy.mean_ns, 53500);
  EXPECT_DOUBLE_EQ(r->busy.max_over_mean, 62.0 / 53.5);
  EXPECT_EQ(r->busy.slowest_name, "rank 1");
  EXPECT_DOUBLE_EQ(r->busy.slowest_over_mean_ns, 8500);
  EXPECT_DOUBLE_EQ(r->compute.max_over_mean, 58.0 / 49.0);
  EXPECT_DOUBLE_EQ(r->compute.slowest_over_mean_ns, 9000);
  // Both ranks ran on their GPU 0.
  ASSERT_EQ(r->devices.size(), 2u);
  EXPECT_EQ(r->devices[0].name, "GPU 0");
  EXPECT_EQ(r->devices[1].name, "GPU 0");

  auto bad = (*session)->RunAnalysis("load_balance", {{"source", "2"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("parameter 'source'"),
            std::string::npos);
}

}  // namespace
}  // namespace mi::analysis
