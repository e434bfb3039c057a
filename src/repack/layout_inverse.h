// The inverse of PackedGeometry::word_index / lane_position: which element of the weight a given
// slot (32-bit word, lane inside the word) of the packed codes holds.
//
// The CPU packer walks elements and scatters each into its slot; the GPU repack instead gives one
// thread to each output word, so that every word is written once, whole, with no read-modify-write
// and no atomics. That thread needs the element of each of its lanes: this header. It is plain
// C++ (no CUDA types) so that tests/cpu/repack_mapping_test.cpp checks it exhaustively against the
// forward mapping on a machine without a GPU.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SF_REPACK_HD __host__ __device__
#else
#define SF_REPACK_HD
#endif

namespace sailfish::repack {

// Must match kPackBlockN / kPackBlockK of packed_format.h (checked by the CPU test).
constexpr int kBlockRows = 64;  // output rows (n) per block
constexpr int kBlockCols = 64;  // input columns (k) per block

// Codes per 32-bit word: 8 nibbles or 4 bytes.
SF_REPACK_HD constexpr int lanes_per_word(int bits) { return 32 / bits; }
// 32-bit words per 64 x 64 block: 512 (int4) or 1024 (int8).
SF_REPACK_HD constexpr int words_per_block(int bits) {
  return kBlockRows * kBlockCols / lanes_per_word(bits);
}

// Coordinates of an element inside its block: row r (n) and column c (k), each in [0, 64).
struct BlockElement {
  int row;
  int col;
};

// The element held by lane `lane` (0 .. lanes_per_word - 1) of word `word` (0 .. words_per_block
// - 1) of a block. The forward mapping writes word = (j * 32 + T) * bits + s with T the mma lane,
// j the n16 group and s the slot of the k16 slice (int4: s = k16; int8: s = 2 * k16 + column
// half), so peeling those apart, then the lane's bit fields, gives back (r, c).
SF_REPACK_HD constexpr BlockElement element_in_block(int bits, int word, int lane) {
  const int run = word / bits;   // j * 32 + T: one lane's contiguous run of `bits` words
  const int slot = word % bits;  // position inside the run
  const int j = run / 32;
  const int t = run % 32;
  // int4 lane = k_odd * 4 + column_half * 2 + k_half; int8 lane = k_odd * 2 + k_half.
  const int k16 = bits == 4 ? slot : slot / 2;
  const int column_half = bits == 4 ? (lane / 2) % 2 : slot % 2;
  const int k_odd = bits == 4 ? lane / 4 : lane / 2;
  const int k_half = lane % 2;
  // T = 4 * (r % 8) + (c % 8) / 2, r = 16 j + 8 * column_half + r % 8, c = 16 k16 + 8 k_half + ..
  BlockElement e{};
  e.row = 16 * j + 8 * column_half + t / 4;
  e.col = 16 * k16 + 8 * k_half + 2 * (t % 4) + k_odd;
  return e;
}

// Where a word of the whole packed tensor sits: its block's first element and the word inside the
// block. Blocks are stored n-block major: block = n_block * k_blocks + k_block.
struct WordPlace {
  int64_t row0;       // first output row (n) of the block
  int64_t col0;       // first packed input column (k) of the block
  int word_in_block;  // 0 .. words_per_block(bits) - 1
};

SF_REPACK_HD constexpr WordPlace place_of_word(int bits, int64_t k_blocks, int64_t word) {
  const int64_t per_block = words_per_block(bits);
  const int64_t block = word / per_block;
  WordPlace p{};
  p.row0 = (block / k_blocks) * kBlockRows;
  p.col0 = (block % k_blocks) * kBlockCols;
  p.word_in_block = static_cast<int>(word % per_block);
  return p;
}

}  // namespace sailfish::repack
