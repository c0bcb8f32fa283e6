// A run's digest (include/model_inspector/diff.h) and the inputs of a diff.

#include "diff/diff_internal.h"
#include "model_inspector/session.h"
#include "session/session_impl.h"

namespace mi {

RunDigest Session::Digest(const DigestOptions& options) const {
  RunDigest digest;
  digest.meta = options.meta;
  analysis::AnalysisContext run = ContextOf(*impl_);
  diff::DigestLevels(run, &digest);
  diff::DigestTiming(run, &digest);
  return digest;
}

StatusOr<RunDigest> DigestRun(const Session& session,
                              const DigestOptions& options) {
  return session.Digest(options);
}

bool IsRunDigestFile(const std::string& /*path*/) { return false; }

StatusOr<RunDigest> LoadDiffInput(const DiffInputOptions& options) {
  OpenOptions open;
  open.paths = options.paths;
  open.memory_limit = options.memory_limit;
  StatusOr<std::unique_ptr<Session>> session = Session::Open(open);
  if (!session.ok()) return session.status();
  return (*session)->Digest(options.digest);
}

}  // namespace mi
