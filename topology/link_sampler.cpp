#include "topology/link_sampler.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <system_error>
#include <utility>

#include "model/device.hpp"
#include "model/link.hpp"
#include "topology/sysfs_reader.hpp"

namespace pcieval {
namespace {

// An errno no system call returns: the name is not a regular file.
constexpr int kNotRegularFile = -1;

// "32.0 GT/s PCIe\n" and "16\n": anything longer is not a link attribute.
constexpr std::size_t kLinkAttributeBytes = 64;

// A round is a few dozen readings; reserving for a minute of rounds up front
// keeps the thread from reallocating while copies run.
constexpr std::size_t kReservedRounds = 1200;

double seconds_since(std::chrono::steady_clock::time_point epoch) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch).count();
}

std::optional<PcieGen> read_speed(const std::string& path) {
  std::array<char, kLinkAttributeBytes> buffer{};
  const SysfsAttribute read = read_sysfs_attribute(path.c_str(), buffer);
  if (read.error != 0) return std::nullopt;
  auto gen = parse_sysfs_link_speed(read.text);
  if (!gen) return std::nullopt;
  return gen.value();
}

std::optional<int> read_width(const std::string& path) {
  std::array<char, kLinkAttributeBytes> buffer{};
  const SysfsAttribute read = read_sysfs_attribute(path.c_str(), buffer);
  if (read.error != 0) return std::nullopt;
  auto width = parse_sysfs_link_width(read.text, kCurrentLinkWidth);
  if (!width) return std::nullopt;
  return width.value();
}

}  // namespace

SysfsAttribute read_sysfs_attribute(const char* path, std::span<char> buffer) noexcept {
  SysfsAttribute result;
  // Opened without blocking and refused unless a regular file, as in
  // sysfs_reader.cpp: a FIFO in an attribute's place would otherwise stop
  // the sampler thread, and with it the run, for good.
  const int fd = ::open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    result.error = errno;
    return result;
  }
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    result.error = kNotRegularFile;
    ::close(fd);
    return result;
  }
  std::size_t size = 0;
  while (true) {
    if (size == buffer.size()) {
      // Full: one more byte would say whether the file is longer, but an
      // attribute that fills the buffer is already not what was expected.
      result.error = EFBIG;
      break;
    }
    const ssize_t n = ::read(fd, buffer.data() + size, buffer.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      result.error = errno;
      break;
    }
    if (n == 0) break;
    size += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (result.error == 0) result.text = std::string_view(buffer.data(), size);
  return result;
}

std::string describe_read_error(int error, const std::string& path) {
  if (error == ENOENT) return path + " missing";
  if (error == EACCES || error == EPERM) return "permission denied reading " + path;
  if (error == EFBIG) return path + " is longer than a sysfs attribute should be";
  if (error == kNotRegularFile) return path + " is not a regular file, not a sysfs attribute";
  // generic_category's message is strerror's text without its thread-safety
  // trap, and this runs beside the sampler thread.
  return std::generic_category().message(error) + " reading " + path;
}

LinkSampler::LinkSampler(LinkSamplerOptions options)
    : options_(std::move(options)), epoch_(std::chrono::steady_clock::now()) {
  const std::filesystem::path devices = options_.sysfs_root / "bus" / "pci" / "devices";
  ports_.reserve(options_.ports.size());
  for (const PciAddress& port : options_.ports) {
    const std::filesystem::path dir = devices / to_string(port);
    ports_.push_back({port, (dir / kCurrentLinkSpeed).string(), (dir / kCurrentLinkWidth).string()});
  }
  if (options_.nvml != nullptr) {
    gpus_.reserve(options_.nvml_gpus.size());
    for (const PciAddress& gpu : options_.nvml_gpus) {
      auto device = options_.nvml->find_gpu(gpu);
      gpus_.push_back({gpu, device.ok() ? std::optional<NvmlDevice>(device.value()) : std::nullopt});
    }
  }
}

LinkSampler::~LinkSampler() { static_cast<void>(stop()); }

