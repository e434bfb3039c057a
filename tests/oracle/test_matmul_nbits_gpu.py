#!/usr/bin/env python3
"""GPU conformance: Sailfish's MatMulNBits operator on the GPU against ONNX Runtime's CPU output.

Each case builds the raw com.microsoft::MatMulNBits tensors exactly as the CPU oracle does
(tests/oracle/test_ort_oracle.py: its tensor generator, its ORT model builder and session options,
its list of ORT CPU quirks) and runs ORT's CPUExecutionProvider on them; then the same tensors go
through libsailfish_c's GPU entry points (src/c_api/c_api_gpu.h: MatMulNBitsOp::create, run,
save, create_from_serialized) once for every path the dispatch can pick:

  dense          tier forced to dense (dequantize + cuBLASLt over the whole N)
  dense-chunked  dense, N-chunked fallback forced with 64-row chunks (N up to 200: up to 4 chunks)
  decode         tier forced to decode   } skipped (counted, printed) while plan() answers
  prefill        tier forced to prefill  } kUnsupported, so they are covered once they exist
  auto           the tier plan() chooses
  prepacked      auto, from the serialized form of the auto operator (save -> load); must also be
                 bitwise equal to auto

Grid: bits {4, 8} x block_size {16..256} x zero points {none, packed uint8, typed} x g_idx
{off, on} x K {multiple of block_size, not} x activations {fp16, bf16, fp32 with the default
bf16 compute, fp32 with accuracy_level 2 = fp16 compute} (480 cases), each at M {1, 16, 256};
bias {off, on} and weights {initializers, graph inputs} are dealt round-robin as in the oracle.
N is drawn in 1..200 (the oracle's 1..64 would leave the chunked path a single chunk), K as in
the oracle. ORT runs fp16 for fp16 activations and fp32 otherwise; for bf16 activations ORT gets
the bf16-rounded A, scales and bias as fp32, so both sides see the same numbers.

Cases the oracle skips for a known ORT CPU quirk (4-bit packed zero points with g_idx, 8-bit with
g_idx or typed zero points) are compared with Sailfish's float64 reference instead of ORT (the
oracle test shows that reference equals ORT wherever ORT is right), and say so.

Tolerance. With y_ref the float64 reference (Sailfish's, fed the same tensors), W its dequantized
weight, rss[m][n] = sqrt(sum_k (A W)^2) and scale = max(||y_ref||, ||rss||) as in the oracle, the
error ||y_gpu - y_ort|| / scale must stay under

  [u * max(||y_ref||, ||y_ref - bias||)                    output rounded to 16 bits (u below)
   + ORT's own error: 2^-10 ||y_ref|| for fp16 (output rounding, bias), 1e-5 scale for fp32
   + 6 sqrt(u^2/3 (||rss||^2 + ||rss_fold||^2            weight rounded (dequantize, zero fold)
                 + [fp32 A] ||rss||^2                     activations rounded to 16 bits
                 + [scales inexact] ||rss_block||^2))     scales rounded to 16 bits
   + 1e-6 scale] / scale

u is the compute type's unit roundoff (2^-11 fp16, 2^-8 bf16). A rounded value x carries an
error of at most u|x| and, for data like this, of variance at most u^2 x^2 / 3, independently per
rounding; a sum of such errors over K has variance u^2/3 times the sum of squares of the rounded
terms, hence the root-sum-square terms: rss for the weight and for the activations,
rss_fold = sqrt(sum_k (A fold)^2) for the zero fold (shift - zp) s that the packed format
rounds once and adds (docs/FORMAT.md: shift is the integer nearest zp in the code range, so the
fold is 0 for integer zero points and at most s / 2 otherwise), rss_block =
sqrt(sum_blocks (sum_{k in block} A W)^2) for one scale rounding shared by a block (it assumes, as
every tier does, that the weight is formed with one fused multiply-add, (q - shift) s + fold,
rounded once). 6 standard deviations make a
false failure over the ~8600 checks of a run vanishingly unlikely; the bound comes to about
3.5e-3 of the scale for fp16 compute, 2e-2 for bf16 and 3e-2 for fp32 activations with bf16
compute (which also round A). Measured sensitivity (the bound against the output change that a
mutated tensor causes, over 240 grid cases, wherever the mutation changes W): codes nibble-swapped
>= 30x the bound, zero points ignored >= 10x, g_idx ignored >= 28x, scales shifted by one block
>= 5x (fp16 compute: >= 40x); typed zero points rounded to integers >= 1.4x at 4 bits, but at 8
bits that change was below what 16-bit weights resolved with format version 1 (whose zero fold of
up to 128 s rounded to 16 bits). The output rounding is a hard bound and is added, not
root-summed. On the H200 the worst error was about 0.3 of the bound.

Besides the grid: three operators tuned through sf_gpu_matmul_nbits_tune (TUNE_CASES), whose
next run must use the tuned plan (sf_gpu_matmul_nbits_plan's reason) and stay within the same
tolerance of the float64 reference, and the C ABI's argument errors.

When no GPU is present (or the library was built without CUDA) it prints why, runs only the
checks that need no device (a null operator refused), skips the rest and exits 0 unless one of
those failed. Prints one line per case and a final "N passed, N failed, N skipped"; exits 1 on any
failure. Fresh random data every run; the seed is printed and SAILFISH_TEST_SEED replays it.
"""

