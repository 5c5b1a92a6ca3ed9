// zero_choose: which partitioner and layout for my model on my cluster, at
// what memory and step time. Every partitioner (or a list) at every world
// size and shard group asked for is planned in memory, as zero_bench
// --plan-only plans it, priced on a described cluster as zero_analyze
// --predict prices it, and ranked best first: no mpirun, no files but --html.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <set>

#include "candidates.hpp"
#include "choose_report.hpp"
#include "ranking.hpp"
#include "src/analyze/output_path.hpp"
#include "src/analyze/report.hpp"
#include "src/common/atomic_file.hpp"
#include "src/common/cli_choice.hpp"
#include "src/common/guarded_main.hpp"
#include "src/run/constraints.hpp"
#include "src/run/model_selection.hpp"

namespace {

struct Options {
  std::vector<std::string> world_sizes;
  std::string cluster, models, partitioners = "all", shard_groups = "W,node", html, expert_parallel = "1";
  std::optional<zb::GradSync> grad_sync;  // unset: ZeRO's reduce-scatter (all-reduce for none)
  std::optional<zb::Dtype> grad_dtype;
  zb::Format format = zb::Format::kText;
  bool force = false;
};

// "a,b" -> {a, b}; an empty piece is refused, not skipped.
std::vector<std::string> comma_list(const std::string& option, const std::string& text, const std::string& example) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    if (comma == start) throw zb::UsageError(option + " '" + text + "': an empty item; give e.g. " + example);
    out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  std::set<std::string> seen;
  for (const auto& item : out)
    if (!seen.insert(item).second) throw zb::UsageError(option + " '" + text + "': '" + item + "' is given twice");
  return out;
}

// Every registered partitioner but none (DDP: it shards nothing), or the list given.
std::vector<const zb::PartitionerEntry*> chosen_partitioners(const std::string& list) {
  std::vector<const zb::PartitionerEntry*> out;
  if (list == "all") {
    for (const auto& p : zb::partitioners())
      if (p.granularity != zb::Granularity::kReplicated) out.push_back(&p);
    return out;
  }
  for (const auto& name : comma_list("--partitioners", list, "lpt,flat (see zero_bench --list-partitioners)"))
    out.push_back(&zb::find_partitioner(name));
  return out;
}

// A --shard-groups size: a positive integer.
int shard_group_size(const std::string& item) {
  try {
    return zb::parse_world_size(item);
  } catch (const zb::UsageError&) {
    throw zb::UsageError("--shard-groups: '" + item + "' is not W, node or a group size (a positive integer, e.g. 16)");
  }
}

// The shard groups asked for at W: "W" (one group of every rank), "node" (the description's ranks per node; W
// itself where one node holds every rank), or G; a G that does not divide W, or is above it, is skipped with a
// note; a repeat is dropped.
std::vector<int> shard_groups_at(const std::vector<std::string>& spec, int world_size, int ranks_per_node,
                                 std::vector<std::string>& skipped) {
  std::vector<int> out;
  for (const std::string& item : spec) {
    const int g = item == "W"      ? world_size
                  : item == "node" ? std::min(ranks_per_node, world_size)
                                   : shard_group_size(item);
    if (g > world_size || world_size % g != 0) {
      skipped.push_back("shard group " + item + (item == "node" ? " (" + std::to_string(g) + " ranks)" : "") +
                        " skipped at W = " + std::to_string(world_size) + ": it does not divide W");
      continue;
    }
    if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  }
  return out;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += (out.empty() ? "" : "; ") + line;
  return out;
}

// An --expert-parallel size: a positive integer.
int expert_parallel_size(const std::string& item) {
  try {
    return zb::parse_world_size(item);
  } catch (const zb::UsageError&) {
    throw zb::UsageError("--expert-parallel: '" + item + "' is not an EP size (a positive integer, e.g. 8)");
  }
}

