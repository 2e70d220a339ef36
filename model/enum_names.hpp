// The names of an enum's values as one table, so that writing a name and
// reading it back (results documents, profiles, baselines) cannot drift
// apart, and every to_string of the model has the same shape.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "model/result.hpp"

namespace pcieval {

template <class E, std::size_t N>
using EnumNames = std::array<std::pair<E, std::string_view>, N>;

// The name of `value`, or `fallback` for a value the table lacks (a number
// cast to the enum).
template <class E, std::size_t N>
[[nodiscard]] constexpr std::string_view name_of(const EnumNames<E, N>& names, E value,
                                                 std::string_view fallback = "unknown") {
  for (const auto& [e, name] : names) {
    if (e == value) return name;
  }
  return fallback;
}

// The value named `text`; the error says "unknown <what> '<text>'".
template <class E, std::size_t N>
[[nodiscard]] Result<E> value_of(const EnumNames<E, N>& names, std::string_view text, std::string_view what) {
  for (const auto& [e, name] : names) {
    if (name == text) return e;
  }
  return make_error("unknown " + std::string(what) + " '" + std::string(text) + "'");
}

// True when the table lists the values 0, 1, 2, ... in order. With a
// static_assert that its size is the last enumerator's value plus one, that
// proves every value of a gapless enum has a name, as a switch's -Wswitch did.
template <class E, std::size_t N>
[[nodiscard]] constexpr bool names_every_value_in_order(const EnumNames<E, N>& names) {
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(names[i].first) != i) return false;
  }
  return true;
}

}  // namespace pcieval
