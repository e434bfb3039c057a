#include "moe/cublas_experts.h"

#include <limits>
#include <string>

#include "common/cuda_check.h"
#include "nonfinite_scan.h"
#include "random_fill.h"

namespace sailfish::bench {

namespace {
// As the dense baseline's (bench/cublas_baseline.cpp): enough for cuBLAS's split-K algorithms,
// set once so that no call allocates inside a graph capture.
constexpr size_t kWorkspaceBytes = size_t(32) << 20;
}  // namespace

CublasExperts::~CublasExperts() {
  if (handle_ != nullptr) cublasDestroy(handle_);
}

Status CublasExperts::create(const std::vector<int>& rows, int64_t n, int64_t k, int copies,
                             uint64_t seed, cudaStream_t stream,
                             std::unique_ptr<CublasExperts>* out) {
  if (out == nullptr) return invalid_argument("CublasExperts::create: out is null");
  if (n < 1 || k < 1 || copies < 1) {
    return invalid_argument("CublasExperts::create: n ", n, ", k ", k, " and copies ", copies,
                            " must be positive");
  }
  if (n > std::numeric_limits<int>::max() || k > std::numeric_limits<int>::max()) {
    return invalid_argument("CublasExperts::create: n ", n, " or k ", k, " past int");
  }
  std::unique_ptr<CublasExperts> c(new CublasExperts());
  c->copies_ = copies;
  int64_t total_rows = 0;
  std::vector<int64_t>& first_row = c->first_row_;
  for (const int r : rows) {
    if (r < 0) return invalid_argument("CublasExperts::create: a negative row count ", r);
    if (r == 0) continue;
    first_row.push_back(total_rows);
    total_rows += r;
    // y_e^T (n x r, column-major, ld n) = op_T(w_e: column-major k x n, ld k) . a_e^T (k x r).
    c->trans_a_.push_back(CUBLAS_OP_T);
    c->trans_b_.push_back(CUBLAS_OP_N);
    c->m_.push_back(static_cast<int>(n));
    c->n_.push_back(r);
    c->k_.push_back(static_cast<int>(k));
    c->lda_.push_back(static_cast<int>(k));
    c->ldb_.push_back(static_cast<int>(k));
    c->ldc_.push_back(static_cast<int>(n));
    c->group_size_.push_back(1);
    c->alpha_.push_back(1.0f);
    c->beta_.push_back(0.0f);
  }
  const int groups = c->groups();
  if (groups == 0) return invalid_argument("CublasExperts::create: no expert has rows");
  c->total_rows_ = total_rows;

  const size_t weight_elems = static_cast<size_t>(n * k);
  SF_RETURN_IF_ERROR(c->weights_.allocate(weight_elems * 2 * groups * copies));
  SF_RETURN_IF_ERROR(c->activations_.allocate(static_cast<size_t>(total_rows * k) * 2));
  SF_RETURN_IF_ERROR(c->outputs_.allocate(static_cast<size_t>(total_rows * n) * 2));
  SF_RETURN_IF_ERROR(fill_random_values(c->weights_.get(),
                                        static_cast<int64_t>(weight_elems * groups * copies),
                                        DType::kBF16, 0.05f, derive_seed(seed, 11), stream));
  SF_RETURN_IF_ERROR(fill_random_values(c->activations_.get(), total_rows * k, DType::kBF16, 1.0f,
                                        derive_seed(seed, 12), stream));

  // Per copy: [A pointers (weights) | B pointers (activations) | C pointers (outputs)].
  std::vector<const void*> pointers(static_cast<size_t>(3 * groups * copies));
  const auto* w = c->weights_.as<const uint8_t>();
  const auto* a = c->activations_.as<const uint8_t>();
  auto* y = c->outputs_.as<uint8_t>();
  for (int copy = 0; copy < copies; ++copy) {
    const size_t base = static_cast<size_t>(3 * groups * copy);
    for (int g = 0; g < groups; ++g) {
      const size_t expert = static_cast<size_t>(copy * groups + g);
      pointers[base + g] = w + expert * weight_elems * 2;
      pointers[base + groups + g] = a + static_cast<size_t>(first_row[g] * k) * 2;
      pointers[base + 2 * groups + g] = y + static_cast<size_t>(first_row[g] * n) * 2;
    }
  }
  SF_RETURN_IF_ERROR(c->pointers_.allocate(pointers.size() * sizeof(void*)));
  SF_CUDA_CHECK(cudaMemcpy(c->pointers_.get(), pointers.data(), pointers.size() * sizeof(void*),
                           cudaMemcpyHostToDevice));

  SF_CUBLAS_CHECK(cublasCreate(&c->handle_));
  SF_RETURN_IF_ERROR(c->workspace_.allocate(kWorkspaceBytes));
  SF_CUBLAS_CHECK(cublasSetWorkspace(c->handle_, c->workspace_.get(), kWorkspaceBytes));
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  *out = std::move(c);
  return Status();
}

Status CublasExperts::enqueue(int copy, cudaStream_t stream) {
  if (copy < 0 || copy >= copies_) {
    return invalid_argument("CublasExperts::enqueue: copy ", copy, " of ", copies_);
  }
  const int groups = this->groups();
  auto* table = pointers_.as<void*>() + static_cast<size_t>(3 * groups * copy);
  SF_CUBLAS_CHECK(cublasSetStream(handle_, stream));
  SF_CUBLAS_CHECK(cublasGemmGroupedBatchedEx(
      handle_, trans_a_.data(), trans_b_.data(), m_.data(), n_.data(), k_.data(), alpha_.data(),
      table, CUDA_R_16BF, lda_.data(), table + groups, CUDA_R_16BF, ldb_.data(), beta_.data(),
      table + 2 * groups, CUDA_R_16BF, ldc_.data(), groups, group_size_.data(),
      CUBLAS_COMPUTE_32F));
  return Status();
}

Status CublasExperts::check(int copy, int samples, uint64_t seed, cudaStream_t stream,
                            CheckResult* result) {
  if (result == nullptr) return invalid_argument("CublasExperts::check: result is null");
  const int64_t n = m_.empty() ? 0 : m_[0], k = k_.empty() ? 0 : k_[0];
  SF_RETURN_IF_ERROR(poison_output(outputs_.get(), total_rows_ * n, stream));
  SF_RETURN_IF_ERROR(enqueue(copy, stream));
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  NonfiniteScanner scanner;
  SF_RETURN_IF_ERROR(scanner.init());
  SF_RETURN_IF_ERROR(
      scanner.count(outputs_.get(), total_rows_ * n, DType::kBF16, stream, &result->nonfinite));
  if (result->nonfinite > 0) {
    result->passed = false;
    result->detail = std::to_string(result->nonfinite) + " of " + std::to_string(total_rows_ * n) +
                     " cuBLAS output elements are NaN/Inf";
  }
  const int groups = this->groups();
  const size_t weight_elems = static_cast<size_t>(n * k);
  for (int g = 0; g < groups; ++g) {
    CheckTarget target;
    target.a = activations_.as<const uint8_t>() + static_cast<size_t>(first_row_[g] * k) * 2;
    target.y = outputs_.as<const uint8_t>() + static_cast<size_t>(first_row_[g] * n) * 2;
    target.m = n_[static_cast<size_t>(g)];
    target.n = n;
    target.k = k;
    target.dtype = DType::kBF16;
    const void* weight =
        weights_.as<const uint8_t>() + static_cast<size_t>(copy * groups + g) * weight_elems * 2;
    SF_RETURN_IF_ERROR(check_dense(
        weight, target, pick_samples(target.m, n, samples, derive_seed(seed, g)), result));
  }
  return Status();
}

}  // namespace sailfish::bench
