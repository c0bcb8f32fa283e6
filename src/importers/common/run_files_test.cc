#include "importers/common/run_files.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "importers/common/registry.h"

namespace mi::importers {
namespace {

std::vector<RunFiles::File> Files(std::vector<std::string> names) {
  std::vector<RunFiles::File> out;
  for (std::string& n : names) out.push_back({"run/" + n, "run/" + n});
  return out;
}

std::vector<std::string> Order(const RunFiles& run) {
  std::vector<std::string> out;
  for (size_t i : run.LoadOrder()) out.push_back(run.files()[i].path);
  return out;
}

TEST(RunFilesTest, UnclaimedFirstThenStagesInTakingOrder) {
  RunFiles run(Files({"a", "b", "c", "d", "e"}), /*named=*/false);
  size_t s = run.AddSource({"run/x", 2});
  EXPECT_EQ(run.FindSource("run/x"), s);
  EXPECT_FALSE(run.FindSource("run/y").has_value());
  EXPECT_TRUE(run.Take(4, s, 2));  // e: a table, after the timelines
  EXPECT_TRUE(run.Take(2, s, 1));  // c, then a: taken in this order
  EXPECT_TRUE(run.Take(0, s, 1));
  EXPECT_FALSE(run.Take(0, s, 1));  // the first claim wins
  EXPECT_TRUE(run.LeaveOut(3, "raw"));
  EXPECT_FALSE(run.LeaveOut(2, "raw"));
  EXPECT_EQ(Order(run),
            (std::vector<std::string>{"run/b", "run/c", "run/a", "run/e"}));
  ASSERT_NE(run.source_of(2), nullptr);
  EXPECT_EQ(run.source_of(2)->key, "run/x");
  EXPECT_EQ(run.source_of(2)->rank, 2);
  EXPECT_EQ(run.source_of(1), nullptr);
}

TEST(RunFilesTest, LeftOutIsGroupedByImporterAndReason) {
  RunFiles run(Files({"a", "b", "c", "d"}), /*named=*/false);
  run.set_claimant("first");
  run.LeaveOut(0, "copy");
  run.LeaveOut(2, "raw");
  run.LeaveOut(3, "copy");
  run.set_claimant("second");
  run.LeaveOut(1, "copy");
  std::vector<RunFiles::LeftOut> left = run.left_out();
  ASSERT_EQ(left.size(), 3u);
  EXPECT_EQ(left[0].importer, "first");
  EXPECT_EQ(left[0].why, "copy");
  EXPECT_EQ(left[0].paths, (std::vector<std::string>{"run/a", "run/d"}));
  EXPECT_EQ(left[1].importer, "second");
  EXPECT_EQ(left[1].paths, (std::vector<std::string>{"run/b"}));
  EXPECT_EQ(left[2].why, "raw");
  EXPECT_TRUE(Order(run).empty());
}

TEST(RunFilesTest, ANamedFileIsNeverLeftOut) {
  RunFiles run(Files({"a"}), /*named=*/true);
  EXPECT_FALSE(run.LeaveOut(0, "raw"));
  size_t s = run.AddSource({"run", -1});
  EXPECT_TRUE(run.Take(0, s, 3));
  EXPECT_EQ(Order(run), (std::vector<std::string>{"run/a"}));
  EXPECT_TRUE(run.left_out().empty());
}

// The smallest importer: what the registry needs of one.
class NamedOnly : public Importer {
 public:
  NamedOnly(std::string_view name, std::string_view description)
      : descriptor_{name, {}, 0, ContentKind::kTrace, description} {}
  const ImporterDescriptor& descriptor() const override { return descriptor_; }
  int Sniff(std::string_view, std::string_view) const override { return 0; }
  void ClaimRunFiles(RunFiles& files) const override {
    for (size_t i = 0; i < files.files().size(); ++i) {
      files.LeaveOut(i, "seen");
    }
  }

 private:
  ImporterDescriptor descriptor_;
};

TEST(RegistryTest, DescribesEveryFormatOnceAndClaimsInOrder) {
  std::vector<std::unique_ptr<Importer>> list;
  list.push_back(std::make_unique<NamedOnly>("a", "an A file"));
  list.push_back(std::make_unique<NamedOnly>("a2", "an A file"));
  list.push_back(std::make_unique<NamedOnly>("b", "a B file"));
  list.push_back(std::make_unique<NamedOnly>("c", "a C table"));
  ImporterRegistry registry(std::move(list));
  EXPECT_EQ(registry.DescribeFormats(), "an A file, a B file or a C table");

  RunFiles run(Files({"x"}), /*named=*/false);
  registry.ClaimRunFiles(run);
  ASSERT_EQ(run.left_out().size(), 1u);
  EXPECT_EQ(run.left_out()[0].importer, "a");
}

}  // namespace
}  // namespace mi::importers
