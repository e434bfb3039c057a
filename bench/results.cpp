#include "results.h"

namespace sailfish::bench {

const char* row_status_name(RowStatus status) {
  switch (status) {
    case RowStatus::kOk: return "ok";
    case RowStatus::kCheckFailed: return "check_failed";
    case RowStatus::kUnsupported: return "unsupported";
    case RowStatus::kError: return "error";
  }
  return "unknown";
}

}  // namespace sailfish::bench
