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
  const auto down = downstream_end.negotiated();
  const auto up = upstream_end.negotiated();
  const bool down_has_link = !downstream_end.has_no_link();
  const bool up_has_link = !upstream_end.has_no_link();
  // A failed reading at an end that has link registers is missing or broken:
  // the other end's reading does not stand in for it (a device that reads
  // width 63 no longer answers, whatever the port above says).
  if (down_has_link && !down) {
    return make_error("negotiated state of " + to_string(downstream) + " unknown: " + down.error().message);
  }
  if (up_has_link && !up) {
    return make_error("negotiated state of " + to_string(upstream) + " unknown: " + up.error().message);
  }
  if (!down_has_link && !up_has_link) {
    return make_error("neither " + to_string(downstream) + " nor " + to_string(upstream) + " has link registers");
  }
  if (!up_has_link) return down;
  if (!down_has_link) return up;
  if (down.value() != up.value()) {
    return make_error("the two ends disagree: " + to_string(downstream) + " reads " + to_string(down.value()) + ", " +
                      to_string(upstream) + " reads " + to_string(up.value()));
  }
  return down;
}

std::optional<std::pair<LinkState, LinkState>> Link::disagreement() const {
  const auto down = downstream_end.negotiated();
  const auto up = upstream_end.negotiated();
  if (!down || !up || down.value() == up.value()) return std::nullopt;
  return std::pair{down.value(), up.value()};
}

}  // namespace pcieval
