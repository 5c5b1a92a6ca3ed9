// Memory and communication implied by each rank's actual shard (pure
// arithmetic over a run's report; --memory and --comm of zero_analyze).
//
// Memory per rank, mixed precision (bf16 parameters and gradients, fp32
// master weights and Adam moments: 2 + 2 + 4 + 8 bytes per element; with
// fp32 gradient accumulation (--fp32-grads, or a run with --grad-dtype
// fp32) the gradients take 4), Ψ = model elements, n = the rank's elements
// (of a plan for its shard group of G ranks under --shard-group):
//   DP      (2 + g + 12)·Ψ            ZeRO-1  (2 + g)·Ψ + 12·n
//   ZeRO-2  2·Ψ + (g + 12)·n          ZeRO-3  (2 + g + 12)·n (MiCS with G)
// and the same with the ideal n = ceil(Ψ/G) (G = W without groups).
//
// Communication per step and rank, in the case's dtypes (g, p: 4 in fp32, 2
// in bf16), bandwidth-optimal ring collectives, R = W/G replicas:
//   DDP all-reduce of the gradients        2·(W-1)/W·Ψ·g sent (and received)
//   ZeRO-1 reduce-scatter + all-gather     (G-1)·S·(g + p) + 2·(R-1)/R·S·g,
//   (+ all-reduce across replicas)         S = the equal slot NCCL needs: the
//                                          largest rank (whole tensors) or the
//                                          plan's slot (ranges)
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "report.hpp"
#include "table.hpp"

namespace zb {

struct RankMemory {
  std::string rank;  // "0", "1", ..., or "ideal"
  int64_t elements = 0;
  int64_t dp = 0, zero1 = 0, zero2 = 0, zero3 = 0;
};
std::vector<RankMemory> memory_of_case(const CaseReport& c, bool fp32_grads);

struct RankComm {
  int rank = 0;
  int64_t elements = 0;
  int64_t ddp_allreduce = 0, zero1_rs_ag = 0, zero1_rs_ag_ideal = 0;
};
std::vector<RankComm> comm_of_case(const CaseReport& c);

// Every rank's row with `every_rank` (CSV, and the HTML page, which cuts large cases to quantile ranks itself);
// else each case's largest and smallest rank and the ideal.
Table memory_table(const std::vector<RunReport>& runs, bool fp32_grads, bool raw_bytes, bool every_rank);
Table comm_table(const std::vector<RunReport>& runs, bool raw_bytes);
nlohmann::ordered_json memory_json(const std::vector<RunReport>& runs, bool fp32_grads);
nlohmann::ordered_json comm_json(const std::vector<RunReport>& runs);

}  // namespace zb
