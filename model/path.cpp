#include "model/path.hpp"

#include "model/enum_names.hpp"

namespace pcieval {

constexpr EnumNames<LinkPosition, 2> kLinkPositionNames{
    {{LinkPosition::kDeviceLink, "device_link"}, {LinkPosition::kUplink, "uplink"}}};
static_assert(names_every_value_in_order(kLinkPositionNames));

std::string_view to_string(LinkPosition position) { return name_of(kLinkPositionNames, position, "device_link"); }

Reading<LinkState> Link::expected() const {
  const auto down = downstream_end.capable();
  if (!down) return make_error("capability of " + to_string(downstream) + " unknown: " + down.error().message);
  const auto up = upstream_end.capable();
  if (!up) return make_error("capability of " + to_string(upstream) + " unknown: " + up.error().message);
  return lower_of(down.value(), up.value());
}

Reading<LinkState> Link::negotiated() const {
  auto down = downstream_end.negotiated();
  if (down) return down;
  auto up = upstream_end.negotiated();
  if (up) return up;
  return make_error("negotiated state unknown at both ends: " + to_string(downstream) + ": " + down.error().message +
                    "; " + to_string(upstream) + ": " + up.error().message);
}

}  // namespace pcieval
