// Command line of sailfish_bench (CLI11). Every option is listed in docs/BENCH.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sailfish/sailfish.h"
#include "sailfish/tune.h"
#include "shapes.h"

namespace sailfish::bench {

struct BenchOptions {
  std::vector<Shape> shapes;
  std::vector<int64_t> m_values;  // ascending, unique
  int bits = 4;
  int group_size = 128;  // or kChannelwise
  DType dtype = DType::kBF16;  // activations, output and scales
  bool zero_points = false;    // integer zero points, folded (ZeroPointKind::kInteger)
  bool act_order = false;      // a random permutation of the K rows
  bool bias = false;
  std::vector<Tier> tiers = {Tier::kAuto};
  std::optional<bool> deterministic;  // unset: the library default / SAILFISH_DETERMINISTIC
  bool tune = false;  // plan each Sailfish row with sailfish::tune (sailfish/tune.h), not plan()
  // --tune-cold-factor, --tune-launches, --tune-rounds, --tune-interleave, --tune-clock-drop,
  // --tune-max-retimes
  TuneOptions tune_options;
  // --tune-recheck: time every candidate tune() timed again in this harness, after the tuning,
  // to compare the two harnesses' figures for the same plans in one process.
  bool tune_recheck = false;
  int graph_launches = 20;   // launches per graph (raised to whole rotations over the copies)
  int replays = 7;           // timed graph replays; the median is reported
  int warmup_replays = 1;
  // --eager: each row, its cuBLAS baseline and its floor also timed with no graph, the calls
  // enqueued one by one (eager_timer.h), rounds as many as the graph's replays.
  bool eager = false;
  bool quick = false;
  int cooldown_ms = 1000;          // pause before a shape's first M ...
  int64_t cooldown_after_m = 256;  // ... when the row before it had at least this M
  int check_samples = 64;
  bool cublas = true;
  int device = 0;
  uint64_t seed = 0x5A1F15Bull;
  double read_bw_gib = 4.0;
  int read_bw_reps = 7;
  double peak_tflops = 790.0;  // dense bf16 roof of the roofline (DESIGN.md)
  double roofline_read_tbps = 0.0;  // memory roof of the roofline; 0: the measured read bandwidth
  double cold_factor = 3.0;    // weight copies together exceed this many times the L2
  std::string json_path;
  std::string command_line;  // as typed, for the JSON
};

// Parses argv. Returns -1 to go on, or the exit status to leave with (0 after --help, CLI11's
// code after a bad command line, which it has already explained on stderr).
int parse_options(int argc, char** argv, BenchOptions* out);

const char* tier_label(Tier tier);  // "auto", "decode", "prefill", "dense"
std::string group_label(int group_size);  // "128", or "channelwise"

}  // namespace sailfish::bench
