// Status: how every Sailfish entry point reports failure. A Status that is not ok carries a message
// that says what was wrong and what would have been accepted. Nothing in the library throws across
// its API or exits the process.
#pragma once

#include <sstream>
#include <string>
#include <utility>

namespace sailfish {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller passed something malformed (shape, pointer, value range)
  kUnsupported,      // well formed, but this build/device/format cannot do it
  kCudaError,        // a CUDA runtime or driver call failed
  kCublasError,      // a cuBLAS / cuBLASLt call failed
  kInternal,         // a bug in Sailfish
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: <message>"
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

namespace detail {
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace detail

template <typename... Parts>
Status invalid_argument(const Parts&... parts) {
  return Status(StatusCode::kInvalidArgument, detail::concat(parts...));
}
template <typename... Parts>
Status unsupported(const Parts&... parts) {
  return Status(StatusCode::kUnsupported, detail::concat(parts...));
}
template <typename... Parts>
Status internal_error(const Parts&... parts) {
  return Status(StatusCode::kInternal, detail::concat(parts...));
}

}  // namespace sailfish

// Propagates a non-ok Status to the caller.
#define SF_RETURN_IF_ERROR(expr)                   \
  do {                                             \
    ::sailfish::Status sf_status_ = (expr);        \
    if (!sf_status_.ok()) return sf_status_;       \
  } while (0)