// EP > 1 plans one shard group of every rank, at a W that EP divides: what else was asked is skipped, once each.
void note_expert_layout_skipped(std::vector<std::string>& skipped, int ep, int g, int w) {
  const std::string note =
      w % ep != 0 ? "EP " + std::to_string(ep) + " skipped at W = " + std::to_string(w) + ": it does not divide W"
                  : "shard group " + std::to_string(g) + " skipped with EP " + std::to_string(ep) +
                        ": expert parallelism is planned with one shard group of every rank";
  if (std::find(skipped.begin(), skipped.end(), note) == skipped.end()) skipped.push_back(note);
}

void check_shard_group_spec(const std::vector<std::string>& spec) {
  for (const std::string& item : spec)
    if (item != "W" && item != "node") shard_group_size(item);  // throws naming the bad item
}

// Every candidate refused (a combination the constraint table refuses for every partitioner): no answer.
void refuse_an_empty_answer(const std::vector<zb::Choice>& choices) {
  for (const zb::Choice& c : choices)
    if (!c.ranked.empty()) return;
  throw zb::UsageError("no candidate applies: " + choices.front().refused.front().label() + ": " +
                       choices.front().refused.front().not_applicable);
}

zb::Assumptions assumptions(const Options& o, const zb::Config& q, const zb::ClusterDescription& cluster) {
  zb::Assumptions a;
  a.cluster = cluster.name + " (" + cluster.path + "), " + std::to_string(cluster.ranks_per_node) + " ranks per node";
  if (cluster.device_memory_bytes > 0)
    a.cluster += ", " + zb::fixed(cluster.device_memory_bytes / (1024.0 * 1024 * 1024), 1) + " GiB per device";
  a.cluster +=
      "; collectives as " + zb::library_choices().name(cluster.library) + " runs them (" + cluster.library_source + ")";
  a.step =
      zb::step_for(cluster, q.precision, q.optimizer, zb::MasterPath::kCast).priced_as + "; " + cluster.step_source;
  a.grad_sync = o.grad_sync ? zb::grad_sync_choices().name(*o.grad_sync) + " before each step (--grad-sync)"
                            : "reduce-scatter before each step (assumed: ZeRO's, each rank receiving the averaged "
                              "gradients it owns; --grad-sync sets another)";
  a.sync = q.sync == zb::SyncMode::kPerParam
               ? "whole tensors: one broadcast per parameter (--sync bucket: one per owner)"
               : "whole tensors: one broadcast bucket per owner (--sync bucket)";
  a.sync += "; ranges: one all-gather per segment";
  if (q.overlap) a.sync += "; overlapped with the step (--overlap)";
  a.searches = "optimal and cost search " + zb::fixed(q.time_limit_s, 3) +
               " s per plan (--time-limit); cost balances the step as priced above";
  return a;
}

std::string render(const zb::Table& t, zb::Format format) {
  if (format == zb::Format::kMarkdown) return zb::render_markdown(t);
  return zb::render_text(t);
}

// CSV: one table, each row prefixed with its model and W.
std::string render_csv(const std::vector<zb::Choice>& choices) {
  zb::Table all;
  for (const zb::Choice& choice : choices) {
    const zb::Table t = zb::choice_table(choice, true);
    if (all.header.empty()) {
      all.header = {"model", "world_size"};
      all.header.insert(all.header.end(), t.header.begin(), t.header.end());
    }
    for (const auto& row : t.rows) {
      std::vector<std::string> r{choice.model, std::to_string(choice.world_size)};
      r.insert(r.end(), row.begin(), row.end());
      all.rows.push_back(std::move(r));
    }
  }
  return zb::render_csv(all);
}

