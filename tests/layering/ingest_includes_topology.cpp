// Must NOT compile: ingest/ turns captured text into evidence and depends on
// model/ only; building paths from it is app/'s job, with topology/'s pure
// functions. tests/CMakeLists.txt checks that the build refuses it.
#include "topology/pci_tree.hpp"
