#include "topology/sysfs_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <system_error>

#include "model/link.hpp"
#include "model/port_settings.hpp"
#include "support/deadline_worker.hpp"
#include "topology/pci_config.hpp"

namespace pcieval {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMaxLinkSpeed = "max_link_speed";
constexpr std::string_view kMaxLinkWidth = "max_link_width";

// A function that fell off the bus reads all ones; the 6-bit width field of
// LnkSta/LnkCap then reads 63.
constexpr int kAllOnesWidth = 63;

// sysfs attributes are one page at most; anything longer is not an attribute.
constexpr std::size_t kMaxAttributeBytes = std::size_t{64} * 1024;

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// Garbage attributes can hold anything; quote them so a report stays one line.
std::string quote(std::string_view text) {
  constexpr std::size_t kMaxQuoted = 40;
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < kMaxQuoted; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  if (text.size() > kMaxQuoted) out += "...";
  return out + "'";
}

// The raw outcome of reading one file: its text, or the errno that stopped it.
// kNotRegular is no errno: the name is a FIFO, a device or a socket.
constexpr int kNotRegular = -1;
struct FileRead {
  int error = 0;
  std::string text;
  const char* file_type = "";  // with kNotRegular: what the name is instead
};

const char* file_type_name(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "of an unknown type";
}

// Where a function's read on the worker thread has got to: the caller names
// the file a hung read is stuck in, and keeps the identity read before it.
struct SysfsReadProgress {
  std::mutex mutex;
  std::string file;                                     // the attribute being read now
  std::optional<PciFunction> identified;                // once vendor, device and class are read
  std::function<void(const std::string&)> before_read;  // SysfsReadOptions::before_read
};

// One function's sysfs directory, opened once: every attribute is then opened
// relative to it (openat), so the kernel resolves one name per attribute
// instead of the whole path. On a 77-function tree that is most of the time
// pcieval spends outside hwloc.
class AttributeDirectory {
 public:
  explicit AttributeDirectory(fs::path path, SysfsReadProgress* progress = nullptr)
      : path_(std::move(path)), fd_(::open(path_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)), progress_(progress) {}
  AttributeDirectory(const AttributeDirectory&) = delete;
  AttributeDirectory& operator=(const AttributeDirectory&) = delete;
  ~AttributeDirectory() {
    if (fd_ >= 0) ::close(fd_);
  }

  [[nodiscard]] const fs::path& path() const { return path_; }

  // open/read rather than iostreams: the errno is the reason the operator needs
  // ("permission denied" on a locked-down node, EINVAL when config space is
  // gone). A sysfs attribute arrives in one read of at most a page, so a short
  // read ends the file and saves a second call per attribute.
  //
  // A sysfs attribute is a regular file. Anything else in its place (a FIFO
  // without a writer, a device file) could block open or read for ever, so
  // it is opened without blocking and refused on its type before any read.
  [[nodiscard]] FileRead read(std::string_view name) const {
    FileRead result;
    const std::string file(name);
    if (progress_ != nullptr) {
      {
        const std::lock_guard lock(progress_->mutex);
        progress_->file = file;
      }
      if (progress_->before_read) progress_->before_read((path_ / name).string());
    }
    const int fd = fd_ >= 0 ? ::openat(fd_, file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
    if (fd < 0) {
      result.error = fd_ >= 0 ? errno : open_error_;
      return result;
    }
    struct stat status {};
    if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
      result.error = kNotRegular;
      result.file_type = file_type_name(status.st_mode);
      ::close(fd);
      return result;
    }
    std::array<char, 4096> buffer{};
    while (result.text.size() < kMaxAttributeBytes) {
      const ssize_t n = ::read(fd, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        result.error = errno;
        break;
      }
      result.text.append(buffer.data(), static_cast<std::size_t>(n));
      if (static_cast<std::size_t>(n) < buffer.size()) break;
    }
    ::close(fd);
    return result;
  }

  // The target of the symlink `name` (iommu_group), or the errno that stopped
  // reading it (ENOENT: there is none).
  [[nodiscard]] FileRead read_link(std::string_view name) const {
    FileRead result;
    if (fd_ < 0) {
      result.error = open_error_;
      return result;
    }
    const std::string file(name);
    std::array<char, 4096> buffer{};
    const ssize_t n = ::readlinkat(fd_, file.c_str(), buffer.data(), buffer.size());
    if (n < 0) {
      result.error = errno;
    } else {
      result.text.assign(buffer.data(), static_cast<std::size_t>(n));
    }
    return result;
  }

