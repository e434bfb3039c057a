// tune()'s SM clock guard (src/api/tune.cpp): the replay schedule run block by block, with a
// block timed again when the SM clock read after it has fallen.
//
// Why: on the H200's largest layers (100 MB and more of weights) the card's power limit pulled
// the SM clock from 1980 MHz down to 1635-1860 MHz part way through a tuning and let it climb
// back later (the bench's rechecks of tune()'s candidates, docs/perf/decode.md v44). A candidate
// timed in such a dip reads up to ~10% slow, so one tuning's verdicts within a few per cent there
// followed the power state, not the plans. The two passes of tune_schedule.h cancel a linear
// drift only. So after each block (one candidate's untimed lead replay and its timed replays)
// the clock is read; where it reads more than `drop` below the highest reading of the tuning,
// the GPU idles until the clock is back (at most `max_cool_down_polls` pauses), and the block is
// timed again, at most `max_retimes` times. The last attempt's samples are kept either way, and
// the candidate's lowest accepted reading is reported with it.
//
// The policy is kept free of CUDA, with the replays, clock reads and pauses passed in, so the
// CPU tests can run it on scripted clocks (tests/cpu/tune_clock_test.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

#include "api/tune_schedule.h"
#include "sailfish/status.h"

namespace sailfish::detail {

// Replays [first, first + count) of a schedule: one candidate's, the first the block's lead.
struct TuneBlock {
  int candidate = 0;
  size_t first = 0;
  size_t count = 0;
};

// A block ends before an untimed replay (the next block's lead) or another candidate's replay,
// so a back-to-back schedule has one block per candidate and pass, an interleaved one a block
// per replay.
inline std::vector<TuneBlock> tune_replay_blocks(const std::vector<TuneReplay>& order) {
  std::vector<TuneBlock> blocks;
  for (size_t s = 0; s < order.size(); ++s) {
    const bool starts = s == 0 || !order[s].timed || order[s].candidate != order[s - 1].candidate;
    if (starts) blocks.push_back({order[s].candidate, s, 0});
    ++blocks.back().count;
  }
  return blocks;
}

// Whether a reading counts as fallen: more than `drop` below the reference. drop 0: never.
inline bool clock_fell(double mhz, double reference_mhz, double drop) {
  return drop > 0.0 && mhz < reference_mhz * (1.0 - drop);
}

struct ClockGuard {
  double drop = 0.0;            // 0 turns the guard off: no clock is read
  int max_retimes = 0;          // extra attempts a block may take
  int max_cool_down_polls = 0;  // pauses (each followed by a reading) before an attempt
};

struct TunedTimes {
  std::vector<std::vector<double>> us;  // per candidate: the timed replays of its kept attempts
  std::vector<double> mhz;              // per candidate: its lowest kept reading; 0 unread
  std::vector<int> retimes;             // per candidate: attempts timed again
  double reference_mhz = 0.0;           // the highest reading of the tuning; 0 unread
};

// Replays one replay of the schedule: its timed duration in us, unused for untimed replays.
using RunReplay = std::function<Status(int candidate, bool timed, double* us)>;
using ReadClock = std::function<Status(double* mhz)>;
using Pause = std::function<void()>;

inline Status time_schedule(const std::vector<TuneReplay>& order, int candidates,
                            const ClockGuard& guard, const RunReplay& run_replay,
                            const ReadClock& read_clock, const Pause& pause, TunedTimes* out) {
  const size_t n = static_cast<size_t>(std::max(candidates, 0));
  out->us.assign(n, {});
  out->mhz.assign(n, 0.0);
  out->retimes.assign(n, 0);
  out->reference_mhz = 0.0;
  const bool guarded = guard.drop > 0.0;
  double& reference = out->reference_mhz;
  auto read = [&](double* mhz) -> Status {
    SF_RETURN_IF_ERROR(read_clock(mhz));
    reference = std::max(reference, *mhz);
    return Status();
  };
  if (guarded) {
    double idle = 0.0;
    SF_RETURN_IF_ERROR(read(&idle));
  }
  for (const TuneBlock& block : tune_replay_blocks(order)) {
    const size_t c = static_cast<size_t>(block.candidate);
    std::vector<double> kept;
    for (int attempt = 0;; ++attempt) {
      kept.clear();
      for (size_t s = block.first; s < block.first + block.count; ++s) {
        double us = 0.0;
        SF_RETURN_IF_ERROR(run_replay(order[s].candidate, order[s].timed, &us));
        if (order[s].timed) kept.push_back(us);
      }
      if (!guarded) break;
      double mhz = 0.0;
      SF_RETURN_IF_ERROR(read(&mhz));
      if (!clock_fell(mhz, reference, guard.drop) || attempt == guard.max_retimes) {
        out->mhz[c] = out->mhz[c] > 0.0 ? std::min(out->mhz[c], mhz) : mhz;
        break;
      }
      ++out->retimes[c];
      // Idle until the clock is back, so the next attempt starts from the state the others did.
      for (int p = 0; p < guard.max_cool_down_polls && clock_fell(mhz, reference, guard.drop);
           ++p) {
        pause();
        SF_RETURN_IF_ERROR(read(&mhz));
      }
    }
    out->us[c].insert(out->us[c].end(), kept.begin(), kept.end());
  }
  return Status();
}

}  // namespace sailfish::detail
