#include "analysis/sequences/sequences.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/strings.h"

namespace mi::analysis {
namespace {

struct TestTrace {
  StringPool pool;
  Model model{&pool};
  Trace trace{&pool};
  std::vector<TrackId> streams;

  explicit TestTrace(int stream_count = 1) {
    for (int i = 0; i < stream_count; ++i) {
      TrackInfo s;
      s.kind = TrackKind::kDeviceStream;
      s.stream = i;
      streams.push_back(trace.AddTrack(s));
    }
    trace.AddRun({pool.Intern("run 0"), 0, 1'000'000});
    trace.AddRun({pool.Intern("run 1"), 1'000'000, 2'000'000});
  }
  // Tasks of `ops` (one letter each, or words separated by blanks) back to
  // back on `stream`, each `dur` ns long, from `start`.
  void Add(std::vector<std::string> ops, int stream = 0, int64_t start = 0,
           int64_t dur = 1, uint32_t run = 0) {
    for (const std::string& op : ops) {
      TaskRow row;
      row.kind = TaskKind::kCompute;
      row.name = pool.Intern(op + "_kernel");
      row.op_type = pool.Intern(op);
      row.track = streams[stream];
      row.start_ns = start;
      row.duration_ns = dur;
      row.run = run;
      trace.AddTask(row);
      start += dur;
    }
  }
  SequenceReport Find(SequenceParams params = {}) {
    return FindFrequentSequences(model, trace, params);
  }
};

std::vector<std::string> Split(std::string_view s) {
  std::vector<std::string> out;
  for (char c : s) out.emplace_back(1, c);
  return out;
}

TEST(SequencesTest, CountsNonOverlappingOccurrencesWithTime) {
  TestTrace t;
  // Conv 10 ns, Relu 1 ns, three times.
  int64_t at = 0;
  for (int i = 0; i < 3; ++i) {
    t.Add({"Conv"}, 0, at, 10);
    t.Add({"Relu"}, 0, at + 10, 1);
    at += 11;
  }
  SequenceReport r = t.Find();
  EXPECT_EQ(r.tasks, 6u);
  EXPECT_EQ(r.total_ns, 33);
  // "Relu Conv" (twice) is the same cycle entered at the other op: only
  // the rotation with the most time is listed.
  ASSERT_EQ(r.sequences.size(), 1u);
  EXPECT_EQ(Join(r.sequences[0].symbols, " "), "Conv Relu");
  EXPECT_EQ(r.sequences[0].count, 3u);
  EXPECT_EQ(r.sequences[0].total_ns, 33);
  EXPECT_EQ(r.sequences[0].first_tasks,
            (std::vector<TaskId>{TaskId(0), TaskId(1)}));
  // Overlapping windows count once: A A A A A holds "A A" twice (4 tasks),
  // "A A A" once (not listed).
  TestTrace a;
  a.Add(Split("AAAAA"), 0, 0, 10);
  r = a.Find();
  ASSERT_EQ(r.sequences.size(), 1u);
  EXPECT_EQ(Join(r.sequences[0].symbols, " "), "A A");
  EXPECT_EQ(r.sequences[0].count, 2u);
  EXPECT_EQ(r.sequences[0].total_ns, 40);
}

TEST(SequencesTest, OnlyClosedSequencesAreListed) {
  TestTrace t;
  t.Add(Split("ABCXABCXABC"));
  SequenceReport r = t.Find();
  std::vector<std::string> got;
  for (const auto& s : r.sequences) {
    got.push_back(Join(s.symbols, " ") + " x" + std::to_string(s.count));
  }
  // "A B" and "B C" occur as often as "A B C": only the latter is listed;
  // "B C X A", "C X A B" and "X A B C" are rotations of "A B C X".
  EXPECT_EQ(got, (std::vector<std::string>{"A B C x3", "A B C X x2"}));
  SequenceParams top1;
  top1.top = 1;
  EXPECT_EQ(t.Find(top1).sequences.size(), 1u);
  SequenceParams short_only;
  short_only.max_length = 3;
  r = t.Find(short_only);
  ASSERT_FALSE(r.sequences.empty());
  EXPECT_EQ(Join(r.sequences[0].symbols, " "), "A B C");
  for (const auto& s : r.sequences) EXPECT_LE(s.symbols.size(), 3u);
}

TEST(SequencesTest, WindowsNeverSpanStreamsOrRuns) {
  TestTrace t(2);
  t.Add({"A", "B"}, 0, 0, 1, 0);
  t.Add({"A", "B"}, 0, 10, 1, 1);  // next run on the same stream
  t.Add({"A", "B"}, 1, 0, 1, 0);
  SequenceReport r = t.Find();
  ASSERT_EQ(r.sequences.size(), 1u);  // no "B A" across the run boundary
  EXPECT_EQ(Join(r.sequences[0].symbols, " "), "A B");
  EXPECT_EQ(r.sequences[0].count, 3u);
  EXPECT_EQ(r.sequences[0].tracks,
            (std::vector<TrackId>{t.streams[0], t.streams[1]}));
}

TEST(SequencesTest, TasksAreOrderedByStartPerStream) {
  TestTrace t;
  t.Add({"B"}, 0, 5);
  t.Add({"A"}, 0, 0);  // recorded later, ran first
  t.Add({"A"}, 0, 10);
  t.Add({"B"}, 0, 15);
  SequenceReport r = t.Find();
  ASSERT_EQ(r.sequences.size(), 1u);
  EXPECT_EQ(Join(r.sequences[0].symbols, " "), "A B");
  EXPECT_EQ(r.sequences[0].count, 2u);
}

TEST(SequencesTest, ByNameAndByNodeOpType) {
  TestTrace t;
  GraphId g = t.model.AddGraph(LayerLevel::kCompiled, "g", "g.onnx");
  NodeId gemm = t.model.AddNode(g, "Gemm", "", "fc");
  for (int i = 0; i < 4; ++i) {
    TaskRow row;
    row.kind = TaskKind::kCompute;
    row.name = t.pool.Intern(i % 2 ? "sgemm_128x64" : "sgemm_64x64");
    row.track = t.streams[0];
    row.start_ns = i;
    row.duration_ns = 1;
    TaskId task = t.trace.AddTask(row);
    t.trace.SetTaskNode(task, gemm);  // no op type of its own
  }
  t.model.BuildIndexes();
  SequenceReport by_op = t.Find();
  ASSERT_EQ(by_op.sequences.size(), 1u);
  EXPECT_EQ(Join(by_op.sequences[0].symbols, " "), "Gemm Gemm");
  EXPECT_EQ(by_op.sequences[0].count, 2u);
  SequenceParams by_name;
  by_name.by = SequenceSymbol::kName;
  SequenceReport r = t.Find(by_name);
  ASSERT_FALSE(r.sequences.empty());
  EXPECT_EQ(Join(r.sequences[0].symbols, " "), "sgemm_64x64 sgemm_128x64");
  EXPECT_EQ(r.sequences[0].count, 2u);
}

TEST(SequencesTest, NothingRepeatsNothingReported) {
  TestTrace t;
  t.Add(Split("ABCDEFG"));
  EXPECT_TRUE(t.Find().sequences.empty());
  TestTrace empty;
  EXPECT_TRUE(empty.Find().sequences.empty());
}

TEST(SequencesTest, LargeTraceFinishesAndFindsTheBlock) {
  // 200,000 tasks: a 10-op block repeated, with a stray op every 1000.
  TestTrace t;
  std::vector<std::string> block = Split("abcdefghij");
  std::vector<std::string> ops;
  for (int i = 0; i < 20000; ++i) {
    ops.insert(ops.end(), block.begin(), block.end());
    if (i % 100 == 99) ops.push_back("z");
  }
  t.Add(ops);
  SequenceParams p;
  p.max_length = 10;
  SequenceReport r = t.Find(p);
  ASSERT_FALSE(r.sequences.empty());
  EXPECT_EQ(Join(r.sequences[0].symbols, " "), "a b c d e f g h i j");
  EXPECT_EQ(r.sequences[0].count, 20000u);
}

}  // namespace
}  // namespace mi::analysis
