// The files zero_bench --describe-cluster FILE.json writes: the description
// and, beside it, what it names (paths relative to it, as docs/predict.md's
// descriptions take them).
#pragma once
#include <string>

namespace zb {

struct DescriptionFiles {
  std::string description;  // FILE.json
  std::string intra_node;   // FILE.intra_node.txt: the tables within a node
  std::string inter_node;   // FILE.inter_node.txt: the tables across the nodes
  std::string step;         // FILE.step.json: the step model (a --calibrate cost model)
};

inline bool names_a_json_file(const std::string& path) {
  const std::string ext = ".json";
  const std::size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0;
}

// For a `description` path that names_a_json_file.
inline DescriptionFiles description_files(const std::string& description) {
  const std::string stem = description.substr(0, description.size() - 5);
  return {description, stem + ".intra_node.txt", stem + ".inter_node.txt", stem + ".step.json"};
}

}  // namespace zb
