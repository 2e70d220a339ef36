// kernels/nccl_rank.hpp in a build without CUDA: every call an error saying
// so (AllReduceRank::create fails, so no object exists to call the rest on).
#include <string>

#include "kernels/cuda_device.hpp"
#include "kernels/nccl_rank.hpp"

namespace pcieval {
namespace {

Error no_cuda() { return make_error(std::string(kBuiltWithoutCudaMessage)); }

}  // namespace

Status use_cuda_device(int /*ordinal*/) { return no_cuda(); }
Result<AllReduceRank> AllReduceRank::create(int /*ordinal*/, int /*rank*/, std::size_t /*max_count*/) {
  return no_cuda();
}
Status AllReduceRank::prepare(std::size_t /*count*/, const PollPolicy& /*policy*/) { return no_cuda(); }
Result<bool> AllReduceRank::idle() const { return no_cuda(); }
Result<std::uint64_t> AllReduceRank::count_mismatches(std::size_t /*count*/, int /*ranks*/,
                                                      const PollPolicy& /*policy*/) const {
  return no_cuda();
}

}  // namespace pcieval
