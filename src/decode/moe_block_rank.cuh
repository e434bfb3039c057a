// The MoE kernel instance's own align step at decode sizes (DecodeParams::moe_self_align;
// docs/MOE.md, v3): every CTA ranks the routing itself and finds its sorted block's expert and
// rows, so the expert GEMM needs no align launch before it. The blocks are those moe_align makes
// (experts in ascending local order, each expert's choices in ascending order, padded with -1),
// so a self-aligned GEMM computes the same sums in the same order as the align step's.
//
// All of the CTA's threads take part; the scratch arrays live in the warps' stage regions, which
// the pipeline has not used yet, and the results in the CTA's MoE slots (moe_slots), past them,
// where the epilogue reads them.
#pragma once

#include <cstdint>

#include "decode/decode_kernel.cuh"

namespace sailfish::decode::detail {

// The CTA-wide exclusive prefix sum of `value` over threads in index order; `totals` holds one
// int a warp. Every thread must call it (it synchronizes the CTA twice).
template <int kThreads>
__device__ __forceinline__ int cta_exclusive_sum(int value, int32_t* totals, int* total) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int inclusive = value;
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
    const int below = __shfl_up_sync(0xffffffffu, inclusive, offset);
    if (lane >= offset) inclusive += below;
  }
  if (lane == 31) totals[warp] = inclusive;
  __syncthreads();
  int before = 0, all = 0;
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) {
    if (w < warp) before += totals[w];
    all += totals[w];
  }
  __syncthreads();  // totals may be reused
  *total = all;
  return before + inclusive - value;
}

// Ranks the routing and fills the CTA's MoE slots for block blockIdx.z; returns its expert, or -1
// past the blocks the routing fills (uniform over the CTA). `scratch`: 4 * (local experts +
// choices) + 64 bytes of shared memory no thread reads or writes meanwhile (plan_moe checks the
// stages hold them). Side duties, done by the first CTA of a block (blockIdx.x == y == 0):
//   - the fused combine (moe_direct_output): CTA (0, 0, 0) zeroes Y's row of every choice that
//     no block holds, as the align step does;
//   - otherwise the combine kernel's inputs: the block's expert (moe_block_experts_out) and its
//     choices' slots (moe_choice_slots_out), and from CTA (0, 0, 0) -1 for the choices no block
//     holds.
template <typename T, int kThreads>
__device__ int32_t moe_rank_block(const DecodeParams& p, uint8_t* scratch) {
  const int tid = threadIdx.x;
  const int experts = p.moe_local_experts, choices = p.moe_choices, rows = p.act_rows;
  int32_t* counts = reinterpret_cast<int32_t*>(scratch);  // [experts]
  int32_t* local = counts + experts;                      // [choices]
  int32_t* totals = local + choices;                      // [kThreads / 32]
  int32_t* found = totals + kThreads / 32;                // expert, first rank
  int32_t* slots = moe_slots(p);
  const bool first_of_block = blockIdx.x == 0 && blockIdx.y == 0;
  const bool first_cta = first_of_block && blockIdx.z == 0;
  for (int e = tid; e < experts; e += kThreads) counts[e] = 0;
  for (int r = tid; r <= rows; r += kThreads) slots[r] = -1;
  if (tid == 0) found[0] = -1;
  __syncthreads();

  // Each choice's local expert: -1 for another rank's, -2 for an invalid id (moe_align's rule).
  for (int c = tid; c < choices; c += kThreads) {
    const int32_t id = p.moe_topk_ids[c];
    int32_t l = -2;
    if (id >= 0 && id < p.moe_experts) {
      l = p.moe_expert_map != nullptr ? p.moe_expert_map[id] : id;
      if (l < -1 || l >= experts) l = -2;
    }
    local[c] = l;
    if (l >= 0) {
      atomicAdd(&counts[l], 1);
    } else if (first_cta) {
      if (p.moe_direct_output != 0) {
        T* row = static_cast<T*>(p.y) + int64_t(c) * p.n;
        for (int i = 0; i < p.n; ++i) row[i] = T(0.0f);
      } else {
        p.moe_choice_slots_out[c] = -1;
      }
    }
  }
  __syncthreads();

  // Each thread's run of experts, their whole blocks scanned over the CTA: the run that holds
  // block z names its expert and the rank of the block's first row among the expert's choices.
  const int z = blockIdx.z;
  const int per_thread = (experts + kThreads - 1) / kThreads;
  const int first = tid * per_thread, last = min(first + per_thread, experts);
  int own = 0;
  for (int e = first; e < last; ++e) own += (counts[e] + rows - 1) / rows;
  int made = 0;
  int block = cta_exclusive_sum<kThreads>(own, totals, &made);
  if (z >= block && z < block + own) {
    for (int e = first; e < last; ++e) {
      const int blocks = (counts[e] + rows - 1) / rows;
      if (z < block + blocks) {
        found[0] = e;
        found[1] = (z - block) * rows;
        break;
      }
      block += blocks;
    }
  }
  __syncthreads();
  const int expert = found[0];
  if (expert < 0) return -1;  // uniform: past the blocks made
  const int low = found[1];

  // The expert's choices in ascending order, ranked over the CTA; ranks low .. low + rows - 1
  // are this block's.
  const int per_choice = (choices + kThreads - 1) / kThreads;
  const int c0 = tid * per_choice, c1 = min(c0 + per_choice, choices);
  int mine = 0;
  for (int c = c0; c < c1; ++c) mine += local[c] == expert;
  int ignored = 0;
  int rank = cta_exclusive_sum<kThreads>(mine, totals, &ignored);
  for (int c = c0; c < c1 && rank < low + rows; ++c) {
    if (local[c] != expert) continue;
    if (rank >= low) {
      slots[rank - low] = c;
      if (first_of_block && p.moe_direct_output == 0) {
        p.moe_choice_slots_out[c] = z * rows + rank - low;
      }
    }
    ++rank;
  }
  if (tid == 0) {
    slots[rows] = expert;
    if (first_of_block && p.moe_direct_output == 0) p.moe_block_experts_out[z] = expert;
  }
  __syncthreads();
  return expert;
}

}  // namespace sailfish::decode::detail
