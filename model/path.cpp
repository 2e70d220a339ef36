#include "model/path.hpp"

namespace pcieval {

std::string_view to_string(LinkPosition position) {
  switch (position) {
    case LinkPosition::kDeviceLink:
      return "device_link";
    case LinkPosition::kUplink:
      return "uplink";
  }
  return "device_link";
}

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
