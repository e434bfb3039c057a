#include "sailfish/types.h"

namespace sailfish {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF16: return "fp16";
    case DType::kBF16: return "bf16";
    case DType::kF32: return "fp32";
  }
  return "unknown-dtype";
}

const char* zero_point_kind_name(ZeroPointKind kind) {
  switch (kind) {
    case ZeroPointKind::kNone: return "none";
    case ZeroPointKind::kInteger: return "integer";
    case ZeroPointKind::kFloat: return "float";
  }
  return "unknown-zero-point-kind";
}

}  // namespace sailfish
