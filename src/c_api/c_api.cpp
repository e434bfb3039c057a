// The C ABI of c_api.h. Each entry point turns raw pointers into the library's host types, calls
// the library and converts its Status into a return code plus a thread-local message. The library
// does not throw, but std::vector may (bad_alloc), so every entry point also catches at the
// boundary: an exception must never unwind into a C or Python caller.
#include "c_api/c_api.h"

#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "sailfish/importers.h"
#include "sailfish/reference.h"

namespace {

using sailfish::MatMulNBitsTensors;
using sailfish::QuantizedWeight;
using sailfish::Status;
using sailfish::ZeroPointKind;

thread_local std::string g_last_error;

int fail(int code, std::string message) {
  g_last_error = std::move(message);
  return code;
}

int report(const Status& status) {
  if (status.ok()) {
    g_last_error.clear();
    return SF_OK;
  }
  return fail(static_cast<int>(status.code()), status.to_string());
}

// Sizes are only derived from the attributes when those are sane; otherwise the tensors stay empty
// and import_matmul_nbits reports the bad attribute itself, with its own wording. Sane includes
// sizes that fit in int64: gather_tensors forms N * k_blocks * blob and N * K, and a product that
// overflows is undefined behaviour (and may wrap to a count that then reads the wrong bytes).
bool attributes_sane(int64_t k, int64_t n, int bits, int block_size) {
  if (!(k > 0 && n > 0 && (bits == 4 || bits == 8) && block_size >= 16 && block_size <= 256)) {
    return false;
  }
  MatMulNBitsTensors t;
  t.k = k;
  t.n = n;
  t.bits = bits;
  t.block_size = block_size;
  int64_t row_bytes = 0, product = 0;
  return !__builtin_mul_overflow(n, k, &product) &&
         !__builtin_mul_overflow(t.k_blocks(), t.blob_bytes(), &row_bytes) &&
         !__builtin_mul_overflow(n, row_bytes, &product);
}

template <typename T>
std::vector<T> copy_of(const T* data, int64_t count) {
  return std::vector<T>(data, data + count);
}

// Fills *t from the raw operator tensors (sizes implied by the attributes).
Status gather_tensors(int64_t k, int64_t n, int bits, int block_size, const uint8_t* b,
                      const float* scales, int zero_kind, const uint8_t* zero_points_packed,
                      const float* zero_points_typed, const int32_t* g_idx,
                      MatMulNBitsTensors* t) {
  t->k = k;
  t->n = n;
  t->bits = bits;
  t->block_size = block_size;
  if (b == nullptr) return sailfish::invalid_argument("b is null");
  if (scales == nullptr) return sailfish::invalid_argument("scales is null");
  switch (zero_kind) {
    case SF_ZP_NONE:
      if (zero_points_packed != nullptr || zero_points_typed != nullptr) {
        return sailfish::invalid_argument("zero_kind is SF_ZP_NONE but a zero point pointer is "
                                          "set");
      }
      t->zero_kind = ZeroPointKind::kNone;
      break;
    case SF_ZP_PACKED_UINT8:
      if (zero_points_packed == nullptr || zero_points_typed != nullptr) {
        return sailfish::invalid_argument(
            "zero_kind SF_ZP_PACKED_UINT8 needs zero_points_packed and no zero_points_typed");
      }
      t->zero_kind = ZeroPointKind::kInteger;
      break;
    case SF_ZP_TYPED_FLOAT:
      if (zero_points_typed == nullptr || zero_points_packed != nullptr) {
        return sailfish::invalid_argument(
            "zero_kind SF_ZP_TYPED_FLOAT needs zero_points_typed and no zero_points_packed");
      }
      t->zero_kind = ZeroPointKind::kFloat;
      break;
    default:
      return sailfish::invalid_argument("zero_kind is ", zero_kind,
                                        "; accepted: 0 (none), 1 (packed uint8), 2 (typed float)");
  }
  if (!attributes_sane(k, n, bits, block_size)) return Status();
  t->b = copy_of(b, n * t->k_blocks() * t->blob_bytes());
  t->scales = copy_of(scales, n * t->k_blocks());
  if (zero_points_packed != nullptr) {
    t->zero_points_packed = copy_of(zero_points_packed, n * t->packed_zero_bytes_per_row());
  }
  if (zero_points_typed != nullptr) {
    t->zero_points_typed = copy_of(zero_points_typed, n * t->k_blocks());
  }
  if (g_idx != nullptr) t->g_idx = copy_of(g_idx, k);
  return Status();
}

template <typename T>
void copy_out(const std::vector<T>& from, T* to) {
  if (to != nullptr && !from.empty()) std::memcpy(to, from.data(), from.size() * sizeof(T));
}

// Raw tensors -> canonical weight, through import_matmul_nbits (which validates).
Status import_raw(int64_t k, int64_t n, int bits, int block_size, const uint8_t* b,
                  const float* scales, int zero_kind, const uint8_t* zero_points_packed,
                  const float* zero_points_typed, const int32_t* g_idx, QuantizedWeight* w) {
  MatMulNBitsTensors t;
  SF_RETURN_IF_ERROR(gather_tensors(k, n, bits, block_size, b, scales, zero_kind,
                                    zero_points_packed, zero_points_typed, g_idx, &t));
  return sailfish::import_matmul_nbits(t, w);
}

// Runs body (which returns a Status) with every exception stopped here.
template <typename Body>
int guarded(Body&& body) {
  try {
    return report(body());
  } catch (const std::exception& e) {
    return fail(SF_ERR_EXCEPTION, std::string("exception: ") + e.what());
  } catch (...) {
    return fail(SF_ERR_EXCEPTION, "unknown exception");
  }
}

}  // namespace

