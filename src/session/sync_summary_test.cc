// Syncs and waits are not work: two hand-checked fragments read through the
// whole pipeline (importer, linker, summary), with the expected figures
// worked out by hand in the comments (test/fixtures/sync/README.md draws
// both timelines).

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "model_inspector/session.h"

namespace mi {
namespace {

const std::string kDir = std::string(MI_SOURCE_DIR) + "/test/fixtures/sync/";

std::unique_ptr<Session> OpenFixture(const std::string& path) {
  OpenOptions options;
  options.paths = {kDir + path};
  auto session = Session::Open(options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(*session) : nullptr;
}

std::map<std::string, const OpTypeRow*> ByOpType(const SummaryReport& r) {
  std::map<std::string, const OpTypeRow*> rows;
  for (const OpTypeRow& row : r.op_types) rows[row.op_type] = &row;
  return rows;
}

// One aten::mm (External id 10) launches two sgemm kernels (40 us and
// 60 us) and a memset (5 us), records an event and synchronises on it three
// times; Kineto's cuda_sync "Event Sync" records (30, 20 and 10 us) carry
// the correlation ids of the cudaEventSynchronize calls inside aten::mm.
// Stream 7 of GPU 0:
//   50 [sgemm 40] 90 . 95 [memset 5] 100 [sgemm 60] 160 [sync 30] 190 .
//   200 [sync 20] 220 . 230 [sync 10] 240
TEST(SyncSummaryTest, KinetoEventSyncIsNotTheLaunchingOpsWork) {
  auto session = OpenFixture("kineto_event_sync.pt.trace.json");
  ASSERT_NE(session, nullptr);
  SummaryReport r = session->Summary({});
  EXPECT_EQ(r.basis, "execution tasks");
  // Work: 40 + 5 + 60 = 105 us; the 60 us of waits are not part of it.
  EXPECT_DOUBLE_EQ(r.total_us, 105);
  // Six tasks on the stream: two sgemm, one memset, three Event Syncs.
  EXPECT_EQ(r.tasks, 6u);
  EXPECT_EQ(r.sync_tasks, 3u);
  auto rows = ByOpType(r);
  ASSERT_EQ(rows.size(), 3u);
  ASSERT_TRUE(rows.count("aten::mm"));
  EXPECT_EQ(rows["aten::mm"]->kind, "compute");
  EXPECT_EQ(rows["aten::mm"]->calls, 2u);  // the two kernels, no syncs
  EXPECT_DOUBLE_EQ(rows["aten::mm"]->total_us, 100);
  EXPECT_DOUBLE_EQ(rows["aten::mm"]->share, 100.0 / 105);
  ASSERT_TRUE(rows.count("[data movement]"));
  EXPECT_DOUBLE_EQ(rows["[data movement]"]->total_us, 5);
  ASSERT_TRUE(rows.count("[sync]"));
  EXPECT_EQ(rows["[sync]"]->kind, "sync");
  EXPECT_EQ(rows["[sync]"]->calls, 3u);
  EXPECT_DOUBLE_EQ(rows["[sync]"]->total_us, 60);  // 30 + 20 + 10
  ASSERT_EQ(r.streams.size(), 1u);
  // Busy: the union of the work, 50..90, 95..100, 100..160 = 105 us; the
  // span runs to the last wait's end: 50..240 = 190 us.
  EXPECT_DOUBLE_EQ(r.streams[0].busy_us, 105);
  EXPECT_DOUBLE_EQ(r.streams[0].total_us, 105);
  EXPECT_DOUBLE_EQ(r.streams[0].span_us, 190);
  EXPECT_EQ(r.streams[0].tasks, 6u);
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_DOUBLE_EQ(r.runs[0].task_time_us, 105);
}

// A CANN task_time file (test/fixtures/sync/ascend_task_time): kernels
// (KERNEL_AICORE / KERNEL_AIVEC), a copy (MEMCPY_ASYNC) and the sync tasks
// EVENT_RECORD, EVENT_WAIT and NOTIFY_WAIT, on streams 2 and 3 (us):
//   stream 2: 1000 [MatMul1 100] 1100 [EVENT_RECORD 0.5] 1100.5
//             [NOTIFY_WAIT 30] 1130.5 [Relu1 15] 1145.5
//   stream 3: 1000 [EVENT_WAIT 80] 1080 [Add1 20] 1100 [MEMCPY_ASYNC 10] 1110
TEST(SyncSummaryTest, AscendEventWaitsAreTheirOwnRows) {
  auto session = OpenFixture("ascend_task_time/task_time_20250101120000.csv");
  ASSERT_NE(session, nullptr);
  SummaryReport r = session->Summary({});
  // Work: 100 + 15 + 20 + 10 = 145 us; waits 0.5 + 80 + 30 = 110.5 us.
  EXPECT_DOUBLE_EQ(r.total_us, 145);
  auto rows = ByOpType(r);
  double sync_us = 0;
  double work_us = 0;
  for (const auto& [op, row] : rows) {
    (row->kind == "sync" ? sync_us : work_us) += row->total_us;
  }
  EXPECT_DOUBLE_EQ(sync_us, 110.5);
  EXPECT_DOUBLE_EQ(work_us, 145);
  for (const char* op : {"EVENT_RECORD", "EVENT_WAIT", "NOTIFY_WAIT"}) {
    ASSERT_TRUE(rows.count(op)) << op;
    EXPECT_EQ(rows[op]->kind, "sync") << op;
  }
  EXPECT_DOUBLE_EQ(rows["EVENT_WAIT"]->total_us, 80);
  EXPECT_DOUBLE_EQ(rows["MEMCPY_ASYNC"]->share, 10.0 / 145);
  ASSERT_EQ(r.streams.size(), 2u);
  const StreamRow* s2 = nullptr;
  const StreamRow* s3 = nullptr;
  for (const StreamRow& s : r.streams) {
    if (s.name.find("Stream 2") != std::string::npos) s2 = &s;
    if (s.name.find("Stream 3") != std::string::npos) s3 = &s;
  }
  ASSERT_TRUE(s2 && s3);
  EXPECT_DOUBLE_EQ(s2->busy_us, 115);  // MatMul1 100 + Relu1 15
  EXPECT_NEAR(s2->span_us, 145.5, 1e-9);
  EXPECT_DOUBLE_EQ(s3->busy_us, 30);  // Add1 20 + MEMCPY_ASYNC 10
  EXPECT_DOUBLE_EQ(s3->span_us, 110);
  // Idle (the idle analysis): the waits are idle time spent on another
  // stream's event, 0.5 + 30 = 30.5 us on stream 2 and 80 us on stream 3;
  // no gap between tasks.
  EXPECT_NEAR(s2->idle_us, 30.5, 1e-9);
  EXPECT_NEAR(s2->idle_waiting_other_stream_us, 30.5, 1e-9);
  EXPECT_NEAR(s3->idle_us, 80, 1e-9);
  EXPECT_NEAR(s3->idle_waiting_other_stream_us, 80, 1e-9);
  EXPECT_NEAR(s3->idle_waiting_host_us + s3->idle_other_us, 0, 1e-9);
}

}  // namespace
}  // namespace mi
