// The tests' one include of Catch2, v2 (Debian 12's) or v3 (Debian 13's,
// Ubuntu 24.04's): tests/CMakeLists.txt finds either and sets
// ZB_CATCH2_MAJOR. With v3, the v2 names the tests use are provided:
// Catch::Contains / StartsWith / EndsWith (string matchers), Approx.
#pragma once
#if ZB_CATCH2_MAJOR == 3
#include <catch2/catch_all.hpp>

namespace Catch {
inline Matchers::StringContainsMatcher Contains(const std::string& text, CaseSensitive cs = CaseSensitive::Yes) {
  return Matchers::ContainsSubstring(text, cs);
}
using Matchers::EndsWith;
using Matchers::StartsWith;
namespace Detail {
using ::Catch::Approx;
}  // namespace Detail
}  // namespace Catch
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
