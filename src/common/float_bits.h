// A float's 32 bits and back, the same on the host and the device (the device's intrinsics; on
// the host memcpy, the defined form of a type pun before C++20's bit_cast).
#pragma once

#include <cstdint>
#include <cstring>

#include "common/host_device.h"

namespace sailfish::detail {

SF_HOST_DEVICE inline uint32_t bits_of(float value) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(value);
#else
  uint32_t u = 0;
  std::memcpy(&u, &value, sizeof(u));
  return u;
#endif
}

SF_HOST_DEVICE inline float float_of(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float value = 0.0f;
  std::memcpy(&value, &u, sizeof(value));
  return value;
#endif
}

}  // namespace sailfish::detail
