#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model_inspector/history.h"

namespace mi {
namespace {

namespace fs = std::filesystem;

class HistoryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/mi_history_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const {
    return (fs::path(dir_) / name).string();
  }
  std::string dir_;
};

RunDigest MakeDigest(const std::string& model, const std::string& label,
                     std::vector<int64_t> total_ns) {
  RunDigest d;
  d.meta.model = model;
  d.meta.label = label;
  d.meta.inputs = {"runs/" + label + "/model.onnx",
                   "runs/" + label + "/profile.json"};
  d.meta.formats = {"onnx", "ort_profile"};
  d.meta.tool_version = "0.1.0";
  d.meta.producers = "onnxruntime 1.20";
  d.meta.host = "ci-7";
  d.meta.created_utc = "2026-12-01T10:00:00Z";
  d.meta.git_commit = "abc123";
  DigestLevel fw;
  fw.level = "framework";
  fw.fingerprint = "f00d";
  fw.nodes.resize(5);
  DigestLevel compiled;
  compiled.level = "compiled";
  compiled.fingerprint = "beef";
  compiled.nodes.resize(3);
  d.levels = {fw, compiled};
  d.runs_from = "model_run";
  d.run_count = static_cast<int64_t>(total_ns.size());
  d.total.key = "total";
  d.total.run_ns = std::move(total_ns);
  return d;
}

std::unique_ptr<HistoryStore> MustOpen(const std::string& path) {
  auto store = HistoryStore::Open(path, /*create=*/true);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

TEST_F(HistoryStoreTest, RoundTripsSummaryColumns) {
  // Nested folders that do not exist yet are created.
  const std::string path = Path("a/b/history.db");
  auto store = MustOpen(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->path(), path);
  // Totals by hand (linear interpolation at q * (n - 1)):
  // {10, 20, 30, 40}: median at 1.5 = 25; p25 at 0.75 = 17.5, p75 at 2.25 =
  // 32.5: spread 15. {300, 100, 200} sorted {100, 200, 300}: median 200,
  // p25 at 0.5 = 150, p75 at 1.5 = 250: spread 100. One run: spread 0.
  auto id1 = store->Add(MakeDigest("resnet", "r1", {10, 20, 30, 40}));
  auto id2 = store->Add(MakeDigest("resnet", "r2", {300, 100, 200}));
  auto id3 = store->Add(MakeDigest("bert", "b1", {7}));
  ASSERT_TRUE(id1.ok() && id2.ok() && id3.ok()) << id1.status().ToString();
  EXPECT_LT(*id1, *id2);
  EXPECT_LT(*id2, *id3);
  store.reset();

  auto reopened = HistoryStore::Open(path, /*create=*/false);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  auto runs = (*reopened)->List("", 0);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 3u);
  // Newest first.
  EXPECT_EQ((*runs)[0].id, *id3);
  EXPECT_EQ((*runs)[2].id, *id1);
  const HistoryRun& r1 = (*runs)[2];
  EXPECT_EQ(r1.meta.model, "resnet");
  EXPECT_EQ(r1.meta.label, "r1");
  EXPECT_EQ(r1.meta.inputs, (std::vector<std::string>{"runs/r1/model.onnx",
                                                      "runs/r1/profile.json"}));
  EXPECT_EQ(r1.meta.formats, (std::vector<std::string>{"onnx", "ort_profile"}));
  EXPECT_EQ(r1.meta.tool_version, "0.1.0");
  EXPECT_EQ(r1.meta.producers, "onnxruntime 1.20");
  EXPECT_EQ(r1.meta.host, "ci-7");
  EXPECT_EQ(r1.meta.created_utc, "2026-12-01T10:00:00Z");
  EXPECT_EQ(r1.meta.git_commit, "abc123");
  EXPECT_EQ(r1.fingerprint, "framework:f00d compiled:beef");
  EXPECT_EQ(r1.framework_nodes, 5);
  EXPECT_EQ(r1.compiled_nodes, 3);
  EXPECT_EQ(r1.run_count, 4);
  EXPECT_EQ(r1.total_median_ns, 25);
  EXPECT_EQ(r1.total_spread_ns, 15);
  EXPECT_EQ(r1.recorded_utc.size(), 20u) << r1.recorded_utc;
  EXPECT_EQ((*runs)[1].total_median_ns, 200);
  EXPECT_EQ((*runs)[1].total_spread_ns, 100);
  EXPECT_EQ((*runs)[0].total_median_ns, 7);
  EXPECT_EQ((*runs)[0].total_spread_ns, 0);

  auto resnet = (*reopened)->List("resnet", 1);
  ASSERT_TRUE(resnet.ok());
  ASSERT_EQ(resnet->size(), 1u);
  EXPECT_EQ((*resnet)[0].id, *id2);

  auto got = (*reopened)->Get(*id2);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->meta.label, "r2");

