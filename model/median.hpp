// The median of a list of numbers, the one definition pcieval uses (trial
// statistics, fleet groups and their MAD, the fleet all-reduce).
#pragma once

#include <span>

namespace pcieval {

// The middle value; of an even count, the mean of the middle two. Reorders
// `values` (a partial sort, O(n)). 0 for no values.
[[nodiscard]] double median_of(std::span<double> values);

}  // namespace pcieval
