#include "options.h"

#include <CLI/CLI.hpp>

#include <cstdio>

namespace sailfish::bench {

const char* tier_label(Tier tier) {
  switch (tier) {
    case Tier::kAuto: return "auto";
    case Tier::kDecode: return "decode";
    case Tier::kPrefill: return "prefill";
    case Tier::kDense: return "dense";
  }
  return "unknown";
}

std::string group_label(int group_size) {
  return group_size == kChannelwise ? "channelwise" : std::to_string(group_size);
}

namespace {

Status parse_tiers(const std::vector<std::string>& items, std::vector<Tier>* out) {
  std::vector<Tier> tiers;
  for (const std::string& item : items) {
    Tier t;
    if (item == "auto") {
      t = Tier::kAuto;
    } else if (item == "decode") {
      t = Tier::kDecode;
    } else if (item == "prefill") {
      t = Tier::kPrefill;
    } else if (item == "dense") {
      t = Tier::kDense;
    } else {
      return invalid_argument("tier '", item, "'; accepted: auto, decode, prefill, dense");
    }
    bool seen = false;
    for (Tier have : tiers) seen = seen || have == t;
    if (!seen) tiers.push_back(t);
  }
  if (tiers.empty()) return invalid_argument("the tier list is empty");
  *out = std::move(tiers);
  return Status();
}

Status parse_group(const std::string& text, int* out) {
  if (text == "channelwise" || text == "-1") {
    *out = kChannelwise;
    return Status();
  }
  for (int g : {16, 32, 64, 128, 256}) {
    if (text == std::to_string(g)) {
      *out = g;
      return Status();
    }
  }
  return invalid_argument("group size '", text, "'; accepted: 16, 32, 64, 128, 256, channelwise");
}

Status parse_dtype(const std::string& text, DType* out) {
  if (text == "bf16" || text == "bfloat16") {
    *out = DType::kBF16;
  } else if (text == "fp16" || text == "f16" || text == "half") {
    *out = DType::kF16;
  } else {
    return invalid_argument("dtype '", text, "'; accepted: bf16, fp16");
  }
  return Status();
}

}  // namespace

int parse_options(int argc, char** argv, BenchOptions* out) {
  BenchOptions o;
  CLI::App app{
      "sailfish_bench: Sailfish weight-only quantized GEMM against cuBLAS dense and a "
      "byte-streaming floor, side by side on cold weights in CUDA graphs (docs/BENCH.md)."};
  std::vector<std::string> shape_items, m_items, tier_items{"auto"};
  std::string group_text = "128", dtype_text = "bf16";
  bool deterministic = false, no_cublas = false;

  app.add_option("--shapes", shape_items,
                 "Comma list of KxN, NAME=KxN or default shape names (default: Llama-3 8B and "
                 "70B layers)")
      ->delimiter(',');
  app.add_option("-m,--m", m_items, "Comma list of M (tokens) values (default 1..8192)")
      ->delimiter(',');
  app.add_option("--bits", o.bits, "Code width: 4 or 8")->check(CLI::IsMember({4, 8}));
  app.add_option("--group,--group-size", group_text,
                 "Group size: 16, 32, 64, 128, 256 or channelwise");
  app.add_option("--dtype", dtype_text, "Activation, output and scale type: bf16 or fp16");
  app.add_flag("--zero-points", o.zero_points, "Integer zero points (folded), as AWQ");
  app.add_flag("--act-order", o.act_order, "A random act-order permutation of K");
  app.add_flag("--bias", o.bias, "Add a bias vector (cuBLAS gets its bias epilogue too)");
  app.add_option("--tier,--tiers", tier_items,
                 "Comma list of Sailfish tiers to measure: auto, decode, prefill, dense")
      ->delimiter(',');
  app.add_flag("--deterministic", deterministic, "Plan with the deterministic option");
  app.add_flag("--tune", o.tune,
               "Plan each Sailfish row by timing the rule's plan and its alternatives "
               "(sailfish::tune) instead of plan()'s rules");
  app.add_option("--tune-cold-factor", o.tune_options.cold_l2_factor,
                 "tune()'s weight copies span this many times the L2 (TuneOptions; 0: one copy)")
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--tune-launches", o.tune_options.launches,
                 "Calls per CUDA graph tune() times (TuneOptions::launches)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--tune-rounds", o.tune_options.rounds,
                 "Timed replays of each candidate in tune() (TuneOptions::rounds)")
      ->check(CLI::Range(1, 1000));
  app.add_flag("--tune-interleave", o.tune_options.interleave,
               "tune() replays one graph of each candidate in turn, not each candidate's "
               "back to back (TuneOptions::interleave)");
  app.add_option("--tune-clock-drop", o.tune_options.clock_drop,
                 "tune() times a candidate's replays again where the SM clock read after them "
                 "fell by more than this fraction (TuneOptions::clock_drop; 0: no clock guard)")
      ->check(CLI::Range(0.0, 0.49));
  app.add_option("--tune-max-retimes", o.tune_options.max_retimes,
                 "Times tune() may time one block again (TuneOptions::max_retimes)")
      ->check(CLI::Range(0, 10));
  app.add_flag("--tune-recheck", o.tune_recheck,
               "With --tune: time every candidate again in the bench's own harness after the "
               "tuning (the row's tune.candidates[].bench_us)");
  app.add_option("--graph-launches", o.graph_launches,
                 "Launches captured per CUDA graph (raised to whole rotations over the cold "
                 "copies)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--replays", o.replays, "Timed graph replays; the median is reported")
      ->check(CLI::Range(1, 1000));
  app.add_option("--warmup", o.warmup_replays, "Untimed graph replays before timing")
      ->check(CLI::Range(0, 100));
  app.add_flag("--eager", o.eager,
               "Also time each row, its cuBLAS baseline and its floor eagerly, with no graph: "
               "the same calls enqueued one by one: GPU time and host enqueue time per call "
               "(the row's eager object in the JSON)");
  app.add_flag("--quick", o.quick,
               "Fewer M values (1,16,64,256,1024,4096) and 3 replays, unless given explicitly");
  app.add_option("--cooldown-ms", o.cooldown_ms,
                 "Pause before a shape's first M when the previous row was large (power cap)")
      ->check(CLI::Range(0, 600000));
  app.add_option("--cooldown-after-m", o.cooldown_after_m,
                 "A previous row with M >= this triggers the pause")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 40));
  app.add_option("--check-samples", o.check_samples,
                 "Output elements compared with the host reference per row (0: NaN scan only)")
      ->check(CLI::Range(0, 100000));
  app.add_flag("--no-cublas", no_cublas, "Skip the cuBLAS dense baseline");
  app.add_option("--device", o.device, "CUDA device ordinal")->check(CLI::Range(0, 1023));
  app.add_option("--seed", o.seed, "Seed of every generated weight and activation");
  app.add_option("--read-bw-gib", o.read_bw_gib, "Buffer size of the streaming-read measurement")
      ->check(CLI::Range(0.25, 64.0));
  app.add_option("--peak-tflops", o.peak_tflops, "Compute roof of the roofline, TFLOP/s")
      ->check(CLI::PositiveNumber);
  app.add_option("--roofline-read-bw", o.roofline_read_tbps,
                 "Memory roof of the roofline in TB/s (default: the bandwidth measured in this "
                 "run; 4.40 matches the anchor figures)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--cold-factor", o.cold_factor,
                 "Rotated weight copies together exceed this many times the L2 size")
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--json", o.json_path, "Write machine-readable results here (docs/BENCH.md)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  Status st;
  if (shape_items.empty()) {
    o.shapes = default_shapes();
  } else {
    st = parse_shapes(shape_items, &o.shapes);
  }
  if (st.ok()) {
    if (!m_items.empty()) {
      st = parse_m_values(m_items, &o.m_values);
    } else {
      o.m_values = o.quick ? quick_m_values() : default_m_values();
    }
  }
  if (st.ok()) st = parse_tiers(tier_items, &o.tiers);
  if (st.ok()) st = parse_group(group_text, &o.group_size);
  if (st.ok()) st = parse_dtype(dtype_text, &o.dtype);
  if (st.ok() && !o.tune) {
    for (const char* flag : {"--tune-cold-factor", "--tune-launches", "--tune-rounds",
                             "--tune-interleave", "--tune-clock-drop", "--tune-max-retimes",
                             "--tune-recheck"}) {
      if (app.count(flag) > 0) {
        st = invalid_argument(flag, " needs --tune: it sets how the rows are tuned");
        break;
      }
    }
  }
  if (!st.ok()) {
    std::fprintf(stderr, "sailfish_bench: %s\n", st.message().c_str());
    return 106;  // CLI11 numbers this RequiredError (its ValidationError is 105; docs/BENCH.md)
  }
  if (o.quick && app.count("--replays") == 0) o.replays = 3;
  if (deterministic) o.deterministic = true;
  o.cublas = !no_cublas;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) o.command_line += ' ';
    o.command_line += argv[i];
  }
  *out = std::move(o);
  return -1;
}

}  // namespace sailfish::bench