  [[nodiscard]] bool has_entry(std::string_view name) const {
    struct stat ignored {};
    const std::string file(name);
    return fd_ >= 0 && ::fstatat(fd_, file.c_str(), &ignored, AT_SYMLINK_NOFOLLOW) == 0;
  }

 private:
  fs::path path_;
  int fd_;
  int open_error_ = fd_ < 0 ? errno : 0;
  SysfsReadProgress* progress_;
};

// The path is built only for an error message: on the good path no
// std::filesystem arithmetic runs, which was a sixth of a check's instructions.
Result<std::string> to_result(FileRead read, const AttributeDirectory& dir, std::string_view name) {
  if (read.error == 0) return std::move(read.text);
  if (read.error == ENOENT) return make_error(std::string(name) + " missing");
  const fs::path path = dir.path() / name;
  if (read.error == kNotRegular) return make_error(path.string() + " is " + read.file_type + ", not a sysfs attribute");
  if (read.error == EACCES || read.error == EPERM) return make_error("permission denied reading " + path.string());
  return make_error(std::string(std::strerror(read.error)) + " reading " + path.string());
}

Result<std::string> read_file(const AttributeDirectory& dir, std::string_view name) {
  return to_result(dir.read(name), dir, name);
}

Result<std::uint32_t> parse_hex_attribute(std::string_view text, std::string_view file, std::uint32_t max_value) {
  const std::string_view trimmed = trim(text);
  std::string_view digits = trimmed;
  if (digits.starts_with("0x") || digits.starts_with("0X")) digits.remove_prefix(2);
  std::uint32_t value = 0;
  const auto* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value, 16);
  if (digits.empty() || ec != std::errc{} || ptr != end || value > max_value) {
    return make_error(std::string(file) + ": unrecognised value " + quote(trimmed));
  }
  return value;
}

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end) return std::nullopt;
  return value;
}

template <class T, class Parse>
Reading<T> read_attribute(const AttributeDirectory& dir, std::string_view file, Parse parse) {
  auto text = read_file(dir, file);
  if (!text) return text.error();
  return parse(text.value());
}

Reading<PcieGen> parse_speed(Result<std::string> text, std::string_view file) {
  if (!text) return text.error();
  auto gen = parse_sysfs_link_speed(text.value());
  if (!gen) return make_error(std::string(file) + ": " + gen.error().message);
  return gen;
}

Reading<int> parse_width(Result<std::string> text, std::string_view file) {
  if (!text) return text.error();
  return parse_sysfs_link_width(text.value(), file);
}

// Link attributes appear only on PCIe functions. None at all: no PCIe link.
// Some but not all: a kernel or permission problem, reported per file.
std::optional<PortLinkReading> read_link(const AttributeDirectory& dir) {
  const std::array<std::string_view, 4> files = {kMaxLinkSpeed, kMaxLinkWidth, kCurrentLinkSpeed, kCurrentLinkWidth};
  std::array<FileRead, 4> reads;
  bool any = false;
  for (std::size_t i = 0; i < files.size(); ++i) {
    reads[i] = dir.read(files[i]);
    any = any || reads[i].error != ENOENT;
  }
  if (!any) return std::nullopt;
  PortLinkReading link;
  link.max_speed = parse_speed(to_result(std::move(reads[0]), dir, files[0]), files[0]);
  link.max_width = parse_width(to_result(std::move(reads[1]), dir, files[1]), files[1]);
  link.current_speed = parse_speed(to_result(std::move(reads[2]), dir, files[2]), files[2]);
  link.current_width = parse_width(to_result(std::move(reads[3]), dir, files[3]), files[3]);
  return link;
}