  auto models = (*reopened)->Models();
  ASSERT_TRUE(models.ok());
  ASSERT_EQ(models->size(), 2u);
  EXPECT_EQ((*models)[0].model, "bert");
  EXPECT_EQ((*models)[1].model, "resnet");
  EXPECT_EQ((*models)[1].runs, 2);
  EXPECT_EQ((*models)[1].last_run_id, *id2);
}

TEST_F(HistoryStoreTest, RunWithoutTraceOrLevelsKeepsAbsentMarkers) {
  auto store = MustOpen(Path("h.db"));
  ASSERT_NE(store, nullptr);
  RunDigest d;
  d.meta.model = "m";
  auto id = store->Add(d);
  ASSERT_TRUE(id.ok());
  auto run = store->Get(*id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->framework_nodes, -1);
  EXPECT_EQ(run->compiled_nodes, -1);
  EXPECT_EQ(run->run_count, 0);
  EXPECT_EQ(run->total_median_ns, -1);
  EXPECT_EQ(run->total_spread_ns, -1);
  EXPECT_EQ(run->fingerprint, "");
}

TEST_F(HistoryStoreTest, UnknownRunNamesTheIdsHeld) {
  auto store = MustOpen(Path("h.db"));
  ASSERT_NE(store, nullptr);
  auto empty = store->Get(1);
  EXPECT_EQ(empty.status().code(), StatusCode::kNotFound);
  EXPECT_NE(empty.status().message().find("no run is recorded"),
            std::string::npos)
      << empty.status().message();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(store->Add(MakeDigest("m", "x", {1})).ok());
  }
  auto missing = store->Get(99);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(Path("h.db") + ": no run 99"),
            std::string::npos)
      << missing.status().message();
  EXPECT_NE(missing.status().message().find("3 runs, ids 1 to 3"),
            std::string::npos)
      << missing.status().message();
  EXPECT_EQ(store->Digest(99).status().code(), StatusCode::kNotFound);
}

TEST_F(HistoryStoreTest, BaselineSetReplaceAndUnknown) {
  auto store = MustOpen(Path("h.db"));
  ASSERT_NE(store, nullptr);
  auto a = store->Add(MakeDigest("m", "a", {1}));
  auto b = store->Add(MakeDigest("m", "b", {2}));
  ASSERT_TRUE(a.ok() && b.ok());

  auto none = store->Baseline("main");
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("no baseline is set"),
            std::string::npos)
      << none.status().message();

  ASSERT_TRUE(store->SetBaseline("main", *a).ok());
  ASSERT_TRUE(store->SetBaseline("nightly", *a).ok());
  auto main = store->Baseline("main");
  ASSERT_TRUE(main.ok());
  EXPECT_EQ(main->run_id, *a);
  // Setting it again moves it.
  ASSERT_TRUE(store->SetBaseline("main", *b).ok());
  main = store->Baseline("main");
  ASSERT_TRUE(main.ok());
  EXPECT_EQ(main->run_id, *b);

  // A run that does not exist: refused, the baseline unchanged.
  Status bad = store->SetBaseline("main", 42);
  EXPECT_EQ(bad.code(), StatusCode::kNotFound);
  main = store->Baseline("main");
  ASSERT_TRUE(main.ok());
  EXPECT_EQ(main->run_id, *b);

  auto all = store->Baselines();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "main");
  EXPECT_EQ((*all)[0].run_id, *b);
  EXPECT_EQ((*all)[1].name, "nightly");
  EXPECT_EQ((*all)[1].run_id, *a);

  auto unknown = store->Baseline("release");
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  const std::string want = "baselines: 'main' (run " + std::to_string(*b) +
                           "), 'nightly' (run " + std::to_string(*a) + ")";
  EXPECT_NE(unknown.status().message().find(want), std::string::npos)
      << unknown.status().message();
}

