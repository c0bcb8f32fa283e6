#pragma once

// A saved session (`.mis`): what a user set up in the web UI, kept in one
// small JSON file so that `model-inspector open session.mis` brings it back,
// on this machine or another one: the runs' input paths, the probe settings
// (patterns, triggers, what to keep, the inputs to run the model on),
// bookmarks and notes on nodes, and the view (the UI's URL state, the graph
// viewport, the statistic the graph is coloured by).
//
// Paths are stored relative to the folder of the .mis file (absolute only
// when no relative path exists, e.g. another drive), so a folder holding
// the session and its runs can be copied elsewhere. Format:
// docs/reference/saved-session.md, schema
// docs/reference/schemas/saved-session.schema.json.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/status.h"

namespace mi {

inline constexpr std::string_view kSavedSessionFormat =
    "model-inspector-session";
inline constexpr int kSavedSessionVersion = 1;
inline constexpr std::string_view kSavedSessionExtension = ".mis";

// One run: its files, as `open --run PATH...` takes them.
struct SavedRun {
  std::string name;
  // Absolute or relative to the working directory in memory; relative to
  // the .mis folder in the file.
  std::vector<std::string> paths;
};

// A node of a run's graph: by model node id at a level (ids are stable for
// one model file), with its name and op type to show and to check against.
struct SavedNodeRef {
  int32_t run = 0;
  std::string level;
  int64_t node = -1;
  std::string name;
  std::string op;
};

struct SavedNote {
  SavedNodeRef at;
  std::string text;
};

// The probe settings of the UI's re-run (`python3 -m
// model_inspector.runner`): node or probe patterns, triggers ("nan",
// "inf", "range:LO:HI", ...), what a probe keeps ("stats" | "tensor"), and
// the model inputs (.npy files) a re-run can use, with the one chosen.
struct SavedProbeSettings {
  std::vector<std::string> patterns;
  std::vector<std::string> triggers;
  std::string keep = "stats";
  std::vector<std::string> inputs;
  int32_t input = -1;  // index into inputs; -1 = none chosen
};

struct SavedViewport {
  double x = 0;
  double y = 0;
  double scale = 1;
};

struct SavedView {
  // The UI's URL hash without '#' (run, level, grouping, folding, selected
  // node, colour mode, bottom tab, ...; web/README.md "URL fields").
  std::string hash;
  // The main graph pane's camera: the world point at the pane's top-left
  // corner and the zoom.
  std::optional<SavedViewport> viewport;
  // Colour by probe statistic: the statistic ("nan", "mean", ...) or
  // compare metric shown.
  std::string probe_stat;
};

struct SavedSession {
  std::vector<SavedRun> runs;
  SavedProbeSettings probes;
  std::vector<SavedNodeRef> bookmarks;
  std::vector<SavedNote> notes;
  SavedView view;
};

// Whether `path` names a saved session (by its extension: the file is
// small JSON, read in full by ReadSavedSession).
bool IsSavedSessionPath(std::string_view path);

// Parses a session document. Relative paths are resolved against
// `base_dir` (the .mis file's folder); `origin` names the document in
// errors ("session.mis: runs[1].paths[0]: expected a string"). Unknown keys
// are ignored (a newer writer's additions); a newer major version is
// refused.
StatusOr<SavedSession> ParseSavedSession(std::string_view json,
                                         const std::string& base_dir,
                                         const std::string& origin);

// Reads a .mis file and checks that every run's path and every probe input
// exists: a missing one is a NotFound error naming it, as written and as
// resolved ("session.mis: run 0 (r1): input 'runs/r1' not found (looked
// for /home/u/runs/r1)").
StatusOr<SavedSession> ReadSavedSession(const std::string& path);

// The document of `session` with its paths relative to `base_dir`, or
// absolute when `base_dir` is empty (a session the UI downloads, whose
// folder is not known); pretty-printed JSON, keys in a fixed order.
std::string SavedSessionJson(const SavedSession& session,
                             const std::string& base_dir);

// Writes the document to `path` atomically (paths relative to its folder).
Status WriteSavedSession(const std::string& path, const SavedSession& session);

}  // namespace mi
