// TMA tensor maps for the prefill tier's activation operand.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "sailfish/types.h"
#include "sailfish/status.h"

namespace sailfish::prefill {

// A map over a row-major 16-bit matrix [rows][columns] with row stride `ld` elements, read in
// boxes of 64 columns x box_rows rows into shared memory with the 128-byte swizzle (the layout
// wgmma's K-major descriptor reads). Elements past the matrix arrive as zeros.
// Requirements (checked): base 16-byte aligned, ld * 2 a multiple of 16, box_rows <= 256.
Status make_activation_map(const void* base, int64_t rows, int64_t columns, int64_t ld,
                           DType dtype, int box_rows, CUtensorMap* out);

}  // namespace sailfish::prefill