TEST_F(HistoryStoreTest, TrendIsOldestFirstByCreationTime) {
  auto store = MustOpen(Path("h.db"));
  ASSERT_NE(store, nullptr);
  // Recorded out of order: the trend follows when each run was made.
  RunDigest late = MakeDigest("m", "late", {300});
  late.meta.created_utc = "2026-12-03T00:00:00Z";
  RunDigest early = MakeDigest("m", "early", {100});
  early.meta.created_utc = "2026-12-01T00:00:00Z";
  RunDigest mid = MakeDigest("m", "mid", {200, 220});
  mid.meta.created_utc = "2026-12-02T00:00:00Z";
  RunDigest other = MakeDigest("other", "o", {5});
  auto id_late = store->Add(late);
  auto id_early = store->Add(early);
  auto id_mid = store->Add(mid);
  ASSERT_TRUE(store->Add(other).ok());
  ASSERT_TRUE(id_late.ok() && id_early.ok() && id_mid.ok());
  auto trend = store->Trend("m");
  ASSERT_TRUE(trend.ok()) << trend.status().ToString();
  ASSERT_EQ(trend->size(), 3u);
  EXPECT_EQ((*trend)[0].run_id, *id_early);
  EXPECT_EQ((*trend)[0].label, "early");
  EXPECT_EQ((*trend)[0].total_median_ns, 100);
  EXPECT_EQ((*trend)[1].run_id, *id_mid);
  EXPECT_EQ((*trend)[1].total_median_ns, 210);  // (200 + 220) / 2
  EXPECT_EQ((*trend)[1].total_spread_ns, 10);   // 215 - 205
  EXPECT_EQ((*trend)[1].created_utc, "2026-12-02T00:00:00Z");
  EXPECT_EQ((*trend)[1].git_commit, "abc123");
  EXPECT_EQ((*trend)[2].run_id, *id_late);

  auto none = store->Trend("nope");
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("models: 'm' (3 runs), 'other' (1 "
                                         "run)"),
            std::string::npos)
      << none.status().message();
}

TEST_F(HistoryStoreTest, MissingStoreWithoutCreateIsNotFound) {
  auto store = HistoryStore::Open(Path("none.db"), /*create=*/false);
  EXPECT_EQ(store.status().code(), StatusCode::kNotFound);
  EXPECT_NE(store.status().message().find(Path("none.db")), std::string::npos);
  EXPECT_FALSE(fs::exists(Path("none.db")));
}

TEST_F(HistoryStoreTest, DirectoryIsRefused) {
  auto store = HistoryStore::Open(dir_, /*create=*/true);
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(HistoryStoreTest, ForeignTextFileIsNamed) {
  const std::string path = Path("notes.txt");
  std::ofstream(path) << "these are not runs\n";
  for (bool create : {false, true}) {
    auto store = HistoryStore::Open(path, create);
    EXPECT_EQ(store.status().code(), StatusCode::kMalformedInput);
    EXPECT_NE(
        store.status().message().find(path + ": not a model-inspector run "
                                             "history"),
        std::string::npos)
        << store.status().message();
  }
  // Untouched.
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "these are not runs");
}

