// Must NOT compile: ingest/ turns captured text into evidence and depends on
// model/ only (the PCI tree's pure functions are model/'s); reading sysfs is
// topology/'s. tests/CMakeLists.txt checks that the build refuses it.
#include "topology/sysfs_reader.hpp"
