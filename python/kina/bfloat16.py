"""BF16 tensors in NumPy, which has no bfloat16 dtype: a BF16 parameter or
result crosses the ABI as its 16-bit words (`numpy.uint16`), the upper
half of the float32 with the same sign, exponent and leading 7 mantissa
bits.

    words = kina.to_bf16(x)        # any float array, rounded once
    x32 = kina.from_bf16(words)    # exact
"""

import numpy as np

__all__ = ["from_bf16", "to_bf16"]


def _round_to_odd_f32(x):
    """float64 to float32 rounded to odd: to nearest, then to the odd
    neighbour where that was inexact. Rounding the result to BF16 rounds
    as one step from the float64 would (float32 has more than 8 + 2 bits)."""
    with np.errstate(invalid="ignore", over="ignore"):
        nearest = x.astype(np.float32)
        inexact = (nearest.astype(np.float64) != x) & ~np.isnan(x)
        overshot = np.abs(nearest.astype(np.float64)) > np.abs(x)
    bits = nearest.view(np.uint32).copy()
    fix = inexact & ((bits & 1) == 0)
    bits[fix & overshot] -= 1
    bits[fix & ~overshot] += 1
    return bits.view(np.float32)


def to_bf16(x):
    """The BF16 words of float array `x` (uint16, same shape), rounded to
    nearest even, as Kina's `cast(x, to=BF16)` rounds; a NaN stays a (quiet)
    NaN, an overflow gives inf. Plain truncation of the float32 bits is
    not this: it rounds toward zero."""
    x = np.asarray(x)
    if x.dtype.kind != "f":
        raise TypeError("kina.to_bf16 takes a float array, got dtype %s"
                        % x.dtype)
    if x.dtype == np.float64:
        x = _round_to_odd_f32(x)
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    quiet_nan = ((bits >> 16) | 0x40).astype(np.uint16)
    return np.where(np.isnan(x), quiet_nan, rounded)


def from_bf16(words):
    """The float32 values of BF16 words (a uint16 array): exact."""
    words = np.asarray(words)
    if words.dtype != np.uint16:
        raise TypeError("kina.from_bf16 takes BF16 words (a uint16 array), "
                        "got dtype %s" % words.dtype)
    return (words.astype(np.uint32) << 16).view(np.float32)
