// Used by report/ only: the tree of ports and devices that `pcieval topo`
// (topo_tree.cpp) and the HTML report's topology section (html.cpp) draw,
// each with lines of its own (plain text, markup).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "model/pci_address.hpp"

namespace pcieval {

// One line of the tree: a port or a device. Children are kept sorted by
// address so that devices under one port merge into one branch and print in
// address order. (A vector, because standard containers other than vector and
// list need a complete element type.)
struct AddressTree {
  PciAddress bdf;
  std::string line;
  std::vector<AddressTree> children;

  // The child at `address`, added with `text` as its line when there is none.
  AddressTree& child(const PciAddress& address, const std::string& text) {
    auto it = std::lower_bound(children.begin(), children.end(), address,
                               [](const AddressTree& node, const PciAddress& key) { return node.bdf < key; });
    if (it == children.end() || it->bdf != address) it = children.insert(it, AddressTree{address, text, {}});
    return *it;
  }
};

// One port or device of a path, with its line.
struct TreeStep {
  PciAddress bdf;
  std::string line;
};

// Adds a device's path, given bottom-up (the device first, its root port
// last), top-down below `root`: ports already in the tree are shared.
inline void insert_bottom_up(AddressTree& root, const std::vector<TreeStep>& bottom_up) {
  AddressTree* node = &root;
  for (auto step = bottom_up.rbegin(); step != bottom_up.rend(); ++step) node = &node->child(step->bdf, step->line);
}

}  // namespace pcieval
