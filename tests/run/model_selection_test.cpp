// Which models a run covers: --models, the manifests given, and never a manifest dropped.
#include "src/run/model_selection.hpp"

#include "support/catch.hpp"
#include "support/temp_dir.hpp"

namespace zb {

TEST_CASE("a manifest that --models does not name runs after the named models, never dropped") {
  zbtest::TempDir tmp;
  const std::string mine = (tmp.path() / "mine.json").string();
  zbtest::write_text(mine, R"([{"name": "w", "shape": [3, 4]}])");
  Config config;
  config.model_names = {"ResNet50"};
  config.model_files = {mine};
  std::vector<std::string> names;
  for (const ModelSpec& m : selected_models(config)) names.push_back(m.name);
  CHECK(names == std::vector<std::string>{"ResNet50", "mine"});
  config.model_names = {"mine", "ResNet50"};  // named: it runs where --models puts it, once
  names.clear();
  for (const ModelSpec& m : selected_models(config)) names.push_back(m.name);
  CHECK(names == std::vector<std::string>{"mine", "ResNet50"});
}

}  // namespace zb
