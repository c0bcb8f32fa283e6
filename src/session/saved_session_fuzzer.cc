// Fuzzes the saved-session (.mis) reader: sessions are handed from one
// machine to another, so a crafted document must give a clear error or a
// session, never a crash. What the reader accepts writes back (absolute
// paths) to a document that reads again to the same text. A Status error
// is fine; a crash, a sanitizer report or kInternal is a bug.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/check.h"
#include "model_inspector/saved_session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  mi::StatusOr<mi::SavedSession> session =
      mi::ParseSavedSession(text, "/sessions", "fuzz.mis");
  if (!session.ok()) {
    MI_CHECK(session.status().code() != mi::StatusCode::kInternal);
    return 0;
  }
  const std::string json = mi::SavedSessionJson(*session, "");
  mi::StatusOr<mi::SavedSession> again =
      mi::ParseSavedSession(json, "/sessions", "fuzz-again.mis");
  MI_CHECK(again.ok());
  MI_CHECK(mi::SavedSessionJson(*again, "") == json);
  return 0;
}
