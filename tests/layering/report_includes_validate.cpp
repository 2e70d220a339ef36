// Must NOT compile: report/ renders the results document and depends on model/
// only; it never re-judges. tests/CMakeLists.txt checks that the build refuses it.
#include "validate/link_rules.hpp"
