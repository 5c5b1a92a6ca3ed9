// An optional value kept on the heap: std::optional's interface where its
// storage would be large and mostly empty. A RankResult of a plan-only run has
// no timings, and a case file of W = 16,384 ranks reads back 16,384 of them:
// an empty Boxed<Timings> takes 8 bytes where std::optional<Timings> takes over 800.
// Copies are deep (a value, not a shared handle).
#pragma once
#include <memory>
#include <utility>

namespace zb {

template <typename T>
class Boxed {
 public:
  using value_type = T;
  Boxed() = default;
  Boxed(T value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT: converts like std::optional
  Boxed(const Boxed& other) : value_(other ? std::make_unique<T>(*other) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) value_ = other ? std::make_unique<T>(*other) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(T value) {
    value_ = std::make_unique<T>(std::move(value));
    return *this;
  }
  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return value_.get(); }
  const T* operator->() const { return value_.get(); }
  void reset() { value_.reset(); }

 private:
  std::unique_ptr<T> value_;
};

}  // namespace zb