Status LinkSampler::start() {
  if (thread_.joinable()) return make_error("link sampler already running");
  {
    const std::lock_guard lock(mutex_);
    stop_requested_ = false;
  }
  samples_.clear();
  samples_.reserve((ports_.size() + gpus_.size()) * kReservedRounds);
  epoch_ = std::chrono::steady_clock::now();
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& error) {
    // std::thread reports a failed pthread_create only by throwing.
    return make_error(std::string("link sampler thread could not start: ") + error.what());
  }
  return ok_status();
}

std::vector<LinkSample> LinkSampler::stop() {
  if (!thread_.joinable()) return {};
  {
    const std::lock_guard lock(mutex_);
    stop_requested_ = true;
  }
  wake_.notify_all();
  thread_.join();
  return std::exchange(samples_, {});
}

std::vector<LinkSample> LinkSampler::sample_once() const {
  std::vector<LinkSample> samples;
  samples.reserve(ports_.size() + gpus_.size());
  sample_into(samples);
  return samples;
}

void LinkSampler::sample_into(std::vector<LinkSample>& out) const {
  // Each sample is stamped and gated when it is read, not once per round: a
  // copy may start or end between the first port and the last.
  const auto loaded = [this](const PciAddress& port) { return options_.under_load && options_.under_load(port); };
  for (const SysfsPort& port : ports_) {
    LinkSample sample;
    sample.port = port.address;
    sample.source = SampleSource::kSysfs;
    sample.under_load = loaded(port.address);
    sample.speed = read_speed(port.speed_path);
    sample.width = read_width(port.width_path);
    sample.t_s = seconds_since(epoch_);
    out.push_back(sample);
  }
  for (const NvmlGpu& gpu : gpus_) {
    LinkSample sample;
    sample.port = gpu.address;
    sample.source = SampleSource::kNvml;
    sample.under_load = loaded(gpu.address);
    if (gpu.device) {
      const NvmlCurrentLink link = options_.nvml->read_current_link(*gpu.device);
      if (link.gen) {
        auto gen = gen_from_number(*link.gen);
        if (gen) sample.speed = gen.value();
      }
      if (link.width && is_valid_link_width(*link.width)) sample.width = link.width;
    }
    sample.t_s = seconds_since(epoch_);
    out.push_back(sample);
  }
}

void LinkSampler::run() noexcept {
  // Deadlines advance by whole periods from the start, so rounds keep their
  // rhythm; a round that overran skips the deadlines it missed instead of
  // firing a burst of rounds back to back.
  // A zero or negative period would spin; a millisecond is already far
  // finer than any link change worth seeing.
  const auto period = std::max(options_.period, std::chrono::milliseconds(1));
  auto next = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  // The first round runs even when stop() came before the thread got going,
  // so every start()/stop() pair, however short the copy, yields a reading.
  do {
    lock.unlock();
    sample_into(samples_);
    const auto now = std::chrono::steady_clock::now();
    next += period;
    while (next <= now) next += period;
    lock.lock();
    wake_.wait_until(lock, next, [this] { return stop_requested_; });
  } while (!stop_requested_);
}

std::vector<PciAddress> ports_to_sample(const Evidence& evidence) {
  std::vector<PciAddress> ports;
  const auto add = [&ports](const PciAddress& address) {
    if (std::find(ports.begin(), ports.end(), address) == ports.end()) ports.push_back(address);
  };
  for (const DeviceRecord& record : evidence.devices) {
    if (record.function.kind != DeviceKind::kGpu) continue;
    for (const Link& link : record.path) {
      add(link.downstream);
      add(link.upstream);
    }
  }
  return ports;
}

std::vector<PciAddress> gpus_to_sample(const Evidence& evidence) {
  std::vector<PciAddress> gpus;
  for (const DeviceRecord& record : evidence.devices) {
    if (record.function.kind == DeviceKind::kGpu) gpus.push_back(record.function.bdf);
  }
  return gpus;
}

}  // namespace pcieval
