#!/usr/bin/python3
"""compare.py OUT.npy REF.npy [RTOL ATOL]: |out - ref| <= atol + rtol |ref|
elementwise, same shape and dtype; prints the worst error, exit 1 if any
element is outside (default rtol 1e-3, atol 1e-4; 0 0 asks for equality)."""
import sys

import numpy as np

out, ref = np.load(sys.argv[1]), np.load(sys.argv[2])
rtol, atol = (float(sys.argv[3]), float(sys.argv[4])) if len(sys.argv) > 4 else (1e-3, 1e-4)
if out.shape != ref.shape or out.dtype != ref.dtype:
    print(f"shape/dtype {out.dtype}{list(out.shape)} != reference {ref.dtype}{list(ref.shape)}")
    sys.exit(1)
err = np.abs(out.astype(np.float64) - ref.astype(np.float64))
bad = int((err > atol + rtol * np.abs(ref.astype(np.float64))).sum()) if err.size else 0
if not np.isfinite(out).all():
    bad = max(bad, 1)
print(f"max abs error {err.max() if err.size else 0:.3g}, {bad} of {ref.size} outside {atol:g} + {rtol:g} |ref|")
sys.exit(1 if bad else 0)
