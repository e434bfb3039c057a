// static_for<N>(f): calls f(std::integral_constant<int, i>{}) for i = 0 .. N-1, so the body can
// use i where C++ needs a constant expression (template arguments, inline-asm "n" operands),
// which a #pragma unroll loop index is not.
#pragma once

#include <type_traits>
#include <utility>

#include "common/host_device.h"

namespace sailfish::gpu {

namespace detail {
template <typename F, int... kIndices>
SF_HOST_DEVICE constexpr void static_for_each(F&& f, std::integer_sequence<int, kIndices...>) {
  (f(std::integral_constant<int, kIndices>{}), ...);
}
}  // namespace detail

template <int kCount, typename F>
SF_HOST_DEVICE constexpr void static_for(F&& f) {
  detail::static_for_each(f, std::make_integer_sequence<int, kCount>{});
}

}  // namespace sailfish::gpu