// The port's payload sizes, ASPM and ACS from its config file. A live /sys
// gives an unprivileged reader 64 bytes, which parse_port_settings turns into
// kSettingsNeedRoot: never read as "off".
Reading<PortSettings> read_settings(const AttributeDirectory& dir) {
  constexpr std::string_view kConfig = "config";
  auto bytes = to_result(dir.read(kConfig), dir, kConfig);
  if (!bytes) return make_error("config space not read: " + bytes.error().message);
  const std::string& text = bytes.value();
  return parse_port_settings(
      std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

// The device's IOMMU group: `iommu_group` links to
// <sysfs>/kernel/iommu_groups/N, whose `type` (kernels from 5.11) says whether
// its DMA is translated. No link: the device has no group, the IOMMU is off
// for it. nullopt (with a note) when the link is there but cannot be read.
std::optional<IommuReading> read_iommu(const AttributeDirectory& dir, const fs::path& sysfs_root,
                                       std::vector<std::string>& notes) {
  constexpr std::string_view kGroupLink = "iommu_group";
  FileRead link = dir.read_link(kGroupLink);
  if (link.error == ENOENT) return IommuReading{};
  if (link.error != 0) {
    notes.push_back("IOMMU group not read: " + std::string(std::strerror(link.error)) + " reading " +
                    (dir.path() / kGroupLink).string());
    return std::nullopt;
  }
  const std::string name = fs::path(link.text).filename().string();
  const auto group = parse_int(name);
  if (!group || *group < 0) {
    notes.push_back("IOMMU group not read: iommu_group links to " + quote(link.text) + ", not a group number");
    return std::nullopt;
  }
  IommuReading reading;
  reading.group = *group;
  // The group's files are the kernel's own, not a device's registers: no read
  // of them waits on hardware, so they are not tracked for the hang report
  // (which names files of the function's directory).
  const AttributeDirectory group_dir(sysfs_root / "kernel" / "iommu_groups" / name);
  constexpr std::string_view kType = "type";
  FileRead type = group_dir.read(kType);
  if (type.error == ENOENT) return reading;  // kernels before 5.11 have no type file
  auto text = to_result(std::move(type), group_dir, kType);
  if (!text) {
    notes.push_back("IOMMU group " + name + " type not read: " + text.error().message);
    return reading;
  }
  const std::string_view trimmed = trim(text.value());
  if (trimmed.empty()) {
    notes.push_back("IOMMU group " + name + " type is empty");
    return reading;
  }
  reading.type = std::string(trimmed);
  return reading;
}

std::optional<AerCounters> read_aer(const AttributeDirectory& dir, std::string_view file,
                                    std::vector<std::string>& notes) {
  FileRead read = dir.read(file);
  if (read.error == ENOENT) return std::nullopt;
  auto text = to_result(std::move(read), dir, file);
  if (!text) {
    notes.push_back("AER counters not read: " + text.error().message);
    return std::nullopt;
  }
  std::vector<std::string> skipped;
  AerCounters counters = parse_aer_counters(text.value(), &skipped);
  for (const auto& line : skipped) notes.push_back(std::string(file) + ": ignored line " + quote(line));
  return counters;
}

// The kernel's links are relative ("../../../devices/pci0000:00/..."), so
// they resolve against the links' own directory without touching the disk: a
// relocated tree (a fixture, a capture) stays inside itself, and one
// readlink replaces canonical()'s walk over every path component. Anything
// else (an absolute link, a copied directory) goes through canonical().
Result<fs::path> resolve_entry(const fs::path& devices_dir, const fs::path& entry) {
  std::error_code ec;
  const fs::path link = fs::read_symlink(entry, ec);
  if (!ec && link.is_relative()) {
    const fs::path target = (devices_dir / link).lexically_normal();
    if (fs::is_directory(target, ec)) return target;
    return make_error("link target " + target.string() + " is not a directory");
  }
  fs::path target = fs::canonical(entry, ec);
  if (ec) return make_error(ec.message());
  return target;
}

PciFunction read_function(const fs::path& sysfs_root, const fs::path& path, const PciAddress& bdf,
                          std::optional<PciAddress> parent, std::vector<std::string>& notes,
                          SysfsReadProgress* progress) {
  const AttributeDirectory dir(path, progress);
  PciFunction function;
  function.bdf = bdf;
  function.parent = parent;

  auto vendor = read_attribute<std::uint32_t>(
      dir, "vendor", [](const std::string& text) { return parse_hex_attribute(text, "vendor", 0xffff); });
  auto device = read_attribute<std::uint32_t>(
      dir, "device", [](const std::string& text) { return parse_hex_attribute(text, "device", 0xffff); });
  auto class_code = read_attribute<std::uint32_t>(
      dir, "class", [](const std::string& text) { return parse_hex_attribute(text, "class", 0xffffff); });
  if (vendor) {
    function.vendor_id = static_cast<std::uint16_t>(vendor.value());
  } else {
    notes.push_back("vendor not read (" + vendor.error().message + ")");
  }
  if (device) {
    function.device_id = static_cast<std::uint16_t>(device.value());
  } else {
    notes.push_back("device id not read (" + device.error().message + ")");
  }
  if (class_code) {
    function.class_code = class_code.value();
    function.is_bridge = is_pci_bridge_class(function.class_code);
  } else {
    notes.push_back("class not read, treated as kind other (" + class_code.error().message + ")");
  }
  // Without both identity fields a classification would be a guess.
  function.kind =
      (vendor && class_code) ? classify_device(function.vendor_id, function.class_code) : DeviceKind::kOther;
  if (progress != nullptr) {
    const std::lock_guard lock(progress->mutex);
    progress->identified = function;
  }

  function.numa_node = read_attribute<int>(
      dir, "numa_node", [](const std::string& text) { return parse_sysfs_numa_node(text, "numa_node"); });
  function.local_cpulist = read_attribute<std::string>(dir, "local_cpulist", [](const std::string& text) {
    const std::string_view trimmed = trim(text);
    if (trimmed.empty()) return Reading<std::string>(make_error("local_cpulist is empty"));
    return Reading<std::string>(std::string(trimmed));
  });

  function.link = read_link(dir);
  if (function.link) function.link->settings = read_settings(dir);
  function.iommu = read_iommu(dir, sysfs_root, notes);
  function.is_virtual_function = dir.has_entry("physfn");
  function.aer.correctable = read_aer(dir, "aer_dev_correctable", notes);
  function.aer.fatal = read_aer(dir, "aer_dev_fatal", notes);
  function.aer.nonfatal = read_aer(dir, "aer_dev_nonfatal", notes);
  return function;
}

}  // namespace

Reading<int> parse_sysfs_link_width(std::string_view text, std::string_view file) {
  const std::string_view trimmed = trim(text);
  const auto width = parse_int(trimmed);
  if (!width) return make_error(std::string(file) + ": unrecognised width " + quote(trimmed));
  if (*width == 0) return make_error(std::string(file) + ": link down (width 0)");
  if (*width == kAllOnesWidth) return make_error(std::string(file) + ": device not responding (reads as 0xffff)");
  if (!is_valid_link_width(*width)) {
    return make_error(std::string(file) + ": " + std::to_string(*width) + " is not a PCIe link width");
  }
  return *width;
}

Reading<int> parse_sysfs_numa_node(std::string_view text, std::string_view file) {
  const std::string_view trimmed = trim(text);
  const auto node = parse_int(trimmed);
  if (!node || *node < -1) return make_error(std::string(file) + ": unrecognised value " + quote(trimmed));
  if (*node == -1) return make_error(std::string(file) + ": no NUMA affinity reported (-1)");
  return *node;
}

AerCounters parse_aer_counters(std::string_view text, std::vector<std::string>* skipped) {
  AerCounters counters;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view line = trim(text.substr(0, newline));
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    if (line.empty()) continue;
    // The count is the last token; everything before it is the name, which
    // held spaces on older kernels ("Bad TLP 0").
    const auto split = line.find_last_of(" \t");
    std::uint64_t value = 0;
    bool parsed = false;
    std::string_view name;
    if (split != std::string_view::npos) {
      const std::string_view count = line.substr(split + 1);
      name = trim(line.substr(0, split));
      const auto [ptr, ec] = std::from_chars(count.data(), count.data() + count.size(), value);
      parsed = !name.empty() && ec == std::errc{} && ptr == count.data() + count.size();
    }
    if (!parsed) {
      if (skipped != nullptr) skipped->emplace_back(line);
      continue;
    }
    if (name.starts_with("TOTAL_ERR_")) {
      counters.total = value;
    } else if (value != 0) {
      // Zero counters are the norm (every named bit is printed): keeping only
      // the others keeps the evidence small, and an absent name means 0.
      counters.counts[std::string(name)] = value;
    }
  }
  return counters;
}

