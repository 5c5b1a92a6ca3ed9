// Lower bounds on the largest rank of any whole-tensor plan, for `optimal`.
// Pure arithmetic on tensor sizes; each check is a necessary condition for a
// plan whose largest rank is (at most) C, so a C that fails one is ruled out.
#pragma once
#include <chrono>
#include <cstdint>
#include <vector>

namespace zb {

// The simple bound: the mean rank (ceil(total / W)), the largest tensor, and
// with more tensors than ranks the W-th and (W+1)-th largest together (two of
// the W + 1 largest share a rank); rounded up to the sizes' gcd.
int64_t whole_tensor_simple_bound(const std::vector<int64_t>& sizes_desc, int world_size);

// The smallest C in [simple bound, below) that no check rules out, or `below`
// when all are ruled out (then a plan with largest rank `below` is optimal).
// Stops early at the deadline, returning a C that is still a valid bound.
int64_t whole_tensor_lower_bound(const std::vector<int64_t>& sizes_desc, int world_size, int64_t below,
                                 std::chrono::steady_clock::time_point deadline);

// The residue check on its own (exposed for tests): false when the tensors
// provably cannot be spread over W ranks with every rank at most C. For a
// modulus m (the gcd of all sizes times 2, 4, 8, ...), the tensors whose size
// m divides are treated as divisible blocks of m; the others ("residues")
// stay whole. A rank holding residues of total n has room for
// floor((C - n) / m) blocks, so the residues must be spread so that the
// ranks' room adds up to every block. Deciding that is a small search; past
// `node_budget` nodes it answers true (not ruled out).
bool residues_can_fit(const std::vector<int64_t>& sizes_desc, int world_size, int64_t c, uint64_t node_budget);

}  // namespace zb
