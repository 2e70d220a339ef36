// Must compile: the control case, so the refusals above are about the arrows
// and not about a broken probe.
#include "model/link.hpp"
#include "validate/budget.hpp"