import argparse
import ctypes
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_ort_oracle as oracle  # noqa: E402  (the shared tensors, model builder and quirks)

MS = (1, 16, 256)
A_MODES = (  # name, activation dtype for the C ABI, accuracy_level, compute dtype
    ("fp16", 0, 0, "fp16"),
    ("bf16", 1, 0, "bf16"),
    ("fp32/bf16", 2, 0, "bf16"),
    ("fp32/fp16", 2, 2, "fp16"),
)
UNIT_ROUNDOFF = {"fp16": 2.0 ** -11, "bf16": 2.0 ** -8}
Z = 6.0
SF_UNSUPPORTED = 2  # sailfish::StatusCode::kUnsupported

# name, tier (sailfish::Tier), force_chunked, chunk_rows
VARIANTS = (
    ("dense", 3, 0, 0),
    ("dense-chunked", 3, 1, 64),
    ("decode", 1, 0, 0),
    ("prefill", 2, 0, 0),
    ("auto", 0, 0, 0),
    ("prepacked", 0, 0, 0),
)


# ---- libsailfish_c GPU entry points --------------------------------------------------------------

def load_gpu_lib(path):
    """The oracle's library handle with the GPU prototypes added, or (lib, None) when the library
    has no GPU entry points (a build without CUDA)."""
    lib = oracle.load_lib(path)
    if not hasattr(lib, "sf_gpu_available"):
        return lib, None
    u8p = ctypes.POINTER(ctypes.c_uint8)
    f32p = ctypes.POINTER(ctypes.c_float)
    i32p = ctypes.POINTER(ctypes.c_int32)
    i64, cint, vp = ctypes.c_int64, ctypes.c_int, ctypes.c_void_p
    lib.sf_gpu_available.restype = cint
    lib.sf_gpu_available.argtypes = []
    lib.sf_gpu_last_error.restype = ctypes.c_char_p
    lib.sf_gpu_last_error.argtypes = []
    lib.sf_gpu_matmul_nbits_create.restype = cint
    lib.sf_gpu_matmul_nbits_create.argtypes = [i64, i64, cint, cint, cint, u8p, f32p, cint, u8p,
                                               f32p, i32p, cint, cint, cint, i64,
                                               ctypes.POINTER(vp)]
    lib.sf_gpu_matmul_nbits_create_from_serialized.restype = cint
    lib.sf_gpu_matmul_nbits_create_from_serialized.argtypes = [
        u8p, ctypes.c_size_t, i64, i64, cint, cint, cint, cint, cint, cint, cint, cint, i64,
        ctypes.POINTER(vp)]
    lib.sf_gpu_matmul_nbits_save.restype = cint
    lib.sf_gpu_matmul_nbits_save.argtypes = [vp, u8p, ctypes.c_size_t,
                                             ctypes.POINTER(ctypes.c_size_t)]
    lib.sf_gpu_matmul_nbits_run.restype = cint
    lib.sf_gpu_matmul_nbits_run.argtypes = [vp, f32p, i64, f32p, f32p, ctypes.POINTER(cint)]
    lib.sf_gpu_matmul_nbits_tune.restype = cint
    lib.sf_gpu_matmul_nbits_tune.argtypes = [vp, i64, cint, cint, cint, ctypes.POINTER(cint),
                                             ctypes.POINTER(ctypes.c_double), ctypes.c_char_p,
                                             ctypes.c_size_t]
    lib.sf_gpu_matmul_nbits_plan.restype = cint
    lib.sf_gpu_matmul_nbits_plan.argtypes = [vp, i64, cint, ctypes.POINTER(cint), ctypes.c_char_p,
                                             ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
    lib.sf_gpu_matmul_nbits_destroy.restype = None
    lib.sf_gpu_matmul_nbits_destroy.argtypes = [vp]
    return lib, True


class Unsupported(Exception):
    """plan() (or the operator) answered kUnsupported: the path is not built yet."""


def gpu_check(lib, rc, what):
    if rc == SF_UNSUPPORTED:
        raise Unsupported(lib.sf_gpu_last_error().decode())
    if rc != 0:
        raise oracle.SailfishError(f"{what} rc={rc}: {lib.sf_gpu_last_error().decode()}")


class GpuOp:
    """One MatMulNBitsOp behind the C ABI; destroyed with the object (or explicitly)."""

    def __init__(self, lib, handle, n):
        self.lib, self.handle, self.n = lib, handle, n

    @classmethod
    def create(cls, lib, t, accuracy_level, a_dtype, tier, force_chunked, chunk_rows):
        args, keep = oracle.weight_args(t)
        handle = ctypes.c_void_p()
        rc = lib.sf_gpu_matmul_nbits_create(*args[:4], accuracy_level, *args[4:], a_dtype, tier,
                                            force_chunked, chunk_rows, ctypes.byref(handle))
        del keep
        gpu_check(lib, rc, "sf_gpu_matmul_nbits_create")
        return cls(lib, handle, t["N"])

    @classmethod
    def load(cls, lib, blob, t, accuracy_level, a_dtype, tier):
        handle = ctypes.c_void_p()
        rc = lib.sf_gpu_matmul_nbits_create_from_serialized(
            oracle.ptr(blob, ctypes.c_uint8), blob.size, t["K"], t["N"], t["bits"], t["bs"],
            accuracy_level, oracle.SF_ZP[t["zk"]], int(t["g_idx"] is not None), a_dtype, tier, 0,
            0, ctypes.byref(handle))
        gpu_check(lib, rc, "sf_gpu_matmul_nbits_create_from_serialized")
        return cls(lib, handle, t["N"])

    def save(self):
        size = ctypes.c_size_t()
        gpu_check(self.lib, self.lib.sf_gpu_matmul_nbits_save(self.handle, None, 0,
                                                              ctypes.byref(size)), "save (size)")
        blob = np.zeros(size.value, np.uint8)
        gpu_check(self.lib, self.lib.sf_gpu_matmul_nbits_save(
            self.handle, oracle.ptr(blob, ctypes.c_uint8), blob.size, ctypes.byref(size)), "save")
        return blob

    def run(self, a32, bias32):
        m = a32.shape[0]
        y = np.zeros((m, self.n), np.float32)
        tier = ctypes.c_int(-1)
        rc = self.lib.sf_gpu_matmul_nbits_run(self.handle, oracle.ptr(a32, ctypes.c_float), m,
                                              oracle.ptr(bias32, ctypes.c_float),
                                              oracle.ptr(y, ctypes.c_float), ctypes.byref(tier))
        gpu_check(self.lib, rc, "sf_gpu_matmul_nbits_run")
        return y, tier.value

    def tune(self, m, has_bias, launches=0, rounds=0, label_capacity=64):
        """(candidates, chosen us per call, chosen label) of sf_gpu_matmul_nbits_tune."""
        candidates, us = ctypes.c_int(-1), ctypes.c_double(-1.0)
        label = ctypes.create_string_buffer(label_capacity)
        rc = self.lib.sf_gpu_matmul_nbits_tune(self.handle, m, int(has_bias), launches, rounds,
                                               ctypes.byref(candidates), ctypes.byref(us), label,
                                               label_capacity)
        gpu_check(self.lib, rc, "sf_gpu_matmul_nbits_tune")
        return candidates.value, us.value, label.value.decode()

    def plan(self, m, has_bias, reason_capacity=512):
        """(tier, reason, full reason length) of the plan run() uses for m rows."""
        tier, size = ctypes.c_int(-1), ctypes.c_size_t(0)
        reason = ctypes.create_string_buffer(reason_capacity)
        rc = self.lib.sf_gpu_matmul_nbits_plan(self.handle, m, int(has_bias), ctypes.byref(tier),
                                               reason, reason_capacity, ctypes.byref(size))
        gpu_check(self.lib, rc, "sf_gpu_matmul_nbits_plan")
        return tier.value, reason.value.decode(), size.value

    def close(self):
        if self.handle:
            self.lib.sf_gpu_matmul_nbits_destroy(self.handle)
            self.handle = ctypes.c_void_p()

    def __del__(self):
        self.close()


# ---- numbers -------------------------------------------------------------------------------------

def round_bf16(x):
    """float32 -> nearest bf16 (ties to even), returned as float32."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return r.astype(np.uint32).view(np.float32).reshape(np.shape(x))


def exact_in(values, compute):
    v = np.asarray(values, np.float32)
    back = v.astype(np.float16).astype(np.float32) if compute == "fp16" else round_bf16(v)
    return bool(np.array_equal(back, v))


def per_element(t, table):
    """[N, k_blocks] -> [N, K] through the block of each k (g_idx or k // block_size)."""
    g = t["g_idx"] if t["g_idx"] is not None else np.arange(t["K"]) // t["bs"]
    return table[:, g]


def zero_fold(t):
    """The fold (shift - zp) s of every weight element, shift the integer nearest zp in the code
    range (docs/FORMAT.md); zeros without zero points."""
    bits, kb = t["bits"], t["kb"]
    s = np.asarray(t["scales"], np.float64)
    if t["zk"] == "none":
        return np.zeros((t["N"], t["K"]))
    if t["zk"] == "packed":
        zp = oracle.unpack_zero_points(t["zp"], bits, kb).astype(np.float64)
    else:
        zp = np.asarray(t["zp"], np.float64)
    shift = np.clip(np.floor(zp + 0.5), 0, (1 << bits) - 1)
    return per_element(t, (shift - zp) * s)


def block_rss(t, a64, w):
    """sqrt(sum_m,n sum_blocks (sum_{k in block} A W)^2): one rounding per block scale."""
    g = t["g_idx"] if t["g_idx"] is not None else np.arange(t["K"]) // t["bs"]
    total = 0.0
    for b in range(t["kb"]):
        cols = np.nonzero(g == b)[0]
        if cols.size:
            total += float(np.sum((a64[:, cols] @ w[:, cols].T) ** 2))
    return np.sqrt(total)


def tolerance(t, w, fold, a64, y_ref, bias, compute, fp32_a, scales_exact, ort_fp16, vs_ort):
    """(absolute Frobenius bound, scale) for ||y_gpu - y_expected||; see the module docstring."""
    u = UNIT_ROUNDOFF[compute]
    a2 = a64 * a64
    rss = float(np.linalg.norm(np.sqrt(a2 @ (w * w).T)))
    rss_fold = float(np.linalg.norm(np.sqrt(a2 @ (fold * fold).T)))
    norm_ref = float(np.linalg.norm(y_ref))
    y_nb = y_ref - (0.0 if bias is None else np.asarray(bias, np.float64)[None, :])
    scale = max(norm_ref, rss, 1e-300)
    variance = rss ** 2 + rss_fold ** 2
    if fp32_a:
        variance += rss ** 2
    if not scales_exact:
        variance += block_rss(t, a64, w) ** 2
    bound = u * max(norm_ref, float(np.linalg.norm(y_nb)))
    bound += Z * np.sqrt(u * u / 3.0 * variance)
    if vs_ort:
        bound += 2.0 ** -10 * norm_ref if ort_fp16 else 1e-5 * scale
    bound += 1e-6 * scale
    return bound, scale


# ---- the grid ------------------------------------------------------------------------------------

def build_cases(rng):
    primary = [(bits, bs, zk, g, al, mode) for bits in oracle.BITS for bs in oracle.BLOCK_SIZES
               for zk in oracle.ZERO_KINDS for g in oracle.G_IDX for al in oracle.K_ALIGNED
               for mode in A_MODES]
    order = rng.permutation(len(primary))
    cases = []
    for i, j in enumerate(order):
        bits, bs, zk, g, aligned, mode = primary[j]
        if aligned:
            k = bs * int(rng.integers(1, 2048 // bs + 1))
        else:
            k = bs * int(rng.integers(0, 4)) + int(rng.integers(1, bs))
        cases.append(dict(bits=bits, bs=bs, zk=zk, use_g=g, k=k, mode=mode,
                          n=int(rng.integers(1, 201)), bias=oracle.BIASES[i % 2],
                          weights_as=oracle.WEIGHTS_AS[(i // 2) % 2]))
    return cases


def make_case_tensors(rng, c):
    """The oracle's tensors in the ORT dtype; bf16 mode rounds the scales to bf16 (ORT then gets
    exactly what the GPU packs)."""
    name, _, _, compute = c["mode"]
    ort_dtype = np.float16 if name == "fp16" else np.float32
    t = oracle.make_tensors(rng, c["bits"], c["bs"], c["zk"], c["use_g"], c["k"], c["n"],
                            ort_dtype)
    if name == "bf16":
        t["scales"] = round_bf16(t["scales"])
    return t, ort_dtype


def activations(rng, m, k, mode, ort_dtype):
    """(A for ORT, the same values as float32 for the GPU)."""
    a = rng.standard_normal((m, k)).astype(np.float32)
    if mode[0] == "bf16":
        a = round_bf16(a)
    a_ort = a.astype(ort_dtype)
    return a_ort, np.ascontiguousarray(a_ort, np.float32)


def run_case(lib, rng, c, counts):
    mode = c["mode"]
    name, a_dtype, level, compute = mode
    label = (f"bits={c['bits']} bs={c['bs']:3d} zp={c['zk']:6s} g_idx={int(c['use_g'])} "
             f"K={c['k']:4d} N={c['n']:3d} A={name:9s} bias={int(c['bias'])} "
             f"weights={c['weights_as']}")
    t, ort_dtype = make_case_tensors(rng, c)
    quirk = oracle.known_quirk(c["bits"], c["zk"], c["use_g"])
    w = oracle.sf_dequantize(lib, t)
    fold = zero_fold(t)
    scales_exact = exact_in(t["scales"], compute)
    bias_ort = None
    if c["bias"]:
        bias_ort = (0.5 * rng.standard_normal(c["n"])).astype(np.float32)
        if name == "bf16":
            bias_ort = round_bf16(bias_ort)
        bias_ort = bias_ort.astype(ort_dtype)
    bias32 = None if bias_ort is None else np.ascontiguousarray(bias_ort, np.float32)

    # Expected outputs per M: ORT's, or the reference where ORT has a known quirk.
    rows = []
    for m in MS:
        a_ort, a32 = activations(rng, m, c["k"], mode, ort_dtype)
        a64 = a32.astype(np.float64)
        y_ref = oracle.sf_reference(lib, t, a64, bias_ort)
        if quirk is None:
            expected = oracle.run_ort(t, a_ort, bias_ort, c["weights_as"]).astype(np.float64)
        else:
            expected = y_ref
        bound, scale = tolerance(t, w, fold, a64, y_ref, bias_ort, compute, a_dtype == 2,
                                 scales_exact, ort_dtype == np.float16, quirk is None)
        rows.append((m, a32, expected, bound, scale))

    results = []  # per variant: text
    failures = []
    auto_outputs = {}
    auto_op = None
    for vname, tier, force_chunked, chunk_rows in VARIANTS:
        worst = 0.0
        try:
            if vname == "prepacked":
                if auto_op is None:
                    raise Unsupported("the auto operator did not run")
                op = GpuOp.load(lib, auto_op.save(), t, level, a_dtype, tier)
            else:
                op = GpuOp.create(lib, t, level, a_dtype, tier, force_chunked, chunk_rows)
        except Unsupported:
            counts["skipped"] += len(MS)
            results.append(f"{vname} skip")
            continue
        except Exception as e:  # noqa: BLE001 - reported as a failure of every M of the variant
            counts["failed"] += len(MS)
            failures.append(f"{vname}: {type(e).__name__}: {e}")
            results.append(f"{vname} FAIL")
            continue
        ran = skipped = 0
        tiers = set()
        for m, a32, expected, bound, scale in rows:
            try:
                y, tier_used = op.run(a32, bias32)
            except Unsupported:
                skipped += 1
                continue
            except Exception as e:  # noqa: BLE001
                counts["failed"] += 1
                failures.append(f"{vname} M={m}: {type(e).__name__}: {e}")
                continue
            tiers.add(tier_used)
            problems = []
            y64 = y.astype(np.float64)
            if not np.all(np.isfinite(y64)):
                problems.append(f"{int(np.sum(~np.isfinite(y64)))} non-finite outputs")
            err = float(np.linalg.norm(y64 - expected))
            ratio = err / bound
            worst = max(worst, ratio)
            if not ratio <= 1.0:
                problems.append(f"rel error {err / scale:.2e} > tolerance {bound / scale:.2e}")
            if vname == "auto":
                auto_outputs[m] = y
            if vname == "prepacked" and m in auto_outputs and \
                    y.tobytes() != auto_outputs[m].tobytes():
                problems.append("not bitwise equal to the auto operator's output")
            if problems:
                counts["failed"] += 1
                failures.append(f"{vname} M={m}: {'; '.join(problems)}")
            else:
                counts["passed"] += 1
                ran += 1
        counts["skipped"] += skipped
        if vname == "auto":
            auto_op = op
        else:
            op.close()
        names = "/".join(sorted({("auto", "decode", "prefill", "dense")[x] for x in tiers
                                 if 0 <= x <= 3}))
        shown = f"{vname} {worst:.2f}" if ran else f"{vname} skip"
        if vname in ("auto", "prepacked") and names:
            shown += f" ({names})"
        results.append(shown)
    if auto_op is not None:
        auto_op.close()
    versus = "vs ORT" if quirk is None else f"vs reference ({quirk})"
    status = "FAIL" if failures else "PASS"
    print(f"{status} {label} {versus}: err/tol {', '.join(results)}")
    for f in failures:
        print(f"    {f}")


def check_api_errors(lib, counts):
    """Bad input through the C ABI fails with a message and never crashes."""
    b = np.zeros(4 * 24, np.uint8)
    s = np.ones(4, np.float32)
    handle = ctypes.c_void_p()
    rc = lib.sf_gpu_matmul_nbits_create(48, 4, 4, 48, 0, oracle.ptr(b, ctypes.c_uint8),
                                        oracle.ptr(s, ctypes.c_float), 0, None, None, None, 0, 3,
                                        0, 0, ctypes.byref(handle))
    msg = lib.sf_gpu_last_error().decode()
    ok = rc != 0 and "block_size" in msg and not handle
    print(f"{'PASS' if ok else 'FAIL'} c_api error path (block_size 48): rc={rc} {msg!r}")
    counts["passed" if ok else "failed"] += 1
    # Attributes whose tensor sizes overflow int64 (n = 2^59 + 1, k = 16, int8, blocks of 16:
    # n * k_blocks * 16 bytes wraps to 16) are refused as a shape, not sized from the wrapped
    # product (which allocated 2^59 floats and failed with std::bad_alloc, code 100).
    handle = ctypes.c_void_p()
    rc = lib.sf_gpu_matmul_nbits_create(16, (1 << 59) + 1, 8, 16, 0, oracle.ptr(b, ctypes.c_uint8),
                                        oracle.ptr(s, ctypes.c_float), 0, None, None, None, 0, 0,
                                        0, 0, ctypes.byref(handle))
    msg = lib.sf_gpu_last_error().decode()
    ok = rc not in (0, 100) and "too large" in msg and not handle
    print(f"{'PASS' if ok else 'FAIL'} c_api error path (n = 2^59 + 1): rc={rc} {msg!r}")
    counts["passed" if ok else "failed"] += 1
    # A damaged prepacked blob is refused.
    rng = np.random.default_rng(0)
    t = oracle.make_tensors(rng, 4, 32, "packed", False, 96, 40, np.float32)
    try:
        op = GpuOp.create(lib, t, 0, 2, 0, 0, 0)
        # m * k elements past int64 are refused before anything is sized or copied.
        a_dummy = np.zeros(8, np.float32)
        y_dummy = np.zeros(8, np.float32)
        rc = lib.sf_gpu_matmul_nbits_run(op.handle, oracle.ptr(a_dummy, ctypes.c_float), 1 << 62,
                                         None, oracle.ptr(y_dummy, ctypes.c_float), None)
        expect_error(lib, counts, "run, m = 2^62", rc, "64-bit byte counts")
        blob = op.save()
        op.close()
        GpuOp.load(lib, blob, t, 0, 2, 0).close()  # intact: loads
        blob[blob.size // 2] ^= 1
        try:
            GpuOp.load(lib, blob, t, 0, 2, 0)
            ok, msg = False, "a damaged prepacked weight loaded"
        except oracle.SailfishError as e:
            ok, msg = "checksum" in str(e), str(e)
    except Exception as e:  # noqa: BLE001
        ok, msg = False, f"{type(e).__name__}: {e}"
    print(f"{'PASS' if ok else 'FAIL'} damaged prepacked weight refused: {msg}")
    counts["passed" if ok else "failed"] += 1


def expect_error(lib, counts, what, rc, needle):
    """A bad call must fail with SF invalid argument (1) and a message naming the problem."""
    msg = lib.sf_gpu_last_error().decode()
    ok = rc == 1 and needle in msg
    print(f"{'PASS' if ok else 'FAIL'} c_api error path ({what}): rc={rc} {msg!r}")
    counts["passed" if ok else "failed"] += 1


def check_api_errors_without_device(lib, counts):
    """Entry points that must refuse a null operator before touching any device."""
    rc = lib.sf_gpu_matmul_nbits_tune(None, 1, 0, 0, 0, None, None, None, 0)
    expect_error(lib, counts, "tune, null op", rc, "op is null")
    rc = lib.sf_gpu_matmul_nbits_plan(None, 1, 0, None, None, 0, None)
    expect_error(lib, counts, "plan, null op", rc, "op is null")


# Tuned operators (sf_gpu_matmul_nbits_tune) against the float64 reference: the shape is large
# enough for several decode split depths to be candidates. (a mode of A_MODES, M, bias)
TUNE_CASES = (
    (A_MODES[1], 1, True),    # bf16
    (A_MODES[1], 16, False),
    (A_MODES[2], 16, True),   # fp32 activations: the 16-bit product is tuned
)
TUNE_K, TUNE_N = 2048, 1024
TIER_NAMES = ("auto", "decode", "prefill", "dense")


def check_tune(lib, rng, counts):
    """tune() through the C ABI: the chosen plan is the one run() then uses, and its output is
    right. Also its argument checks and the label's truncation."""
    for mode, m, bias in TUNE_CASES:
        name, a_dtype, level, compute = mode
        c = dict(bits=4, bs=128, zk="none", use_g=False, k=TUNE_K, n=TUNE_N, mode=mode)
        t, ort_dtype = make_case_tensors(rng, c)
        bias32 = None
        if bias:
            bias32 = (0.5 * rng.standard_normal(TUNE_N)).astype(np.float32)
            if name == "bf16":
                bias32 = round_bf16(bias32)
        _, a32 = activations(rng, m, TUNE_K, mode, ort_dtype)
        a64 = a32.astype(np.float64)
        y_ref = oracle.sf_reference(lib, t, a64, bias32)
        w = oracle.sf_dequantize(lib, t)
        bound, scale = tolerance(t, w, zero_fold(t), a64, y_ref, bias32, compute, a_dtype == 2,
                                 exact_in(t["scales"], compute), False, False)
        label = f"tune A={name} M={m} bias={int(bias)} K={TUNE_K} N={TUNE_N}"
        problems = []
        op = GpuOp.create(lib, t, level, a_dtype, 0, 0, 0)
        try:
            candidates, us, chosen = op.tune(m, bias, launches=8, rounds=3)
            tier, reason, reason_size = op.plan(m, bias)
            y, tier_used = op.run(a32, bias32)
            if candidates < 2:
                problems.append(f"{candidates} candidates (expected the rule and alternatives)")
            if not us > 0.0:
                problems.append(f"chosen plan's time {us}")
            if not chosen or chosen not in reason or not reason.startswith("tuned: "):
                problems.append(f"the plan's reason {reason!r} does not name the tuned choice "
                                f"{chosen!r}")
            if reason_size != len(reason):
                problems.append(f"reason size {reason_size} for a reason of {len(reason)} bytes")
            if tier != tier_used:
                problems.append(f"plan says tier {tier}, run used {tier_used}")
            y64 = y.astype(np.float64)
            err = float(np.linalg.norm(y64 - y_ref))
            if not np.all(np.isfinite(y64)):
                problems.append(f"{int(np.sum(~np.isfinite(y64)))} non-finite outputs")
            elif not err <= bound:
                problems.append(f"rel error {err / scale:.2e} > tolerance {bound / scale:.2e}")
            # A short label buffer gets the label's start, NUL-terminated.
            _, _, short = op.tune(m, bias, launches=8, rounds=3, label_capacity=3)
            if len(short) > 2:
                problems.append(f"label {short!r} overran a 3-byte buffer")
            shown = (f"{candidates} candidates, chose {chosen!r} {us:.2f} us "
                     f"({TIER_NAMES[tier] if 0 <= tier <= 3 else tier}), err/tol {err / bound:.2f}")
        except Exception as e:  # noqa: BLE001 - reported as this case's failure
            problems.append(f"{type(e).__name__}: {e}")
            shown = "raised"
        status = "FAIL" if problems else "PASS"
        print(f"{status} {label}: {shown}")
        for p in problems:
            print(f"    {p}")
        counts["failed" if problems else "passed"] += 1
        if m == 1:  # argument checks on a live operator, once
            h = op.handle
            expect_error(lib, counts, "tune, m = 0",
                         lib.sf_gpu_matmul_nbits_tune(h, 0, 0, 0, 0, None, None, None, 0),
                         "m is 0")
            expect_error(lib, counts, "tune, launches = -3",
                         lib.sf_gpu_matmul_nbits_tune(h, 1, 0, -3, 0, None, None, None, 0),
                         "launches is -3")
            expect_error(lib, counts, "tune, has_bias = 2",
                         lib.sf_gpu_matmul_nbits_tune(h, 1, 2, 0, 0, None, None, None, 0),
                         "has_bias is 2")
            expect_error(lib, counts, "plan, m = -1",
                         lib.sf_gpu_matmul_nbits_plan(h, -1, 0, None, None, 0, None), "m is -1")
        op.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", required=True, help="path to libsailfish_c.so")
    parser.add_argument("--api-only", action="store_true",
                        help="only the C ABI checks and the tuned operators, not the grid")
    args = parser.parse_args()

    env_seed = os.environ.get("SAILFISH_TEST_SEED")
    seed = int(env_seed) if env_seed else int.from_bytes(os.urandom(8), "little") >> 1
    print(f"[sailfish] matmul_nbits gpu conformance seed {seed} (set SAILFISH_TEST_SEED to "
          f"replay); onnxruntime {oracle.ort.__version__}, numpy {np.__version__}")
    rng = np.random.default_rng(seed)
    lib, has_gpu_api = load_gpu_lib(args.lib)
    cases = [] if args.api_only else build_cases(rng)
    planned = len(cases) * len(VARIANTS) * len(MS) + 4 + len(TUNE_CASES) + 4
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    if has_gpu_api:
        check_api_errors_without_device(lib, counts)
    if not has_gpu_api or lib.sf_gpu_available() == 0:
        why = ("the library was built without CUDA" if not has_gpu_api
               else "no CUDA device is visible")
        print(f"[sailfish] {why}: skipping all {planned} GPU checks")
        print(f"{counts['passed']} passed, {counts['failed']} failed, {planned} skipped")
        return 1 if counts["failed"] else 0

    start = time.time()
    check_api_errors(lib, counts)
    check_tune(lib, rng, counts)
    for c in cases:
        try:
            run_case(lib, rng, c, counts)
        except Exception as e:  # noqa: BLE001 - a broken case is a failure, not the end
            counts["failed"] += 1
            print(f"FAIL case {c}: {type(e).__name__}: {e}")
        sys.stdout.flush()
    print(f"[sailfish] {time.time() - start:.1f}s")
    print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
