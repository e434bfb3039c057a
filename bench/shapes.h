// The layer shapes the bench measures: the embedded Llama-3 8B / 70B set and the parser for
// user-given lists. A shape is one linear layer, y = x W^T with W of N rows and K columns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sailfish/status.h"

namespace sailfish::bench {

struct Shape {
  std::string name;
  int64_t k = 0;  // input features
  int64_t n = 0;  // output features
};

// Llama-3 8B and 70B linear layers (fused qkv and gate_up), the shapes of the anchor figures.
std::vector<Shape> default_shapes();
// Decode to long prefill.
std::vector<int64_t> default_m_values();
// The reduced list of --quick.
std::vector<int64_t> quick_m_values();

// Each item is "KxN" (named "KxN"), "NAME=KxN", or the name of a default shape.
Status parse_shapes(const std::vector<std::string>& items, std::vector<Shape>* out);
// Positive integers; the result is sorted ascending without duplicates, because the power-cap
// rule (DESIGN.md) wants small M measured before large M within a shape.
Status parse_m_values(const std::vector<std::string>& items, std::vector<int64_t>* out);

}  // namespace sailfish::bench
