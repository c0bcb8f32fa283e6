#pragma once

// The saved session (.mis) behind GET and POST /api/session
// (docs/reference/http-api.md "Saved sessions"): what `open session.mis`
// restored, for the UI to apply, and where the UI's "save session" writes.
// The request never names a file: the file is the one `open` was given
// (`open session.mis`, or `open ... --session PATH`); without one the
// answer carries the document for the browser to download.

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "model_inspector/saved_session.h"
#include "server/api.h"

namespace mi::server {

class SessionFileApi {
 public:
  // `path`: where a save writes ("" = nowhere: the UI downloads);
  // `restored`: the session `open session.mis` read, if any.
  SessionFileApi(std::string path, std::optional<SavedSession> restored);

  // GET /api/session: {"path", "restored", "session"}.
  // POST /api/session with a session document (its bookmarks, notes, view
  // and probe settings; runs and inputs are the server's): written to the
  // file when there is one; answers {"saved": PATH|null, "document"}.
  // `runs`: the runs served now (name, paths), in the UI's order;
  // `inputs`: the model inputs the server offers for re-runs.
  HttpResponse Handle(const HttpRequest& request,
                      const std::vector<SavedRun>& runs,
                      const std::vector<std::string>& inputs);

  const std::string& path() const { return path_; }

 private:
  std::mutex mutex_;
  std::string path_;
  std::optional<SavedSession> restored_;
  // The last document saved (GET answers it after a save).
  std::optional<SavedSession> saved_;
};

}  // namespace mi::server
