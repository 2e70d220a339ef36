// Which transport NCCL chose, read from NCCL's own INFO log.
//
// NCCL says what it picked for every connection it sets up, one line per
// channel and peer (src/transport/{p2p,shm,net,coll_net}.cc, NCCL 2.x):
//   host:pid:tid [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read
//   host:pid:tid [2] NCCL INFO Channel 01 : 2[2] -> 3[3] via SHM/direct/direct
//   host:pid:tid [0] NCCL INFO Channel 02/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA
//   host:pid:tid [0] NCCL INFO CollNet 00/0 : 0 [send] via COLLNET/SHARP/0/GDRDMA
// and, when it builds them, NVLink SHARP (NVLS) buffers and CollNet graphs
// ("NVLS comm 0x.. headRank ..", "N coll channels, C collnet channels, V nvls
// channels, ..", "Connected NVLS tree", "Connected collnet + chain"). Every one
// of these is logged under the INIT subsystem (INIT|P2P, INIT|SHM, INIT|NET,
// INIT|NVLS), so NCCL_DEBUG=INFO with NCCL_DEBUG_SUBSYS=INIT is all it takes.
//
// Since NCCL 2.22 the connections are made at the first collective that
// needs them, not in ncclCommInitRank: read the log after the first
// all-reduce, not after the setup.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "bench/detail/scoped_environment.hpp"
#include "model/result.hpp"

namespace pcieval {

struct NcclTransportUse {
  // "P2P/CUMEM/read", "SHM/direct/direct", "NET/IB/GDRDMA", "COLLNET/SHARP/GDRDMA":
  // what follows "via", with the parts that name one NIC or one rank (the
  // NET device index and PXN proxy rank, P2P/indirect's relay rank) left out
  // so that the connections of every channel add up under one name.
  std::string transport;
  std::uint64_t connections = 0;  // channel lines naming it (a [send] and a [receive] line count twice)
};

struct NcclTransportSummary {
  // Most connections first (ties by name): the first is what carried most.
  std::vector<NcclTransportUse> transports;
  // NVLS buffers were set up ("NVLS comm .. headRank") or the channel count
  // line gave NVLS channels. Set up, not necessarily used for every size:
  // NCCL's tuner picks the algorithm per call.
  bool nvls = false;
  int nvls_channels = 0;   // the most any "N nvls channels" line gave; 0 when not logged
  bool nvls_tree = false;  // "Connected NVLS tree": NVLS across nodes
  // CollNet (in-network reduction, e.g. SHARP) connections or graphs logged.
  bool collnet = false;
  bool rings_connected = false;  // "Connected all rings"
  bool trees_connected = false;  // "Connected all trees"
  // Lines of NCCL's log format ("NCCL INFO", "NCCL WARN") in the text: 0
  // means NCCL wrote nothing there (its log went elsewhere), which is not
  // the same as a log without channel lines.
  std::uint64_t nccl_lines = 0;
  // "P2P/CUMEM/read (24 channel connections), NVLS (16 channels)";
  // "no channel connections logged" when none.
  std::string summary;

  [[nodiscard]] bool any_transport() const { return !transports.empty(); }
};

// Reads NCCL INFO text (a whole debug file or any slice of one) and tells the
// transports its channel lines name. Pure: no I/O. Lines of other
// subsystems, ring listings ("Channel 00/08 :    0   1   2"), WARN lines,
// garbage and lines cut short before "via <transport>" are skipped; a line
// with a timestamp prefix (NCCL_DEBUG_TIMESTAMP_LEVELS) is read like any other.
[[nodiscard]] NcclTransportSummary summarize_nccl_transports(std::string_view text);

// Points NCCL's INFO log at a private temporary file and reads it back, so a
// probe can say which transport NCCL chose.
//
// NCCL reads NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE once per
// process, the first time it logs (src/debug.cc, ncclDebugInit; in practice
// ncclGetUniqueId or the first ncclCommInitRank), and opens the file then.
// So the capture must be constructed before the process's first NCCL call
// and kept for as long as NCCL may log; a capture made later sets variables
// NCCL never reads again, and its file stays empty.
//
// When the user has set NCCL_DEBUG or NCCL_DEBUG_FILE, their setting wins:
// the capture changes nothing and says why it is unavailable (the log goes
// where they asked, and pcieval cannot tell the transport). Otherwise it sets
// NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT and NCCL_DEBUG_FILE, and restores
// all three (or their absence) and removes the file when destroyed. setenv
// races with getenv in other threads: construct and destroy it while no
// other thread runs (before the probes start, after they end).
//
// If NCCL cannot open the file it logs to stdout instead (debug.cc): the file
// is created here, mode 0600, before NCCL opens it, so it can.
class NcclDebugCapture {
 public:
  // Creates the file in `directory` (the system's temporary directory by
  // default). Never fails: a capture that cannot be made is unavailable,
  // with the reason.
  explicit NcclDebugCapture(const std::filesystem::path& directory = std::filesystem::temp_directory_path());
  NcclDebugCapture(const NcclDebugCapture&) = delete;
  NcclDebugCapture& operator=(const NcclDebugCapture&) = delete;
  ~NcclDebugCapture();

  [[nodiscard]] bool available() const { return !path_.empty(); }
  // Why not available, e.g. "NCCL_DEBUG=WARN is set by the user: NCCL logs
  // where they asked, ..."; "" when available.
  [[nodiscard]] const std::string& unavailable_reason() const { return reason_; }
  // The file NCCL writes; empty when unavailable.
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  // The byte offset NCCL has written up to now: pass it to read_since to get
  // what NCCL logs from here on (one probe's communicators). 0 when
  // unavailable.
  [[nodiscard]] std::uint64_t mark() const;
  struct Text {
    std::string text;
    std::uint64_t next_mark = 0;  // after the last complete line: where the next read starts
  };
  // The complete lines NCCL wrote after `mark`; a last line NCCL is still
  // writing (no newline yet) is left for the read from `next_mark`. If the
  // file is shorter than `mark` (truncated), reads from its start.
  [[nodiscard]] Result<Text> read_since(std::uint64_t mark) const;

 private:
  std::filesystem::path path_;
  std::string reason_;
  ScopedEnvironment environment_;  // restores NCCL_DEBUG* after the destructor removed the file
};

}  // namespace pcieval