// Runs SQL on a file with SQLite directly, as another program would.
void RawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

TEST_F(HistoryStoreTest, ForeignSqliteDatabaseListsItsTables) {
  const std::string path = Path("other.db");
  RawSql(path, "CREATE TABLE TASK (id INTEGER); CREATE TABLE STRING_IDS (x)");
  auto store = HistoryStore::Open(path, /*create=*/true);
  EXPECT_EQ(store.status().code(), StatusCode::kMalformedInput);
  EXPECT_NE(store.status().message().find(
                path + ": an SQLite database, but not a model-inspector run "
                       "history (tables: STRING_IDS, TASK;"),
            std::string::npos)
      << store.status().message();
}

TEST_F(HistoryStoreTest, NewerSchemaVersionIsRefused) {
  const std::string path = Path("h.db");
  {
    auto store = MustOpen(path);
    ASSERT_NE(store, nullptr);
  }
  RawSql(path, "UPDATE history_schema SET value = '2' WHERE key = 'version'");
  auto store = HistoryStore::Open(path, /*create=*/true);
  EXPECT_EQ(store.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(store.status().message().find(
                path + ": run history schema version 2 is newer than this "
                       "model-inspector reads (version 1)"),
            std::string::npos)
      << store.status().message();
}

TEST_F(HistoryStoreTest, TruncatedFileIsMalformedAndNamed) {
  const std::string path = Path("h.db");
  {
    auto store = MustOpen(path);
    ASSERT_NE(store, nullptr);
    // Long rows so that the runs table spans many pages.
    for (int i = 0; i < 200; ++i) {
      RunDigest d = MakeDigest("m", std::string(2000, 'a' + i % 26), {i});
      ASSERT_TRUE(store->Add(d).ok());
    }
  }  // closing the last connection checkpoints the WAL into the file
  const auto size = fs::file_size(path);
  ASSERT_GT(size, 200u * 2000u);
  fs::resize_file(path, size / 2);
  auto store = HistoryStore::Open(path, /*create=*/false);
  Status status = store.status();
  if (store.ok()) status = (*store)->List("", 0).status();
  EXPECT_EQ(status.code(), StatusCode::kMalformedInput) << status.ToString();
  EXPECT_NE(status.message().find(path + ": "), std::string::npos)
      << status.message();
}

TEST_F(HistoryStoreTest, OverwrittenPagesAreMalformedAndNamed) {
  const std::string path = Path("h.db");
  {
    auto store = MustOpen(path);
    ASSERT_NE(store, nullptr);
    for (int i = 0; i < 100; ++i) {
      ASSERT_TRUE(
          store->Add(MakeDigest("m", std::string(2000, 'x'), {i})).ok());
    }
  }
  // Everything after the first page (the header and the table list) made
  // garbage, as a disk or a copy gone wrong would.
  const auto size = fs::file_size(path);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);
    std::string junk(size - 4096, '\xA5');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  auto store = HistoryStore::Open(path, /*create=*/false);
  Status status = store.status();
  if (store.ok()) status = (*store)->List("", 0).status();
  EXPECT_EQ(status.code(), StatusCode::kMalformedInput) << status.ToString();
  EXPECT_NE(status.message().find(path + ": "), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("malformed"), std::string::npos)
      << status.message();
}

TEST_F(HistoryStoreTest, DefaultPathFollowsEnvironment) {
  setenv("MODEL_INSPECTOR_HISTORY", "/x/h.db", 1);
  EXPECT_EQ(DefaultHistoryPath(), "/x/h.db");
  unsetenv("MODEL_INSPECTOR_HISTORY");
  setenv("XDG_DATA_HOME", "/data", 1);
  EXPECT_EQ(DefaultHistoryPath(), "/data/model-inspector/history.db");
  // Relative XDG_DATA_HOME is invalid (XDG base directory spec): ignored.
  setenv("XDG_DATA_HOME", "rel", 1);
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(DefaultHistoryPath(),
            "/home/u/.local/share/model-inspector/history.db");
  unsetenv("XDG_DATA_HOME");
  EXPECT_EQ(DefaultHistoryPath(),
            "/home/u/.local/share/model-inspector/history.db");
}

