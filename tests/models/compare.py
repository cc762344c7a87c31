#!/usr/bin/python3
"""compare.py OUT.npy REF.npy [RTOL ATOL] [EXACT.npy]: |out - ref| <= atol + rtol |ref|
elementwise, same shape and dtype; prints the worst error, exit 1 if any
element is outside (default rtol 1e-3, atol 1e-4; 0 0 asks for equality).
With EXACT.npy (PyTorch's output computed in float64, export.py), outside
elements are accepted when OUT is as close to the float64 result as REF
(PyTorch's float32 output) is itself: max |out - exact| <= 1.25 max |ref -
exact|; the deep networks whose own f32 rounding exceeds the tolerance."""
import sys

import numpy as np

args = sys.argv[1:]
exact = np.load(args.pop()) if len(args) in (3, 5) else None
out, ref = np.load(args[0]), np.load(args[1])
rtol, atol = (float(args[2]), float(args[3])) if len(args) == 4 else (1e-3, 1e-4)
if out.shape != ref.shape or out.dtype != ref.dtype:
    print(f"shape/dtype {out.dtype}{list(out.shape)} != reference {ref.dtype}{list(ref.shape)}")
    sys.exit(1)
err = np.abs(out.astype(np.float64) - ref.astype(np.float64))
bad = int((err > atol + rtol * np.abs(ref.astype(np.float64))).sum()) if err.size else 0
if not np.isfinite(out).all():
    bad = max(bad, 1)
msg = f"max abs error {err.max() if err.size else 0:.3g}, {bad} of {ref.size} outside {atol:g} + {rtol:g} |ref|"
if bad and exact is not None and exact.shape == out.shape and np.isfinite(out).all():
    e_out = float(np.abs(out.astype(np.float64) - exact).max())
    e_ref = float(np.abs(ref.astype(np.float64) - exact).max())
    verdict = "as close" if e_out <= 1.25 * e_ref else "farther"
    msg += f"; against float64: max abs error {e_out:.3g}, PyTorch's float32 {e_ref:.3g} ({verdict})"
    if e_out <= 1.25 * e_ref:
        bad = 0
print(msg)
sys.exit(1 if bad else 0)
