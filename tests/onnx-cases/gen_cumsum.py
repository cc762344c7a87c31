#!/usr/bin/python3
# CumSum cases in the ONNX backend-test layout: the suite's own (test_cumsum_*)
# are float64, which gdcc does not take, so these are f32, i32 and i64, with
# exclusive, reverse, negative axes, a length that is not a power of two, a
# length of one and a long axis (1,000: ten steps of the scan).  f32 data is
# whole numbers or non-negative (exact sums, or no cancellation), so that
# ONNX's 1e-7 + 1e-3 |ref| holds whatever order the sums are taken in.
# The axis is a graph input with its test value (as in the suite), or an
# initializer.  The oracle is numpy.cumsum (float64 for f32 data), read as
# the ONNX operator's text says (exclusive: the sum of the elements before;
# reverse: from the end):
#   tests/onnx-cases/gen_cumsum.py tests/onnx-cases   wrote the committed cases
# (python3-onnx, python3-numpy).
import numpy as np, os, sys
from onnx import helper, numpy_helper, TensorProto
from casefile import write_case

out = sys.argv[1]
rng = np.random.RandomState(31)
TP = {np.float32: TensorProto.FLOAT, np.int32: TensorProto.INT32, np.int64: TensorProto.INT64}

def oracle(x, axis, exclusive, reverse):
    acc = x.astype(np.float64) if x.dtype == np.float32 else x
    if reverse:
        acc = np.flip(acc, axis)
    y = np.cumsum(acc, axis=axis, dtype=acc.dtype)
    if exclusive:
        y = y - acc
    if reverse:
        y = np.flip(y, axis)
    return y.astype(x.dtype)

def case(name, x, axis, exclusive=0, reverse=0, axis_type=np.int32, axis_init=False):
    y = oracle(x, axis, exclusive, reverse)
    attrs = {}
    if exclusive:
        attrs["exclusive"] = exclusive
    if reverse:
        attrs["reverse"] = reverse
    node = helper.make_node("CumSum", ["x", "axis"], ["y"], **attrs)
    a = np.array(axis, dtype=axis_type)
    gin = [helper.make_tensor_value_info("x", TP[x.dtype.type], x.shape)]
    inits, feeds = [], [("x", x)]
    if axis_init:
        inits = [numpy_helper.from_array(a, "axis")]
    else:
        gin.append(helper.make_tensor_value_info("axis", TP[axis_type], a.shape))
        feeds.append(("axis", a))
    gout = [helper.make_tensor_value_info("y", TP[x.dtype.type], y.shape)]
    g = helper.make_graph([node], "test_" + name, gin, gout, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    write_case(os.path.join(out, "node", "test_" + name), m, feeds, [("y", y)])
    print(name, x.dtype, x.shape, "axis", axis, y.ravel()[:4])

v5 = np.array([1, 2, 3, 4, 5], dtype=np.float32)
case("cumsum_f32_1d", v5, 0)
case("cumsum_f32_1d_exclusive", v5, 0, exclusive=1)
case("cumsum_f32_1d_reverse", v5, 0, reverse=1)
case("cumsum_f32_1d_reverse_exclusive", v5, 0, exclusive=1, reverse=1)
m23 = np.arange(1, 7).reshape(2, 3)
case("cumsum_i64_2d_axis_0", m23.astype(np.int64), 0, axis_type=np.int64)
case("cumsum_i32_2d_axis_1", m23.astype(np.int32), 1)
case("cumsum_f32_2d_negative_axis", m23.astype(np.float32), -1)
case("cumsum_i32_2d_negative_axis_reverse", (m23 * -7).astype(np.int32), -2, reverse=1, axis_init=True)
x7 = rng.uniform(0, 1, (2, 7, 3)).astype(np.float32)
case("cumsum_f32_3d_len7", x7, 1)
case("cumsum_f32_3d_len7_reverse_exclusive", x7, 1, exclusive=1, reverse=1, axis_type=np.int64, axis_init=True)
case("cumsum_i64_len1_exclusive", np.array([[5], [-3]], dtype=np.int64), 1, exclusive=1)
case("cumsum_i64_len1", np.array([[5], [-3]], dtype=np.int64), 1)
case("cumsum_f32_long", rng.randint(-3, 4, (3, 1000)).astype(np.float32), 1)
case("cumsum_i32_long_exclusive", rng.randint(-1000, 1000, (1000, 2)).astype(np.int32), 0, exclusive=1)
case("cumsum_i64_3d_reverse", rng.randint(-50, 50, (3, 4, 5)).astype(np.int64), 2, reverse=1, axis_type=np.int64)
