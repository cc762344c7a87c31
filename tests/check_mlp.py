#!/usr/bin/python3
"""An independent oracle for examples/mlp.ir: regenerates its seeded weights
and inputs with a numpy implementation of gdcc's generator (splitmix64,
Box-Muller; docs/ir.md), computes the model in float64 with numpy, and
compares with the outputs gdcc's reference interpreter wrote.

usage: check_mlp.py SEED OUTDIR   (OUTDIR holds logits.npy and probs.npy)
"""
import sys

import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
M64 = (1 << 64) - 1


def mix(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def draws(seed, n):
    """The first n outputs of splitmix64 seeded with `seed`."""
    k = np.arange(1, n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return mix(np.uint64(seed) + k * GOLDEN)


def uniform(seed, n):
    return (draws(seed, n) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def normal(seed, shape, mean, std):
    n = int(np.prod(shape))
    u = uniform(seed, 2 * n)
    u1, u2 = u[0::2], u[1::2]
    x = np.sqrt(-2.0 * np.log(1.0 - u1)) * np.cos(2.0 * np.pi * u2)
    return (mean + std * x).astype(np.float32).reshape(shape)


def derive(seed, index):
    s = (seed ^ (index * 0xD1B54A32D192ED03)) & M64
    with np.errstate(over="ignore"):
        return int(mix(np.array([s], dtype=np.uint64) + GOLDEN)[0])


def generated_input(seed, index, shape):
    u = uniform(derive(seed, index), int(np.prod(shape)))
    return (2.0 * u - 1.0).astype(np.float32).reshape(shape)


def main():
    seed, outdir = int(sys.argv[1]), sys.argv[2]
    x = generated_input(seed, 0, (64, 784)).astype(np.float64)
    w1 = normal(1, (784, 512), 0, 0.05)
    b1 = normal(2, (512,), 0, 0.01)
    w2 = normal(3, (512, 512), 0, 0.044)
    b2 = normal(4, (512,), 0, 0.01)
    w3 = normal(5, (512, 10), 0, 0.044)
    r1 = np.maximum(x @ w1 + b1, 0)
    r2 = np.maximum(r1 @ w2 + b2, 0)
    logits = r2 @ w3
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    got_logits = np.load(f"{outdir}/logits.npy")
    got_probs = np.load(f"{outdir}/probs.npy")
    assert got_logits.dtype == np.float32 and got_logits.shape == (64, 10)
    # gdcc rounds to f32 after each of five ops; numpy stays in f64.
    np.testing.assert_allclose(got_logits, logits, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_probs, probs, rtol=1e-5, atol=1e-7)
    print(f"mlp matches numpy: max |logits diff| {np.abs(got_logits - logits).max():.3g}")


if __name__ == "__main__":
    main()
