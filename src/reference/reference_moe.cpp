// The float64 MoE GEMM (include/sailfish/moe.h): each local expert's choice rows gathered, one
// reference_gemm per expert, the results scaled by the router weights and scattered (or summed per
// token, expert by expert in local order: a fixed order, so the sums are the same every run).
#include <algorithm>

#include "sailfish/moe.h"
#include "sailfish/reference.h"

namespace sailfish {

Status reference_moe_gemm(const MoeRouting& routing, const MoeGemm& gemm,
                          const std::vector<QuantizedWeight>& experts, const double* a,
                          const double* bias, double* y) {
  SF_RETURN_IF_ERROR(validate(routing));
  const int local = routing.local_experts();
  if (experts.size() != static_cast<size_t>(local)) {
    return invalid_argument("reference_moe_gemm: ", experts.size(), " expert weights for ", local,
                            " local experts; pass one weight per local expert, in local order");
  }
  if (local == 0) return invalid_argument("reference_moe_gemm: the routing has no local expert");
  const int64_t n = experts[0].n, k = experts[0].k;
  for (size_t l = 0; l < experts.size(); ++l) {
    SF_RETURN_IF_ERROR(validate(experts[l]));
    if (experts[l].n != n || experts[l].k != k) {
      return invalid_argument("reference_moe_gemm: expert ", l, " is ", experts[l].n, " x ",
                              experts[l].k, " but expert 0 is ", n, " x ", k,
                              "; a layer's experts share one shape");
    }
  }
  const int64_t in_rows = gemm.input_rows(routing), out_rows = gemm.output_rows(routing);
  if ((in_rows > 0 && a == nullptr) || (out_rows > 0 && y == nullptr)) {
    return invalid_argument("reference_moe_gemm: a and y must be non-null when there are rows");
  }
  std::fill(y, y + out_rows * n, 0.0);

  std::vector<double> gathered, products;
  for (int l = 0; l < local; ++l) {
    std::vector<int64_t> rows;  // this expert's choice rows, ascending
    for (int64_t r = 0; r < routing.choices(); ++r) {
      if (routing.local_expert(routing.topk_ids[static_cast<size_t>(r)]) == l) rows.push_back(r);
    }
    if (rows.empty()) continue;
    gathered.resize(rows.size() * static_cast<size_t>(k));
    for (size_t i = 0; i < rows.size(); ++i) {
      const int64_t source = gemm.input == MoeInput::kToken ? rows[i] / routing.top_k : rows[i];
      std::copy(a + source * k, a + (source + 1) * k, gathered.begin() + i * k);
    }
    products.resize(rows.size() * static_cast<size_t>(n));
    SF_RETURN_IF_ERROR(reference_gemm(gathered.data(), static_cast<int64_t>(rows.size()),
                                      experts[static_cast<size_t>(l)],
                                      bias ? bias + int64_t(l) * n : nullptr, products.data()));
    for (size_t i = 0; i < rows.size(); ++i) {
      const int64_t r = rows[i];
      const double s =
          gemm.apply_router_weights ? routing.topk_weights[static_cast<size_t>(r)] : 1.0;
      const int64_t target = gemm.output == MoeOutput::kTokenSum ? r / routing.top_k : r;
      for (int64_t nn = 0; nn < n; ++nn) y[target * n + nn] += s * products[i * n + nn];
    }
  }
  return Status();
}

}  // namespace sailfish
