// The two graph levels of a session as the matching needs them, read
// through the public Session API: every node of a level (a "**" glob
// search lists them with their ids, which follow the file's node order),
// then each node's details (tensors, fused_from as the linker found it).

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model_inspector/compare.h"
#include "model_inspector/session.h"

namespace mi {
namespace {

constexpr size_t kMaxNodes = size_t{1} << 24;

StatusOr<std::vector<LevelNode>> ReadLevel(const Session& session,
                                           std::string_view level) {
  MI_ASSIGN_OR_RETURN(std::string listing,
                      session.SearchJson(level, "**", "glob", kMaxNodes));
  nlohmann::json j = nlohmann::json::parse(listing, nullptr, false);
  if (j.is_discarded() || !j.contains("matches")) {
    return InternalError("the node search answered no matches list");
  }
  std::vector<uint32_t> ids;
  for (const nlohmann::json& m : j["matches"]) {
    ids.push_back(m.value("id", 0u));
  }
  std::sort(ids.begin(), ids.end());
  std::vector<LevelNode> nodes;
  nodes.reserve(ids.size());
  for (uint32_t id : ids) {
    MI_ASSIGN_OR_RETURN(NodeDetailsResult d, session.NodeDetails(level, id));
    LevelNode n;
    n.name = std::move(d.name);
    n.op_type = std::move(d.op_type);
    n.domain = std::move(d.domain);
    for (const NodeValueInfo& v : d.inputs) {
      n.inputs.push_back(v.present ? v.name : std::string());
    }
    for (const NodeValueInfo& v : d.outputs) n.outputs.push_back(v.name);
    for (const NodeRefInfo& f : d.fused_from) n.fused_from.push_back(f.name);
    nodes.push_back(std::move(n));
  }
  return nodes;
}

}  // namespace

StatusOr<LevelGraphs> ReadLevelGraphs(const Session& session) {
  LevelGraphs graphs;
  std::vector<std::string> levels = session.Levels();
  auto has = [&levels](std::string_view l) {
    return std::find(levels.begin(), levels.end(), l) != levels.end();
  };
  if (has("framework")) {
    MI_ASSIGN_OR_RETURN(graphs.framework, ReadLevel(session, "framework"));
  }
  if (has("compiled")) {
    MI_ASSIGN_OR_RETURN(graphs.compiled, ReadLevel(session, "compiled"));
  }
  return graphs;
}

}  // namespace mi