namespace {

struct FunctionRead {
  PciFunction function;
  std::vector<std::string> notes;
};

std::string deadline_text(std::chrono::milliseconds timeout) {
  if (timeout.count() % 1000 == 0) return std::to_string(timeout.count() / 1000) + " s";
  return std::to_string(timeout.count()) + " ms";
}

// A function whose read hung after its identity was read: it stays in the
// tree (a GPU must not vanish from the evidence), and everything read after
// the identity is an error naming the file that did not return, so its link
// is unknown and never judged a pass.
PciFunction unanswered(PciFunction identified, const Error& reason) {
  identified.numa_node = reason;
  identified.local_cpulist = reason;
  identified.link = PortLinkReading::unknown(reason);
  identified.link->settings = reason;
  identified.aer = {};
  return identified;
}

}  // namespace

Result<std::vector<PciFunction>> read_pci_functions(const fs::path& sysfs_root, SysfsNotes* notes,
                                                    const SysfsReadOptions& options) {
  const fs::path devices_dir = sysfs_root / "bus" / "pci" / "devices";
  std::error_code ec;
  if (!fs::is_directory(devices_dir, ec)) {
    return make_error("sysfs root " + sysfs_root.string() + " has no bus/pci/devices");
  }
  SysfsNotes discarded;
  SysfsNotes& out = notes != nullptr ? *notes : discarded;

  // Each function is read on a worker thread with a deadline: a sysfs read
  // goes to config space, and a device or root port in a bad state can hold
  // it in the kernel indefinitely. One handoff per function, not per
  // attribute, keeps the cost to a fraction of a millisecond on a large tree.
  // Two hung functions mean sysfs itself is stuck: the read gives up.
  constexpr std::size_t kMaxHungFunctions = 2;
  DeadlineWorker worker(nullptr, static_cast<int>(kMaxHungFunctions));
  std::vector<std::string> hung;

  std::vector<PciFunction> functions;
  fs::directory_iterator it(devices_dir, ec);
  if (ec) return make_error("cannot list " + devices_dir.string() + ": " + ec.message());
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto bdf = parse_pci_address(name);
    if (!bdf) {
      out.general.push_back("ignored bus/pci/devices/" + name + ": not a PCI address");
      continue;
    }
    const auto target = resolve_entry(devices_dir, it->path());
    if (!target) {
      out.general.push_back("ignored bus/pci/devices/" + name + ": " + target.error().message);
      continue;
    }
    // The parent directory is a bridge when it is named like a function;
    // otherwise it is a host bridge (pci0000:00) or a bus of another kind.
    std::optional<PciAddress> parent;
    if (auto parent_bdf = parse_pci_address(target->parent_path().filename().string())) parent = parent_bdf.value();

    auto progress = std::make_shared<SysfsReadProgress>();
    progress->before_read = options.before_read;
    auto call = worker.call(
        [root = sysfs_root, path = target.value(), bdf = bdf.value(), parent, progress] {
          FunctionRead read;
          read.function = read_function(root, path, bdf, parent, read.notes, progress.get());
          return read;
        },
        options.timeout);
    if (call.outcome == DeadlineOutcome::kReturned) {
      functions.push_back(std::move(call.value->function));
      if (!call.value->notes.empty()) out.by_function[bdf.value()] = std::move(call.value->notes);
      continue;
    }
    if (call.outcome == DeadlineOutcome::kRefused) {
      return make_error("cannot read " + target->string() + ": no thread to read it on");
    }
    std::string file;
    std::optional<PciFunction> identified;
    {
      const std::lock_guard lock(progress->mutex);
      file = (target.value() / progress->file).string();
      identified = progress->identified;
    }
    hung.push_back(file);
    const Error reason = make_error(file + " did not return within " + deadline_text(options.timeout));
    if (hung.size() >= kMaxHungFunctions) {
      std::string list;
      for (const auto& each : hung) list += (list.empty() ? "" : ", ") + each;
      return make_error("sysfs reads did not return within " + deadline_text(options.timeout) + " (" + list +
                        "): the PCI tree cannot be read");
    }
    // Without its identity the function could be a GPU: leaving it out would
    // judge the node without it.
    if (!identified) return make_error(reason.message + ": the PCI tree cannot be read");
    out.by_function[bdf.value()].push_back(reason.message);
    functions.push_back(unanswered(std::move(*identified), reason));
  }
  // A failed increment ends the loop as if the listing were complete.
  if (ec) return make_error("cannot list " + devices_dir.string() + ": " + ec.message());
  std::sort(functions.begin(), functions.end(),
            [](const PciFunction& a, const PciFunction& b) { return a.bdf < b.bdf; });
  return functions;
}

}  // namespace pcieval
