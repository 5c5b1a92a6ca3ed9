// Tests that use libtorch include this instead of support/catch.hpp:
// libtorch's c10/util/logging_is_not_google_glog.h defines a glog-style CHECK
// that aborts on failure and is no Catch assertion (so it is neither counted
// nor reported). Catch2's CHECK must be the one in force.
#pragma once
#include <torch/torch.h>
#undef CHECK
#include "support/catch.hpp"