extern "C" {

int sf_c_api_version(void) { return SF_C_API_VERSION; }

const char* sf_last_error(void) { return g_last_error.c_str(); }

int sf_reference_matmul_nbits(int64_t k, int64_t n, int bits, int block_size, const uint8_t* b,
                              const float* scales, int zero_kind,
                              const uint8_t* zero_points_packed, const float* zero_points_typed,
                              const int32_t* g_idx, const float* bias, const double* a, int64_t m,
                              double* y) {
  return guarded([&]() -> Status {
    QuantizedWeight w;
    SF_RETURN_IF_ERROR(import_raw(k, n, bits, block_size, b, scales, zero_kind,
                                  zero_points_packed, zero_points_typed, g_idx, &w));
    std::vector<double> bias_d;
    if (bias != nullptr) bias_d.assign(bias, bias + n);
    return sailfish::reference_gemm(a, m, w, bias ? bias_d.data() : nullptr, y);
  });
}

int sf_dequantize_matmul_nbits(int64_t k, int64_t n, int bits, int block_size, const uint8_t* b,
                               const float* scales, int zero_kind,
                               const uint8_t* zero_points_packed, const float* zero_points_typed,
                               const int32_t* g_idx, double* w) {
  return guarded([&]() -> Status {
    if (w == nullptr) return sailfish::invalid_argument("w is null");
    QuantizedWeight q;
    SF_RETURN_IF_ERROR(import_raw(k, n, bits, block_size, b, scales, zero_kind,
                                  zero_points_packed, zero_points_typed, g_idx, &q));
    copy_out(sailfish::dequantize_reference(q), w);
    return Status();
  });
}

int sf_matmul_nbits_roundtrip(int64_t k, int64_t n, int bits, int block_size, const uint8_t* b,
                              const float* scales, int zero_kind,
                              const uint8_t* zero_points_packed, const float* zero_points_typed,
                              const int32_t* g_idx, uint8_t* b_out, float* scales_out,
                              uint8_t* zero_points_packed_out, float* zero_points_typed_out,
                              int32_t* g_idx_out) {
  return guarded([&]() -> Status {
    if (b_out == nullptr || scales_out == nullptr) {
      return sailfish::invalid_argument("b_out and scales_out must be non-null");
    }
    QuantizedWeight w;
    SF_RETURN_IF_ERROR(import_raw(k, n, bits, block_size, b, scales, zero_kind,
                                  zero_points_packed, zero_points_typed, g_idx, &w));
    MatMulNBitsTensors back;
    SF_RETURN_IF_ERROR(sailfish::export_matmul_nbits(w, &back));
    if ((!back.zero_points_packed.empty() && zero_points_packed_out == nullptr) ||
        (!back.zero_points_typed.empty() && zero_points_typed_out == nullptr) ||
        (!back.g_idx.empty() && g_idx_out == nullptr)) {
      return sailfish::invalid_argument("an output buffer for a present tensor is null");
    }
    // Same attributes, so the export has exactly the input's sizes and the caller's buffers fit.
    copy_out(back.b, b_out);
    copy_out(back.scales, scales_out);
    copy_out(back.zero_points_packed, zero_points_packed_out);
    copy_out(back.zero_points_typed, zero_points_typed_out);
    copy_out(back.g_idx, g_idx_out);
    return Status();
  });
}

}  // extern "C"
