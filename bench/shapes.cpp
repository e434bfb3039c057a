#include "shapes.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace sailfish::bench {

std::vector<Shape> default_shapes() {
  return {
      {"l3-8b.qkv", 4096, 6144},       {"l3-8b.o", 4096, 4096},
      {"l3-8b.gate_up", 4096, 28672},  {"l3-8b.down", 14336, 4096},
      {"l3-70b.qkv", 8192, 10240},     {"l3-70b.o", 8192, 8192},
      {"l3-70b.gate_up", 8192, 57344}, {"l3-70b.down", 28672, 8192},
  };
}

std::vector<int64_t> default_m_values() {
  return {1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
}

// One decode point, the decode/prefill crossover region, and two prefill sizes: enough to see
// every tier at a fraction of the device time.
std::vector<int64_t> quick_m_values() { return {1, 16, 64, 256, 1024, 4096}; }

namespace {

bool parse_positive(const std::string& text, int64_t* value) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  errno = 0;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno != 0 || v <= 0) return false;
  *value = static_cast<int64_t>(v);
  return true;
}

bool parse_kxn(const std::string& text, int64_t* k, int64_t* n) {
  const size_t x = text.find_first_of("xX");
  if (x == std::string::npos) return false;
  return parse_positive(text.substr(0, x), k) && parse_positive(text.substr(x + 1), n);
}

}  // namespace

Status parse_shapes(const std::vector<std::string>& items, std::vector<Shape>* out) {
  const std::vector<Shape> known = default_shapes();
  std::vector<Shape> shapes;
  for (const std::string& item : items) {
    if (item.empty()) continue;
    const auto named = std::find_if(known.begin(), known.end(),
                                    [&](const Shape& s) { return s.name == item; });
    if (named != known.end()) {
      shapes.push_back(*named);
      continue;
    }
    Shape s;
    const size_t eq = item.find('=');
    s.name = eq == std::string::npos ? item : item.substr(0, eq);
    const std::string dims = eq == std::string::npos ? item : item.substr(eq + 1);
    if (s.name.empty() || !parse_kxn(dims, &s.k, &s.n)) {
      return invalid_argument("shape '", item, "' is not KxN, NAME=KxN or a default shape name "
                              "(e.g. 4096x6144 or l3-8b.qkv)");
    }
    shapes.push_back(s);
  }
  if (shapes.empty()) return invalid_argument("the shape list is empty");
  *out = std::move(shapes);
  return Status();
}

Status parse_m_values(const std::vector<std::string>& items, std::vector<int64_t>* out) {
  std::vector<int64_t> ms;
  for (const std::string& item : items) {
    if (item.empty()) continue;
    int64_t m = 0;
    if (!parse_positive(item, &m)) {
      return invalid_argument("M value '", item, "' is not a positive integer");
    }
    ms.push_back(m);
  }
  if (ms.empty()) return invalid_argument("the M list is empty");
  std::sort(ms.begin(), ms.end());
  ms.erase(std::unique(ms.begin(), ms.end()), ms.end());
  *out = std::move(ms);
  return Status();
}

}  // namespace sailfish::bench
