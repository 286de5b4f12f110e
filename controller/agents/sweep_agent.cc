#include "controller/agents/sweep_agent.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace kiln::controller {

std::string Substitute(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string out = text;
  for (const auto& [name, value] : values) {
    const std::string key = absl::StrCat("{{", name, "}}");
    for (size_t pos = out.find(key); pos != std::string::npos; pos = out.find(key, pos)) {
      out.replace(pos, key.size(), value);
      pos += value.size();
    }
  }
  return out;
}

std::vector<std::map<std::string, std::string>> SweepAgent::Grid() const {
  std::vector<std::map<std::string, std::string>> grid = {{}};
  for (const auto& [name, values] : spec_.parameters) {
    std::vector<std::map<std::string, std::string>> next;
    for (const auto& point : grid) {
      for (const std::string& v : values) {
        auto p = point;
        p[name] = v;
        next.push_back(std::move(p));
      }
    }
    grid = std::move(next);
  }
  return grid;
}

v1::Solution SweepAgent::Instantiate(const std::map<std::string, std::string>& point) const {
  v1::Solution s = spec_.solution_template;
  std::string suffix;
  for (const auto& [name, values] : spec_.parameters) {
    absl::StrAppend(&suffix, "_", name, point.at(name));
  }
  s.set_name(absl::StrCat(Substitute(s.name(), point), suffix));
  if (s.author().empty()) s.set_author("kiln-sweep");
  for (v1::SourceFile& f : *s.mutable_sources()) f.set_content(Substitute(f.content(), point));
  return s;
}

AgentResponse SweepAgent::Generate(const AgentRequest& request) {
  std::map<std::string, std::string> center;
  nlohmann::json parsed = nlohmann::json::parse(request.incumbent_params_json, nullptr, false);
  if (parsed.is_object()) {
    for (const auto& [k, v] : parsed.items()) {
      if (v.is_string()) center[k] = v.get<std::string>();
    }
  }
  // Position of each value in its list, for a distance between points.
  auto index_of = [this](const std::string& name, const std::string& value) {
    for (const auto& [n, values] : spec_.parameters) {
      if (n != name) continue;
      auto it = std::find(values.begin(), values.end(), value);
      return it == values.end() ? -1 : static_cast<int>(it - values.begin());
    }
    return -1;
  };
  auto distance = [&](const std::map<std::string, std::string>& p) {
    if (center.empty()) return 0;
    int d = 0;
    for (const auto& [name, value] : p) {
      int a = index_of(name, value);
      int b = center.count(name) ? index_of(name, center.at(name)) : -1;
      d += (a < 0 || b < 0) ? 1000 : std::abs(a - b);
    }
    return d;
  };
  struct Entry {
    int distance;
    size_t order;
    std::map<std::string, std::string> point;
  };
  std::vector<Entry> untried;
  std::vector<std::map<std::string, std::string>> grid = Grid();
  for (size_t i = 0; i < grid.size(); ++i) {
    v1::Solution s = Instantiate(grid[i]);
    if (request.seen(ContentHash(s))) continue;
    untried.push_back({distance(grid[i]), i, grid[i]});
  }
  std::stable_sort(untried.begin(), untried.end(), [](const Entry& a, const Entry& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.order < b.order;
  });
  AgentResponse response;
  for (const Entry& e : untried) {
    if (static_cast<int>(response.candidates.size()) >= request.max_candidates) break;
    AgentCandidate c;
    c.solution = Instantiate(e.point);
    c.params_json = nlohmann::json(e.point).dump();
    response.candidates.push_back(std::move(c));
  }
  response.exhausted = untried.size() <= response.candidates.size();
  response.transcript = absl::StrCat("sweep: ", response.candidates.size(), " of ", untried.size(),
                                     " untried points of ", grid.size());
  return response;
}

}  // namespace kiln::controller
