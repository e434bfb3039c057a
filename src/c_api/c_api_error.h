// The thread-local "last error" text of the C ABI, shared by its translation units
// (c_api_gpu.cpp today; c_api.cpp can move its own copy here so that sf_last_error() also
// reports GPU failures). An inline function's static is one object per program, unlike a
// namespace-scope variable in an anonymous namespace, which each file would get its own of.
#pragma once

#include <string>

namespace sailfish::c_api {

inline std::string& thread_last_error() {
  thread_local std::string message;
  return message;
}

}  // namespace sailfish::c_api
