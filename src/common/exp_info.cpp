// exp_info.json: a run directory's completion marker and its table.
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "json_input.hpp"
#include "record_checks.hpp"

namespace zb {

template <>
struct Schema<ExpInfo> {
  using E = ExpInfo;
  static const std::vector<Field<E>>& fields() {
    static const std::vector<Field<E>> f = {schema_tag<E>(),
                                            member("run", &E::run, Need::kRequired),
                                            member("partitioner", &E::partitioner, Need::kRequired),
                                            member("mode", &E::mode, Need::kRequired),
                                            member("world_sizes", &E::world_sizes, Need::kRequired),
                                            member("models", &E::models, Need::kRequired),
                                            member("time", &E::time),
                                            member("run_id", &E::run_id),
                                            member("slurm_job_id", &E::slurm_job_id)};
    return f;
  }
  static void after_read(E& e, const JsonSource& src, const std::string& where) {
    check_plain_name(e.partitioner, src, where + ".partitioner");
    check_one_of(e.mode, {kModes[0], kModes[1]}, src, where + ".mode");
    check_run_id(e.run_id, src, where + ".run_id");
    if (e.slurm_job_id) check_slurm_id(*e.slurm_job_id, src, where + ".slurm_job_id");
    if (e.world_sizes.empty()) src.fail(where + ".world_sizes is empty; a run lists the world sizes it ran");
    if (e.models.empty()) src.fail(where + ".models is empty; a run lists the models it ran");
    std::set<int> world_sizes;
    for (const int w : e.world_sizes) {
      if (w < 1 || w > kMaxWorldSize)
        src.fail(where + ".world_sizes holds " + std::to_string(w) + "; world sizes run from 1 to " +
                 std::to_string(kMaxWorldSize));
      if (!world_sizes.insert(w).second)
        src.fail(where + ".world_sizes lists " + std::to_string(w) + " twice; valid: each world size once");
    }
    std::set<std::string> models;
    for (std::size_t i = 0; i < e.models.size(); ++i) {
      check_plain_name(e.models[i], src, where + ".models[" + std::to_string(i) + "]");
      if (!models.insert(e.models[i]).second)
        src.fail(where + ".models lists '" + e.models[i] + "' twice; valid: each model once");
    }
  }
};

std::string to_json_text(const ExpInfo& info) { return write_object(info).dump(2) + "\n"; }

ExpInfo exp_info_from_json_text(const std::string& text, const std::string& source) {
  const JsonSource src{source};
  ExpInfo info;
  read_object(parse_json_input(text, "'" + src.file + "'"), info, src, "exp_info");
  return info;
}

}  // namespace zb
