#include "trace/trace.h"

#include <string>

#include <gtest/gtest.h>

namespace mi {
namespace {

struct Fixture {
  StringPool strings;
  Trace trace{&strings};

  SourceId Source(std::string_view key, int32_t rank = -1,
                  std::string_view dialect = "pytorch") {
    SourceId s = trace.FindOrAddSource(strings.Intern(key));
    trace.mutable_source(s).rank = rank;
    trace.mutable_source(s).dialect = strings.Intern(dialect);
    return s;
  }
  // Kineto's GPU 0 stream 7: process "python3 (GPU 0)", thread "stream 7 ".
  TrackId Stream(SourceId source, int32_t device = 0) {
    TrackInfo info;
    info.kind = TrackKind::kDeviceStream;
    info.source = source;
    info.device = device;
    info.stream = 7;
    info.tid = 7;
    info.process_name = strings.Intern("python3 (GPU 0)");
    info.thread_name = strings.Intern("stream 7 ");
    return trace.AddTrack(info);
  }
  TrackId Thread(SourceId source) {
    TrackInfo info;
    info.kind = TrackKind::kHostThread;
    info.source = source;
    info.pid = 4101;
    info.tid = 4101;
    info.process_name = strings.Intern("python3 (CPU)");
    return trace.AddTrack(info);
  }
};

TEST(TraceSourcesTest, FindOrAddSourceKeysByKey) {
  Fixture f;
  SourceId a = f.Source("a.json");
  SourceId b = f.Source("b.json");
  EXPECT_NE(a, b);
  EXPECT_EQ(f.trace.FindOrAddSource(f.strings.Intern("a.json")), a);
  EXPECT_EQ(f.trace.source_count(), 2u);
}

// Traces built by hand (tests) name no source: their tracks share the
// unnamed default source, so every track has one.
TEST(TraceSourcesTest, TracksWithoutASourceShareTheDefaultOne) {
  Fixture f;
  TrackInfo info;
  TrackId t1 = f.trace.AddTrack(info);
  TrackId t2 = f.trace.AddTrack(info);
  ASSERT_TRUE(f.trace.track_source(t1).valid());
  EXPECT_EQ(f.trace.track_source(t1), f.trace.track_source(t2));
  EXPECT_EQ(f.trace.source(f.trace.track_source(t1)).key, StringPool::kEmpty);
  EXPECT_EQ(f.trace.sources_with_tracks(), 1u);
  EXPECT_EQ(f.trace.source_track_count(f.trace.track_source(t1)), 2u);
}

// One source: the names the trace gives, as before sources existed.
TEST(TraceNamesTest, OneSourceKeepsTheTracesOwnNames) {
  Fixture f;
  SourceId s = f.Source("rank0.pt.trace.json", 0);
  TrackId stream = f.Stream(s);
  TrackId thread = f.Thread(s);
  EXPECT_EQ(TrackShortName(f.trace, stream), "stream 7");
  EXPECT_EQ(TrackName(f.trace, stream), "stream 7 (python3 (GPU 0))");
  EXPECT_EQ(TrackGroupName(f.trace, stream), "python3 (GPU 0)");
  EXPECT_EQ(TrackName(f.trace, thread), "thread 4101 (python3 (CPU))");
  EXPECT_EQ(SourcePrefix(f.trace, s), "");
  uint32_t run = f.trace.AddRun({f.strings.Intern("ProfilerStep#1"), 0, 1, s});
  EXPECT_EQ(RunName(f.trace, run), "ProfilerStep#1");
}

// Two ranks of one job, each with GPU 0 stream 7: names never look alike.
TEST(TraceNamesTest, SeveralSourcesCarryTheRank) {
  Fixture f;
  SourceId r0 = f.Source("run/rank0.pt.trace.json", 0);
  SourceId r1 = f.Source("run/rank1.pt.trace.json", 1);
  TrackId s0 = f.Stream(r0);
  TrackId s1 = f.Stream(r1);
  TrackId h1 = f.Thread(r1);
  EXPECT_EQ(TrackName(f.trace, s0), "rank 0 · GPU 0 · stream 7");
  EXPECT_EQ(TrackName(f.trace, s1), "rank 1 · GPU 0 · stream 7");
  EXPECT_EQ(TrackName(f.trace, h1), "rank 1 · python3 (CPU) · thread 4101");
  EXPECT_EQ(TrackGroupName(f.trace, s1), "rank 1 · python3 (GPU 0)");
  EXPECT_EQ(TrackShortName(f.trace, s1), "stream 7");  // within its group
  uint32_t run = f.trace.AddRun({f.strings.Intern("ProfilerStep#1"), 0, 1, r1});
  EXPECT_EQ(RunName(f.trace, run), "rank 1 · ProfilerStep#1");
}

// Sources without a rank are named by their file (or folder), with as many
// parent folders as it takes to tell them apart.
TEST(TraceNamesTest, UnrankedSourcesAreNamedByTheirFileDisambiguated) {
  Fixture f;
  SourceId a = f.Source("day1/node_a/trace.json", -1, "chrome");
  SourceId b = f.Source("day1/node_b/trace.json", -1, "chrome");
  SourceId c = f.Source("day1/other.json", -1, "chrome");
  f.Stream(a, 3);
  f.Stream(b, 3);
  TrackId tc = f.Stream(c, 3);
  EXPECT_EQ(SourceName(f.trace, a), "node_a/trace.json");
  EXPECT_EQ(SourceName(f.trace, b), "node_b/trace.json");
  EXPECT_EQ(SourceName(f.trace, c), "other.json");
  EXPECT_EQ(TrackName(f.trace, tc), "other.json · device 3 · stream 7");
}

// Two runs of the same rank: the rank alone would collide.
TEST(TraceNamesTest, SameRankTwiceIsToldApartByTheFile) {
  Fixture f;
  SourceId a = f.Source("a/rank0.json", 0);
  SourceId b = f.Source("b/rank0.json", 0);
  f.Stream(a);
  f.Stream(b);
  EXPECT_EQ(SourceName(f.trace, a), "rank 0 (a/rank0.json)");
  EXPECT_EQ(SourceName(f.trace, b), "rank 0 (b/rank0.json)");
}

// A source with no tracks (an allocator table read alone) does not make
// the names of the only source with tracks change.
TEST(TraceNamesTest, SourcesWithoutTracksDoNotCount) {
  Fixture f;
  SourceId a = f.Source("trace.json", 0);
  f.Source("memory_record.csv", -1, "ascend");
  TrackId t = f.Stream(a);
  EXPECT_EQ(f.trace.sources_with_tracks(), 1u);
  EXPECT_EQ(TrackName(f.trace, t), "stream 7 (python3 (GPU 0))");
}

TEST(TraceNamesTest, DeviceNamesFollowTheDialect) {
  Fixture f;
  SourceId npu = f.Source("rank0_ascend_pt", 0, "ascend");
  SourceId gpu = f.Source("rank1.json", 1, "pytorch");
  // Ascend timelines number devices by process: named by the process.
  TrackId ascend = f.Stream(npu, 1);
  EXPECT_EQ(TrackDeviceName(f.trace, f.Stream(gpu, 1)), "GPU 1");
  EXPECT_EQ(TrackDeviceName(f.trace, ascend), "");
  EXPECT_EQ(TrackName(f.trace, ascend), "rank 0 · python3 (GPU 0) · stream 7");
  EXPECT_EQ(TrackDeviceName(f.trace, f.Stream(gpu, -1)), "");
  EXPECT_EQ(TrackDeviceName(f.trace, f.Thread(gpu)), "");
}

// The timing analyses' names: with one source as they always read
// ("stream 7 (device 0)", "device 0", "host"); with several, the source in
// front as in every other name, and a track as the summary names it.
TEST(TraceNamesTest, TimingNamesOfOneSource) {
  Fixture f;
  SourceId s = f.Source("rank0.pt.trace.json", 0);
  TrackId stream = f.Stream(s, 1);
  TrackId unnumbered = f.Stream(s, -1);
  TrackId thread = f.Thread(s);
  TrackInfo named = f.trace.track(thread);
  named.thread_name = f.strings.Intern("thread 19392 (python3)");
  TrackId named_thread = f.trace.AddTrack(named);
  EXPECT_EQ(TrackMentionName(f.trace, stream), "stream 7 (device 1)");
  EXPECT_EQ(TrackMentionName(f.trace, unnumbered), "stream 7");
  EXPECT_EQ(TrackMentionName(f.trace, thread), "thread 4101");
  EXPECT_EQ(TrackMentionName(f.trace, named_thread), "thread 19392 (python3)");
  EXPECT_EQ(DeviceIndexName(f.trace, stream), "device 1");
  EXPECT_EQ(DeviceIndexName(f.trace, unnumbered), "device (unknown)");
  EXPECT_EQ(HostClockName(f.trace, s), "host");
}

// A generic trace whose device streams sit in two processes, neither
// numbering its device: two devices, each named by its process.
TEST(TraceNamesTest, UnnumberedDevicesOfSeveralProcessesNameTheProcess) {
  Fixture f;
  SourceId s = f.Source("trace.json", -1, "chrome");
  TrackInfo a;
  a.kind = TrackKind::kDeviceStream;
  a.source = s;
  a.pid = 200;
  a.stream = 1;
  TrackInfo a2 = a;
  a2.stream = 2;
  TrackInfo b = a;
  b.pid = 300;
  b.process_name = f.strings.Intern("GPU kernels");
  TrackId ta = f.trace.AddTrack(a);
  TrackId ta2 = f.trace.AddTrack(a2);
  TrackId tb = f.trace.AddTrack(b);
  EXPECT_EQ(DeviceIndexName(f.trace, ta), "device (unknown, pid 200)");
  EXPECT_EQ(DeviceIndexName(f.trace, ta2), "device (unknown, pid 200)");
  EXPECT_EQ(DeviceIndexName(f.trace, tb), "device (unknown, GPU kernels)");
}

TEST(TraceNamesTest, TimingNamesOfSeveralSourcesStartWithTheSource) {
  Fixture f;
  SourceId r0 = f.Source("run/rank0.pt.trace.json", 0);
  SourceId other = f.Source("day1/other.json", -1, "chrome");
  TrackId s0 = f.Stream(r0);
  TrackId s1 = f.Stream(other, -1);
  EXPECT_EQ(TrackMentionName(f.trace, s0), "rank 0 · GPU 0 · stream 7");
  EXPECT_EQ(TrackMentionName(f.trace, s0), TrackName(f.trace, s0));
  EXPECT_EQ(TrackMentionName(f.trace, s1),
            "other.json · python3 (GPU 0) · stream 7");
  EXPECT_EQ(DeviceIndexName(f.trace, s0), "rank 0 · device 0");
  EXPECT_EQ(DeviceIndexName(f.trace, s1), "other.json · device (unknown)");
  EXPECT_EQ(HostClockName(f.trace, r0), "rank 0 · host");
  EXPECT_EQ(HostClockName(f.trace, other), "other.json · host");
}

TEST(TraceSourcesTest, DialectsAreListedOncePerKind) {
  Fixture f;
  EXPECT_EQ(TraceDialects(f.trace), "");
  f.Source("a.json", 0, "pytorch");
  f.Source("b.json", 1, "pytorch");
  EXPECT_EQ(TraceDialects(f.trace), "pytorch");
  f.Source("c.json", -1, "onnxruntime");
  EXPECT_EQ(TraceDialects(f.trace), "pytorch,onnxruntime");
}

// Kineto's cuda_sync records (kind sync) and CANN's EVENT_WAIT (class sync)
// are syncs; a communication task never is, whatever its kind; a kernel or
// a copy is work, a sync is not.
TEST(TraceTaskRulesTest, SyncTasksAreNotWork) {
  Fixture f;
  TrackId s = f.Stream(f.Source("a.json", 0, "pytorch"));
  auto add = [&](TaskKind kind, std::string_view name, std::string_view cls) {
    TaskRow row;
    row.kind = kind;
    row.name = f.strings.Intern(name);
    row.task_class = f.strings.Intern(cls);
    row.track = s;
    return f.trace.AddTask(row);
  };
  TaskId event_sync = add(TaskKind::kSync, "Event Sync", "");
  TaskId event_wait = add(TaskKind::kOther, "EVENT_WAIT", "sync");
  TaskId notify = add(TaskKind::kSync, "Notify_Wait", "communication");
  TaskId kernel = add(TaskKind::kCompute, "sgemm", "");
  TaskId copy = add(TaskKind::kDataMovement, "Memcpy HtoD", "");
  EXPECT_TRUE(IsSyncTask(f.trace, event_sync));
  EXPECT_TRUE(IsSyncTask(f.trace, event_wait));
  EXPECT_FALSE(IsSyncTask(f.trace, notify));
  EXPECT_FALSE(IsSyncTask(f.trace, kernel));
  EXPECT_FALSE(IsExecutionWork(f.trace, event_sync));
  EXPECT_TRUE(IsExecutionWork(f.trace, notify));
  EXPECT_TRUE(IsExecutionWork(f.trace, kernel));
  EXPECT_TRUE(IsExecutionWork(f.trace, copy));
}

}  // namespace
}  // namespace mi
