// kernels/ may depend on model/ only (DESIGN.md layout): CUDA code does not
// discover topology. This must fail to compile.
#include "topology/discover.hpp"