int run(int argc, char** argv) {
  CLI::App app{
      "zero_choose: which partitioner and shard group for your model on your cluster, at what memory and "
      "predicted step time (every candidate planned in memory, priced as zero_analyze --predict prices it)",
      "zero_choose"};
  Options o;
  zb::Config q;
  zb::add_text(app, "world_sizes", o.world_sizes, "world sizes W, e.g. 64 512", "one or more world sizes W")
      ->required();
  zb::add_text(app, "--cluster", o.cluster, "a cluster description file (docs/predict.md)",
               "the cluster to price on: ranks per node, the step, each collective within and across nodes")
      ->required();
  zb::add_text(app, "--models", o.models, "comma-separated model names (zero_bench --list-models)",
               "comma-separated models (default: ResNet50,ResNet152,BERT)");
  zb::add_text(app, "--model-file", q.model_files, "the path of a JSON manifest",
               "a JSON manifest of your model (repeatable; zero_bench's --model-file)")
      ->allow_extra_args(false);
  zb::add_text(app, "--partitioners", o.partitioners, "all, or comma-separated names",
               "all (default: every partitioner but none, which shards nothing) or a list, e.g. lpt,flat");
  zb::add_text(app, "--shard-groups", o.shard_groups, "comma-separated W, node or a group size",
               "the layouts: W (one shard group of every rank), node (a group per node, the description's "
               "ranks_per_node; replicas across nodes) or a size G (default: W,node)");
  zb::add_text(app, "--expert-parallel", o.expert_parallel, "comma-separated EP sizes, e.g. 1,8",
               "expert parallelism to plan for mixture-of-experts models: each EP > 1 holds 1/EP of the experts "
               "per rank, their state sharded over W / EP ranks (zero_bench's --expert-parallel; one shard group "
               "of every rank; default 1: none)");
  zb::add_choice(app, "--precision", q.precision.params, zb::precision_choices(),
                 "fp32 (default) | bf16: bf16 parameters and gradients, fp32 masters and state");
  zb::add_choice(app, "--grad-dtype", o.grad_dtype, zb::grad_dtype_choices(),
                 "the gradients' dtype (default: the --precision's)");
  zb::add_choice(app, "--optimizer", q.optimizer, zb::optimizer_choices(), "adam (default) | adamw | sgd | muon");
  zb::add_choice(app, "--grad-sync", o.grad_sync, zb::grad_sync_choices(),
                 "the gradient reduction priced before each step (default: reduce-scatter, ZeRO's; all-reduce for "
                 "none)");
  zb::add_choice(app, "--sync", q.sync, zb::sync_choices(),
                 "whole-tensor plans' parameter sync: per-param (default) | bucket");
  app.add_flag("--overlap", q.overlap, "the sync overlapped with the step, in buckets (zero_bench's --overlap)");
  zb::add_number(app, "--grad-bucket-mb", q.grad_bucket_mb, {0, false, 1e6, "must be above 0 and up to 1000000 (MB)"},
                 "gradient buckets of this many MB (default 25, as DDP)");
  q.time_limit_s = 1.0;
  zb::add_number(app, "--time-limit", q.time_limit_s, {0, false, zb::kMaxSeconds, "must be above 0 (seconds)"},
                 "optimal's and cost's search budget per plan (default 1 s here)");
  static const zb::Choices<zb::Format> formats{"--format",
                                               {{"text", zb::Format::kText},
                                                {"json", zb::Format::kJson},
                                                {"markdown", zb::Format::kMarkdown},
                                                {"csv", zb::Format::kCsv}}};
  zb::add_choice(app, "--format", o.format, formats, "text (default) | json | markdown | csv");
  zb::add_text(app, "--html", o.html, "the HTML file to write",
               "also write one self-contained page: the tables and the predicted step against W");
  app.add_flag("--force", o.force, "replace an existing --html file");
  if (!zb::parse_or_help(app, argc, argv)) return zb::kExitOk;
  std::vector<int> world_sizes;
  for (const auto& w : o.world_sizes) {
    const int parsed = zb::parse_world_size(w);
    if (std::find(world_sizes.begin(), world_sizes.end(), parsed) != world_sizes.end())
      throw zb::UsageError("world size " + std::to_string(parsed) + " is given twice");
    world_sizes.push_back(parsed);
  }
  if (!o.models.empty()) q.model_names = comma_list("--models", o.models, "Llama-2-7B,GPT2-XL");
  q.precision.grads = o.grad_dtype.value_or(q.precision.params);
  q.grad_sync = o.grad_sync.value_or(zb::GradSync::kReduceScatter);
  const std::vector<std::string> group_spec = comma_list("--shard-groups", o.shard_groups, "W,node,16");
  check_shard_group_spec(group_spec);
  std::vector<int> expert_sizes;
  for (const std::string& item : comma_list("--expert-parallel", o.expert_parallel, "1,8"))
    expert_sizes.push_back(expert_parallel_size(item));
  const auto entries = chosen_partitioners(o.partitioners);
  {  // the rows that relate the options alone (a partitioner and W of the question's, each candidate sets its own)
    zb::Config probe = q;
    probe.partitioner = entries.front()->name, probe.world_sizes = world_sizes;
    zb::enforce(zb::Stage::kCommandLine, zb::Facts{probe});
  }
  if (!o.html.empty()) zb::check_output_path("--html", o.html, o.force);
  const zb::ClusterDescription cluster = zb::load_cluster_description(o.cluster);
  const std::vector<zb::ModelSpec> models = zb::selected_models(q);

  const auto start = std::chrono::steady_clock::now();
  std::vector<zb::Choice> choices;
  std::size_t plans = 0;
  for (const zb::ModelSpec& model : models)
    for (const int w : world_sizes) {
      std::vector<std::string> skipped;
      std::vector<zb::Candidate> candidates;
      for (const int ep : expert_sizes)
        for (const int g : shard_groups_at(group_spec, w, cluster.ranks_per_node, skipped))
          for (const zb::PartitionerEntry* p : entries) {
            if (p->granularity == zb::Granularity::kReplicated && g != w) continue;  // none shards nothing: no groups
            if (ep > 1 && (g != w || w % ep != 0)) {
              note_expert_layout_skipped(skipped, ep, g, w);
              continue;
            }
            zb::Config question = q;
            question.expert_parallel = ep;
            // Assumed, the reduction is the one a step of this plan does: DDP's all-reduce for a replicated one.
            if (!o.grad_sync && p->granularity == zb::Granularity::kReplicated)
              question.grad_sync = zb::GradSync::kAllReduce;
            candidates.push_back(zb::evaluate_candidate(question, *p, model, w, g, cluster));
            ++plans;
          }
      if (candidates.empty() && expert_sizes != std::vector<int>{1})
        throw zb::UsageError("no candidate at W = " + std::to_string(w) + " for --expert-parallel " +
                             o.expert_parallel + " --shard-groups " + o.shard_groups + ": " + join(skipped) +
                             "; give an EP that divides W, with W among the shard groups");
      if (candidates.empty())
        throw zb::UsageError("--shard-groups " + o.shard_groups + ": none divides W = " + std::to_string(w) +
                             "; give W, node or a divisor of each world size");
      choices.push_back(zb::rank_candidates(std::move(candidates)));
      choices.back().model = model.name, choices.back().world_size = w;
      choices.back().layouts_skipped = std::move(skipped);
      choices.back().device_memory_bytes = cluster.device_memory_bytes;
    }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  refuse_an_empty_answer(choices);
  const zb::Assumptions assumed = assumptions(o, q, cluster);

  if (!o.html.empty()) zb::write_file_atomically(o.html, zb::choices_page(choices, assumed));
  if (o.format == zb::Format::kJson) {
    std::cout << zb::choices_json(choices, assumed, seconds).dump(2) << "\n";
    return zb::kExitOk;
  }
  if (o.format == zb::Format::kCsv) {
    std::cout << render_csv(choices);
    return zb::kExitOk;
  }
  const auto count = [](std::size_t n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  std::cout << "zero_choose: " << count(plans, "plan") << " (" << count(models.size(), "model") << ", "
            << count(world_sizes.size(), "world size") << ", " << count(entries.size(), "partitioner")
            << ", each layout) planned and priced in " << zb::fixed(seconds, 2)
            << " s: a prediction, not a measurement\n";
  const char* item = o.format == zb::Format::kMarkdown ? "- " : "";  // markdown: a list, not one paragraph
  for (const std::string& line : assumed.lines()) std::cout << item << line << "\n";
  for (const zb::Choice& choice : choices) {
    std::cout << "\n" << render(zb::choice_table(choice, false), o.format);
    for (const std::string& note : zb::choice_notes(choice)) std::cout << item << "note: " << note << "\n";
  }
  return zb::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return zb::guarded_main("zero_choose", [&] { return run(argc, argv); });
}
