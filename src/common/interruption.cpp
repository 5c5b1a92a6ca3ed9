#include "interruption.hpp"

#include <nlohmann/json.hpp>

#include "json_input.hpp"
#include "record_checks.hpp"

namespace zb {

template <>
struct Schema<Interruption> {
  using I = Interruption;
  static const std::vector<Field<I>>& fields() {
    static const std::vector<Field<I>> f = {schema_tag<I>(),
                                            member("run", &I::run, Need::kRequired),
                                            member("run_id", &I::run_id),
                                            member("signal", &I::signal, Need::kRequired),
                                            member("sender", &I::sender, Need::kRequired),
                                            member("during", &I::during, Need::kRequired),
                                            member("world_size", &I::world_size),
                                            member("model", &I::model),
                                            member("time", &I::time),
                                            member("slurm_job_id", &I::slurm_job_id),
                                            member("cause", &I::cause)};
    return f;
  }
  static void after_read(I& i, const JsonSource& src, const std::string& where) {
    check_run_id(i.run_id, src, where + ".run_id");
    if (i.model) check_plain_name(*i.model, src, where + ".model");
    if (i.world_size && (*i.world_size < 1 || *i.world_size > kMaxWorldSize))
      src.fail(where + ".world_size " + std::to_string(*i.world_size) + " must be from 1 to " +
               std::to_string(kMaxWorldSize));
    if (i.slurm_job_id) check_slurm_id(*i.slurm_job_id, src, where + ".slurm_job_id");
    // Each text is printed inside one line of zero_analyze's error: a short one.
    for (const std::string* text : {&i.signal, &i.sender, &i.during})
      if (text->size() > 200) src.fail(where + ": a text of " + std::to_string(text->size()) + " bytes (at most 200)");
    if (i.cause && i.cause->size() > 400)
      src.fail(where + ".cause: a text of " + std::to_string(i.cause->size()) + " bytes (at most 400)");
  }
};

// Invalid UTF-8 (a scheduler's reason, a host name) is replaced, never a failed record.
std::string to_json_text(const Interruption& interruption) {
  return write_object(interruption).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Interruption interruption_from_json_text(const std::string& text, const std::string& source) {
  const JsonSource src{source};
  Interruption interruption;
  read_object(parse_json_input(text, "'" + src.file + "'"), interruption, src, "interrupted");
  return interruption;
}

std::string interruption_text(const Interruption& i) {
  std::string out = i.signal + " from " + i.sender + " during " + i.during;
  if (i.slurm_job_id) out += " (Slurm job " + *i.slurm_job_id + ")";
  if (!i.time.empty()) out += ", at " + i.time;
  if (i.cause) out += "; " + escape_control_characters(*i.cause);
  return out;
}

}  // namespace zb
