// Measured planning (FFTW_MEASURE's idea): time the rule's plan and its alternatives on this
// device, with the caller's weight and cold caches, and keep the fastest.
//
// plan() picks a launch by rules drawn from sweeps on the H200 (docs/perf/decode.md). On the
// shapes they were drawn from they are within a few percent of the best launch; on shapes of
// other models a different decode split depth ran up to 1.16x faster (Qwen2.5 and Mixtral layers,
// v31). tune() finds those for the caller's own shapes.
//
// Unlike plan() and run(), tune() allocates (copies of the weight spanning twice the L2, so each
// timed call reads DRAM as a real decode step does), captures CUDA graphs and synchronizes: call
// it once per (layer shape, M) at startup, keep the Plan, and use run() as usual. A tuned plan is
// an ordinary plan: deterministic mode stays bitwise reproducible for it. Two tunings can choose
// different plans, though, and plans of different split depths sum in a different order, so keep
// TuneCandidate::options (plan() reproduces the chosen plan from them) where results must match
// across processes.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "sailfish/sailfish.h"

namespace sailfish {

struct TuneOptions {
  int launches = 24;       // calls per timed CUDA graph (rounded up to whole weight rotations)
  int rounds = 7;          // timed replays of each candidate; the median counts
  // false: each candidate's replays back to back, as the bench times a row, in two passes of
  // opposite order; true: one replay of each candidate in turn. Interleaved, the graph replayed
  // before a candidate changed its time by up to 10% on the H200 and made tune() pick a plan
  // 1.19x slower in the bench (docs/perf/decode.md, v44).
  bool interleave = false;
  // Another candidate replaces the rule's plan only when its median is at least this fraction
  // faster: the rules were measured on many shapes, one tuning on one, and replays of the same
  // graph vary by ~1% on the H200.
  double min_gain = 0.02;
  // Rotate weight copies spanning cold_l2_factor x the L2, as the bench does; 0 times one copy,
  // L2-warm for layers below the L2 size.
  double cold_l2_factor = 2.0;
  int max_weight_copies = 64;
  // The SM clock guard: after each candidate's block of replays the SM clock is read, and where
  // it reads more than clock_drop below the highest reading of the tuning, the GPU idles until
  // the clock is back (at most max_cool_down_ms) and the block is timed again, at most
  // max_retimes times. On the H200's largest layers the power limit pulled the clock from 1980
  // to 1635-1860 MHz part way through a tuning, so that candidates timed in the dip read up to
  // ~10% slow (docs/perf/decode.md, v45). Costs a 0.2 ms reading a block where the clock holds;
  // where it does not, up to (1 + max_retimes) x the replays plus the cool-downs. 0 turns it off.
  double clock_drop = 0.03;
  int max_retimes = 2;
  int max_cool_down_ms = 100;
};

struct TuneCandidate {
  // "rule", "decode splits=3", "decode splits=1 stages=5", "prefill rule"
  std::string label;
  Options options;           // plan() with these options gives this candidate's plan
  Plan plan;
  double us_per_call = 0.0;  // median over the rounds
  double sm_clock_mhz = 0.0;  // lowest SM clock read after its kept blocks; 0: not read
  int retimes = 0;            // blocks timed again because the clock had fallen
};

struct TuneReport {
  std::vector<TuneCandidate> candidates;  // [0] is plan()'s own choice for the options given
  int chosen = 0;                         // index of the plan tune() returned
  int weight_copies = 0;                  // copies rotated in each timed graph
  double reference_clock_mhz = 0.0;       // highest SM clock read in the tuning; 0: not read
};

// Candidates: plan()'s choice for (problem, options); at M 1-64, where the options leave the
// decode split depth to the rules (Options::decode_splits and SAILFISH_DECODE_SPLITS unset) and
// the tier is decode or auto, every distinct decode depth 1-8, each at the rules' stage count a
// warp and, where the options leave that count to the rules too (Options::decode_warp_stages and
// SAILFISH_DECODE_WARP_STAGES unset), at every count the kernel has for M ("decode splits=2
// stages=5"); at auto and M <= 64 on a device with the prefill tier, the prefill tier's own plan
// too. Other problems have one candidate, which is returned untimed. weight must match the
// problem. tune() waits for the work already queued on stream (the weight's upload, say), runs on
// a stream of its own, and returns once that work is done; the caller's stream is not touched
// otherwise.
Status tune(const Problem& problem, int device, const Options& options, const DeviceWeight& weight,
            const Context& context, cudaStream_t stream, const TuneOptions& tune_options,
            Plan* out, TuneReport* report = nullptr);

}  // namespace sailfish
