// sailfish_plan_model: the decode plans plan() makes on an H200, made on the CPU with the planner
// model (decode_gpu_model.h), for rule changes and probe specs checked before a device run.
// SAILFISH_* variables apply as they do to plan():
//   SAILFISH_DECODE_SPLITS=4 sailfish_plan_model --shapes l3-8b.down,phi3.down=8192x3072 -m 1,16
// Shapes, M and the weight's options as the bench takes them (bench/shapes.h, docs/BENCH.md):
// --bits 4|8 (4), --group G (128), --dtype bf16|fp16 (bf16), --zero-points (integer zero points);
// and --registers FILE (the kernels' registers, tests/sass/decode_registers.json by default).
// Prints a row per shape and M:
//   shape M launch
// the launch in the bench's words (bench/launch_summary.h), or "error: ..." where plan_decode
// refuses. Exits 2 on bad arguments.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "api/decode_choices.h"
#include "api/environment.h"
#include "decode_gpu_model.h"
#include "launch_summary.h"
#include "shapes.h"

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const size_t end = comma == std::string::npos ? text.size() : comma;
    if (end > start) items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

int usage(const std::string& why) {
  std::fprintf(stderr,
               "sailfish_plan_model: %s\nusage: sailfish_plan_model --shapes LIST -m LIST "
               "[--bits 4|8] [--group G] [--dtype bf16|fp16] [--zero-points] [--registers FILE]\n",
               why.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sailfish;
  std::string shapes_arg, m_arg, registers = SAILFISH_DECODE_REGISTERS_JSON;
  int bits = 4, group = 128;
  bool fp16 = false, zero_points = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--shapes" && has_value) {
      shapes_arg = argv[++i];
    } else if (a == "-m" && has_value) {
      m_arg = argv[++i];
    } else if (a == "--bits" && has_value) {
      bits = std::atoi(argv[++i]);
    } else if (a == "--group" && has_value) {
      group = std::atoi(argv[++i]);
    } else if (a == "--registers" && has_value) {
      registers = argv[++i];
    } else if (a == "--dtype" && has_value) {
      const std::string dtype = argv[++i];
      if (dtype != "bf16" && dtype != "fp16") return usage("--dtype takes bf16 or fp16");
      fp16 = dtype == "fp16";
    } else if (a == "--zero-points") {
      zero_points = true;
    } else {
      return usage("unknown or incomplete argument '" + a + "'");
    }
  }
  if (shapes_arg.empty() || m_arg.empty()) return usage("--shapes and -m are required");
  std::vector<bench::Shape> shapes;
  std::vector<int64_t> ms;
  Status parsed = bench::parse_shapes(split_list(shapes_arg), &shapes);
  if (parsed.ok()) parsed = bench::parse_m_values(split_list(m_arg), &ms);
  if (!parsed.ok()) return usage(parsed.message());
  const test::DecodeGpuModel model = test::DecodeGpuModel::h200(registers);
  if (model.registers.empty()) return usage("no kernel registers read from " + registers);
  api::ResolvedOptions resolved;
  const Status options = api::resolve_options(Options{}, &resolved);
  if (!options.ok()) return usage(options.message());

  for (const bench::Shape& shape : shapes) {
    for (const int64_t m : ms) {
      Plan plan;
      plan.tier = Tier::kDecode;
      plan.sm_count = model.sm_count;
      plan.problem.m = m;
      plan.problem.act_dtype = plan.problem.scale_dtype = fp16 ? DType::kF16 : DType::kBF16;
      plan.problem.zero_kind = zero_points ? ZeroPointKind::kInteger : ZeroPointKind::kNone;
      Status st = PackedGeometry::make(shape.n, shape.k, bits, group, &plan.problem.geometry);
      if (!st.ok()) return usage(st.message());
      st = decode::plan_decode(api::decode_choices(resolved), model.queries(plan.problem), &plan);
      std::printf("%s %lld %s\n", shape.name.c_str(), static_cast<long long>(m),
                  st.ok() ? bench::launch_summary(plan).c_str()
                          : ("error: " + st.message()).c_str());
    }
  }
  return 0;
}
