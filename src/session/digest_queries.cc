// A run's digest (include/model_inspector/diff.h) and the inputs of a diff.

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <string>
#include <string_view>

#include "base/mapped_file.h"
#include "diff/diff_internal.h"
#include "model_inspector/session.h"
#include "session/session_impl.h"

namespace mi {
namespace {

std::string NowUtc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string HostName() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "";
  return host;
}

// The file name without directories and known extensions ("resnet18" for
// ".../resnet18/model.onnx" is the directory's name: "model" says nothing).
std::string ModelNameOf(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.find_last_of('/');
  std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
  std::string dir = slash == std::string::npos ? "" : p.substr(0, slash);
  size_t dot = base.find('.');
  std::string stem = dot == std::string::npos ? base : base.substr(0, dot);
  if ((stem == "model" || stem.empty()) && !dir.empty()) {
    size_t s = dir.find_last_of('/');
    return s == std::string::npos ? dir : dir.substr(s + 1);
  }
  return stem;
}

// The digest's first bytes name its schema; a digest is recognised by the
// "schema" field being its first member, as RunDigestJson writes it.
constexpr std::string_view kDigestStart =
    "\"schema\":\"model-inspector/run-digest/";

}  // namespace

RunDigest Session::Digest(const DigestOptions& options) const {
  RunDigest digest;
  digest.meta = options.meta;
  analysis::AnalysisContext run = ContextOf(*impl_);
  diff::DigestLevels(run, &digest);
  diff::DigestTiming(run, &digest);

  // What the digest says of where it came from, where the caller left it
  // empty.
  RunDigestMeta& meta = digest.meta;
  const bool fill_inputs = meta.inputs.empty();
  const bool fill_formats = meta.formats.empty();
  for (const InputFile& f : impl_->inputs) {
    if (fill_inputs) meta.inputs.push_back(f.path);
    if (fill_formats) meta.formats.push_back(f.format);
  }
  for (DigestLevel& level : digest.levels) {
    for (const InputFile& f : impl_->inputs) {
      if (f.role == level.level) {
        level.format = f.format;
        break;
      }
    }
  }
  if (meta.model.empty()) {
    for (const DigestLevel& level : digest.levels) {
      if (!level.source_file.empty()) {
        meta.model = ModelNameOf(level.source_file);
        break;
      }
    }
    if (meta.model.empty() && !impl_->inputs.empty()) {
      meta.model = ModelNameOf(impl_->inputs.front().path);
    }
  }
  if (meta.tool_version.empty()) {
    meta.tool_version = "model-inspector " + std::string(Version());
  }
  if (meta.producers.empty()) {
    for (const DigestLevel& level : digest.levels) {
      if (level.producer.empty()) continue;
      if (!meta.producers.empty()) meta.producers += "; ";
      meta.producers += level.level + ": " + level.producer;
    }
  }
  if (meta.host.empty()) meta.host = HostName();
  if (meta.created_utc.empty()) meta.created_utc = NowUtc();
  return digest;
}

StatusOr<RunDigest> DigestRun(const Session& session,
                              const DigestOptions& options) {
  return session.Digest(options);
}

bool IsRunDigestFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char head[256];
  size_t n = std::fread(head, 1, sizeof(head), f);
  std::fclose(f);
  // The opening brace, whitespace, then the schema member.
  std::string compact;
  for (size_t i = 0; i < n; ++i) {
    char c = head[i];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') compact += c;
  }
  return compact.size() > kDigestStart.size() && compact[0] == '{' &&
         std::string_view(compact).substr(1, kDigestStart.size()) ==
             kDigestStart;
}

StatusOr<RunDigest> LoadDiffInput(const DiffInputOptions& options) {
  if (options.paths.empty()) {
    return InvalidArgumentError("a side of the diff names no files");
  }
  if (options.paths.size() == 1 && IsRunDigestFile(options.paths[0])) {
    StatusOr<std::string> text = ReadWholeFile(options.paths[0]);
    if (!text.ok()) return text.status();
    StatusOr<RunDigest> digest = ParseRunDigest(*text, options.paths[0]);
    if (!digest.ok()) return digest.status();
    // What the caller says of the run (a label, a commit) wins over what
    // the file recorded.
    const RunDigestMeta& given = options.digest.meta;
    if (!given.model.empty()) digest->meta.model = given.model;
    if (!given.label.empty()) digest->meta.label = given.label;
    if (!given.git_commit.empty()) digest->meta.git_commit = given.git_commit;
    return digest;
  }
  for (const std::string& path : options.paths) {
    if (IsRunDigestFile(path)) {
      return InvalidArgumentError(
          path +
          ": a run digest is a whole side of a diff; give it alone, not "
          "with other files");
    }
  }
  OpenOptions open;
  open.paths = options.paths;
  open.memory_limit = options.memory_limit;
  open.progress = options.progress;
  StatusOr<std::unique_ptr<Session>> session = Session::Open(open);
  if (!session.ok()) return session.status();
  return (*session)->Digest(options.digest);
}

}  // namespace mi
