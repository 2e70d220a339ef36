// Must NOT compile: validate/ is pure and may depend on model/ only
// (DESIGN.md, Layout). tests/CMakeLists.txt checks that the build refuses it.
#include "topology/discover.hpp"
