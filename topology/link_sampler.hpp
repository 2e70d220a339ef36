// Samples the negotiated state of links while probes run. Idle NVIDIA GPUs
// lower their link to Gen1 on purpose (PCIE-FACTS 6.1), so only a reading
// taken while a copy was running says what the link can do; the sampler
// records, with each reading, whether one was.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "model/evidence.hpp"
#include "model/pci_address.hpp"
#include "model/result.hpp"
#include "model/samples.hpp"
#include "topology/nvml.hpp"

namespace pcieval {

// One read of a small sysfs attribute: one open, one or a few reads into the
// caller's buffer, one close, no allocation. `text` views the caller's buffer.
struct SysfsAttribute {
  int error = 0;  // 0, or the errno of open/read (EFBIG: longer than the buffer; -1: not a regular file)
  std::string_view text;
};
[[nodiscard]] SysfsAttribute read_sysfs_attribute(const char* path, std::span<char> buffer) noexcept;

// "permission denied reading <path>", "<path> missing", or the errno's text.
[[nodiscard]] std::string describe_read_error(int error, const std::string& path);

struct LinkSamplerOptions {
  std::filesystem::path sysfs_root = "/sys";
  // Read through sysfs current_link_speed / current_link_width: GPUs and the
  // bridge ports on their paths (see ports_to_sample).
  std::vector<PciAddress> ports;
  // Read through NVML's current generation / width when `nvml` is given.
  std::vector<PciAddress> nvml_gpus;
  const NvmlReader* nvml = nullptr;  // not owned; must outlive the sampler
  // Whether a copy runs right now on a GPU at or below the port about to be
  // read (the GPU itself for its NVML reading). Called from the sampler
  // thread, so it must be thread-safe. Empty: never.
  std::function<bool(const PciAddress& port)> under_load;
  std::chrono::milliseconds period{50};
};

// Reads every port (and GPU through NVML) once per period on one background
// thread between start() and stop().
//
// Why this cannot disturb what it measures: each reading is a small file read
// (the kernel reads LnkSta with one config-space read, a few bytes on the
// link) or one NVML query, and the thread sleeps between rounds, so on a link
// moving tens of GB/s the sampler's traffic and CPU time are noise.
class LinkSampler {
 public:
  // Resolves each NVML GPU's handle once; a GPU NVML does not know samples
  // as unreadable (nullopt) in every round rather than vanishing.
  explicit LinkSampler(LinkSamplerOptions options);
  // The thread refers to this object: neither copyable nor movable.
  LinkSampler(const LinkSampler&) = delete;
  LinkSampler& operator=(const LinkSampler&) = delete;
  LinkSampler(LinkSampler&&) = delete;
  LinkSampler& operator=(LinkSampler&&) = delete;
  // Stops and joins the thread; samples not collected by stop() are dropped.
  ~LinkSampler();

  // Starts the background thread; t_s of later samples counts from here.
  // Errors: already running, or the thread could not be created.
  [[nodiscard]] Status start();

  // Stops and joins the thread and returns the samples taken since start(), in
  // time order: at least one round, however soon it follows start(). Safe to
  // call when not running (returns nothing).
  [[nodiscard]] std::vector<LinkSample> stop();

  [[nodiscard]] bool running() const { return thread_.joinable(); }

  // One synchronous round: a sample per port (sysfs) then per NVML GPU, each
  // stamped with seconds since the last start() (since construction before
  // the first). A failed read gives a sample with speed and width nullopt.
  // Safe to call while the thread runs.
  [[nodiscard]] std::vector<LinkSample> sample_once() const;

 private:
  struct SysfsPort {
    PciAddress address;
    std::string speed_path;  // built once: no path arithmetic in a round
    std::string width_path;
  };
  struct NvmlGpu {
    PciAddress address;
    std::optional<NvmlDevice> device;  // nullopt: NVML did not know it
  };

  void sample_into(std::vector<LinkSample>& out) const;
  void run() noexcept;

  LinkSamplerOptions options_;
  std::vector<SysfsPort> ports_;
  std::vector<NvmlGpu> gpus_;
  // Written by start() before the thread starts; read by the thread and by
  // sample_once() only while nothing writes it.
  std::chrono::steady_clock::time_point epoch_;

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_requested_ = false;  // guarded by mutex_
  // Owned by the thread while it runs; handed over by join() in stop().
  std::vector<LinkSample> samples_;
};

// The ports to sample for an Evidence: for each GPU's device record, both ends
// of every link of its path (the GPU, its ports, up to the root port), each
// once, in the order first met.
[[nodiscard]] std::vector<PciAddress> ports_to_sample(const Evidence& evidence);

// The GPUs of an Evidence, in its order, for NVML sampling.
[[nodiscard]] std::vector<PciAddress> gpus_to_sample(const Evidence& evidence);

}  // namespace pcieval