TEST_F(HistoryStoreTest, RealDigestRoundTripsThroughTheStore) {
  const std::string root =
      std::string(MI_SOURCE_DIR) + "/test/fixtures/resnet18";
  DiffInputOptions input;
  input.paths = {root + "/model.onnx", root + "/ort_all/model.optimized.onnx",
                 root + "/ort_all/onnxruntime_profile.json"};
  input.digest.meta.model = "resnet18";
  auto digest = LoadDiffInput(input);
  ASSERT_TRUE(digest.ok()) << digest.status().ToString();
  auto store = MustOpen(Path("h.db"));
  ASSERT_NE(store, nullptr);
  auto id = store->Add(*digest);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto back = store->Digest(*id);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  // The stored text is the digest, whole (node ids, valid only in the
  // session that made them, are not part of it).
  EXPECT_EQ(RunDigestJson(*back), RunDigestJson(*digest));
  auto run = store->Get(*id);
  ASSERT_TRUE(run.ok());
  // Node counts as python3-onnx counts them: len(model.graph.node) is 49
  // for model.onnx and 34 for ort_all/model.optimized.onnx.
  EXPECT_EQ(run->framework_nodes, 49);
  EXPECT_EQ(run->compiled_nodes, 34);
  ASSERT_EQ(back->levels.size(), 2u);
  EXPECT_EQ(run->fingerprint, "framework:" + back->levels[0].fingerprint +
                                  " compiled:" + back->levels[1].fingerprint);
  EXPECT_EQ(run->run_count, back->run_count);
}

TEST_F(HistoryStoreTest, DamagedDigestBlobIsMalformedNamingTheRun) {
  const std::string path = Path("h.db");
  {
    auto store = MustOpen(path);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Add(MakeDigest("m", "a", {1})).ok());
  }
  RawSql(path, "UPDATE runs SET digest = x'0102030405' WHERE id = 1");
  auto store = HistoryStore::Open(path, /*create=*/false);
  ASSERT_TRUE(store.ok());
  auto digest = (*store)->Digest(1);
  EXPECT_EQ(digest.status().code(), StatusCode::kMalformedInput);
  EXPECT_NE(digest.status().message().find(path + ": reading run 1"),
            std::string::npos)
      << digest.status().message();
}

// ---------------------------------------------------------------------------
// Other processes: mi_history_writer_main.

struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;
};

Child StartWriter(const std::string& store, const std::string& model,
                  const std::string& label, int count,
                  const std::string& pause_file) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    if (pause_file.empty()) {
      unsetenv("MI_HISTORY_TEST_PAUSE_IN_WRITE");
    } else {
      setenv("MI_HISTORY_TEST_PAUSE_IN_WRITE", pause_file.c_str(), 1);
    }
    const std::string n = std::to_string(count);
    execl(MI_HISTORY_WRITER, MI_HISTORY_WRITER, store.c_str(), model.c_str(),
          label.c_str(), n.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  return {pid, fds[0]};
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, n);
  close(fd);
  return out;
}

