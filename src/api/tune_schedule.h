// The order in which tune() replays its candidates' graphs (src/api/tune.cpp).
//
// Back to back (the default): each candidate's replays in one block, led by an untimed replay,
// so every timed replay follows a replay of the same graph, as the bench times a row. Interleaved
// timing, one replay of each candidate in turn, let the graph before a candidate change its time:
// int8 fp16 l3-8b.o at M = 1, two splits of five stages, ran 5.60 us interleaved and 6.14 back to
// back, the rule's six stages 5.34 and 5.16, so interleaved tune() picked the slower plan
// (docs/perf/decode.md, v44). Back-to-back blocks put a drift in clocks or temperature on the
// candidates unevenly instead, so the rounds are split over two passes in opposite orders, and a
// linear drift lands on every candidate alike.
#pragma once

#include <vector>

namespace sailfish::detail {

struct TuneReplay {
  int candidate = 0;
  bool timed = false;
};

inline std::vector<TuneReplay> tune_replay_schedule(int candidates, int rounds, bool interleave) {
  std::vector<TuneReplay> order;
  if (candidates <= 0 || rounds <= 0) return order;
  if (interleave) {
    for (int r = 0; r < rounds; ++r) {
      for (int i = 0; i < candidates; ++i) order.push_back({i, true});
    }
    return order;
  }
  const int forward_rounds = (rounds + 1) / 2;
  for (int pass = 0; pass < 2; ++pass) {
    const int timed = pass == 0 ? forward_rounds : rounds - forward_rounds;
    if (timed == 0) continue;
    for (int step = 0; step < candidates; ++step) {
      const int i = pass == 0 ? step : candidates - 1 - step;
      order.push_back({i, false});
      for (int r = 0; r < timed; ++r) order.push_back({i, true});
    }
  }
  return order;
}

}  // namespace sailfish::detail