int WaitExit(pid_t pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_F(HistoryStoreTest, WriterKilledMidWriteLosesOnlyItsOwnRun) {
  const std::string path = Path("h.db");
  auto store = MustOpen(path);
  ASSERT_NE(store, nullptr);
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) {
    auto id = store->Add(
        MakeDigest("m", "kept-" + std::to_string(i), {100 + i, 200 + i}));
    ASSERT_TRUE(id.ok());
    ids.push_back(*id);
  }
  ASSERT_TRUE(store->SetBaseline("main", ids[2]).ok());

  // The child inserts its run, creates the pause file inside the open
  // transaction and waits there; it is killed before it commits.
  const std::string pause_file = Path("paused");
  Child child = StartWriter(path, "m", "killed", 1, pause_file);
  bool child_exited = false;
  while (!fs::exists(pause_file)) {
    int status;
    if (waitpid(child.pid, &status, WNOHANG) == child.pid) {
      child_exited = true;
      break;
    }
    usleep(10'000);
  }
  ASSERT_FALSE(child_exited) << "the writer ended before pausing";
  // While it holds the write lock, readers still read every committed run.
  auto during = store->List("", 0);
  ASSERT_TRUE(during.ok()) << during.status().ToString();
  EXPECT_EQ(during->size(), 5u);

  ASSERT_EQ(kill(child.pid, SIGKILL), 0);
  EXPECT_EQ(WaitExit(child.pid), 128 + SIGKILL);
  EXPECT_EQ(ReadAll(child.stdout_fd), "");  // it never printed an id
  store.reset();

  auto reopened = HistoryStore::Open(path, /*create=*/false);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  auto runs = (*reopened)->List("", 0);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 5u);
  for (int i = 0; i < 5; ++i) {
    const HistoryRun& r = (*runs)[4 - i];
    EXPECT_EQ(r.id, ids[i]);
    EXPECT_EQ(r.meta.label, "kept-" + std::to_string(i));
    EXPECT_EQ(r.total_median_ns, 150 + i);
    EXPECT_EQ(r.total_spread_ns, 50);  // 175 - 125
  }
  auto main = (*reopened)->Baseline("main");
  ASSERT_TRUE(main.ok());
  EXPECT_EQ(main->run_id, ids[2]);
  // Further writes work and get a new id.
  auto next = (*reopened)->Add(MakeDigest("m", "after", {1}));
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_GT(*next, ids.back());
  runs = (*reopened)->List("", 0);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 6u);
  for (const HistoryRun& r : *runs) EXPECT_NE(r.meta.label, "killed-0");
}

TEST_F(HistoryStoreTest, TwoConcurrentWritersBothLandEveryRun) {
  // Neither the file nor its folder exists: both writers race to create it.
  const std::string path = Path("new/h.db");
  constexpr int kEach = 50;
  Child a = StartWriter(path, "model-a", "a", kEach, "");
  Child b = StartWriter(path, "model-b", "b", kEach, "");
  const std::string out_a = ReadAll(a.stdout_fd);
  const std::string out_b = ReadAll(b.stdout_fd);
  EXPECT_EQ(WaitExit(a.pid), 0);
  EXPECT_EQ(WaitExit(b.pid), 0);

  auto store = HistoryStore::Open(path, /*create=*/false);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto runs = (*store)->List("", 0);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u * kEach);
  std::set<int64_t> ids;
  std::set<std::string> labels;
  for (const HistoryRun& r : *runs) {
    ids.insert(r.id);
    labels.insert(r.meta.model + "/" + r.meta.label);
    // Each row whole: the writer's total for run i is {1000, 2000, 3000}+i.
    const int i = std::stoi(r.meta.label.substr(2));
    EXPECT_EQ(r.total_median_ns, 2000 + i);
    EXPECT_EQ(r.total_spread_ns, 1000);
  }
  EXPECT_EQ(ids.size(), 2u * kEach);
  for (int i = 0; i < kEach; ++i) {
    EXPECT_TRUE(labels.count("model-a/a-" + std::to_string(i)));
    EXPECT_TRUE(labels.count("model-b/b-" + std::to_string(i)));
  }
  // The ids each writer printed are the ids stored.
  std::set<int64_t> printed;
  for (const std::string* out : {&out_a, &out_b}) {
    size_t start = 0;
    while (start < out->size()) {
      size_t end = out->find('\n', start);
      printed.insert(std::stoll(out->substr(start, end - start)));
      start = end + 1;
    }
  }
  EXPECT_EQ(printed, ids);
}

}  // namespace
}  // namespace mi
