#!/usr/bin/python3
"""The conformance suite's generator and collector (standard library only).

    suite.py gen DIR                 write every case into DIR: NAME.ir, NAME.args
                                     (extra `gdcc run` arguments), NAME.*.npy inputs,
                                     and DIR/cases.jsonl (one line per case)
    suite.py collect DIR EVIDENCE VERSION TARGET
                                     read DIR/NAME.{rc,out,err} written by
                                     tests/conformance.sh, print one line per case and
                                     the summary, write the evidence (JSON Lines);
                                     exit 1 if a case failed
    suite.py list                    print the case names (one a line)

See docs/conformance.md.
"""
import json
import math
import os
import random
import re
import struct
import sys
import zlib

# ---------------------------------------------------------------------------
# Model text


class Dt:
    """A dtype attribute value (written bare: dtype=i64)."""

    def __init__(self, name):
        self.name = name


def fmt_num(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    r = repr(float(v))
    if r in ("inf", "-inf", "nan"):
        return r
    if "." not in r and "e" not in r:
        r += ".0"
    return r


def fmt_attr(v):
    if isinstance(v, Dt):
        return v.name
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt_num(x) for x in v) + "]"
    return fmt_num(v)


def json_attr(v):
    if isinstance(v, Dt):
        return v.name
    if isinstance(v, tuple):
        return list(v)
    return v


def ty(shape, dt="f32"):
    return "%s[%s]" % (dt, ", ".join(str(d) for d in shape))


def write_npy(path, shape, values):
    if len(shape) == 1:
        st = "(%d,)" % shape[0]
    else:
        st = "(%s)" % ", ".join(str(d) for d in shape)
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % st
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00")
        f.write(struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%df" % len(values), *values))


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class Suite:
    def __init__(self):
        self.cases = []
        self.names = set()

    def add(self, name, op, inputs, attrs=None, consts=(), nres=1, outputs=None, ranges=None, operands=None):
        """One case: a graph whose node `op` takes `operands` (default: the
        inputs then the consts, in order).

        inputs: [(name, shape)]             graph inputs (seeded by gdcc run)
        consts: [(name, dtype, shape, init)] constants written in the model
        ranges: {input name: (low, high, kind)} the input is given as an npy
                file of values in that range (kind "lin" or "log"), not seeded
        nres:   results of the node, all graph outputs unless `outputs`
        """
        name = re.sub(r"[^A-Za-z0-9_]", "_", name)
        base, k = name, 2
        while name in self.names:
            name = "%s_%d" % (base, k)
            k += 1
        self.names.add(name)
        attrs = attrs or {}
        ranges = ranges or {}
        lines = ["# conformance case %s: op %s" % (name, op), "graph %s {" % name]
        for n, s in inputs:
            lines.append("  input %s : %s" % (n, ty(s)))
        for n, dt, s, init in consts:
            lines.append("  const %s : %s = %s" % (n, ty(s, dt), init))
        if operands is None:
            operands = [n for n, _ in inputs] + [c[0] for c in consts]
        res = ["y"] if nres == 1 else ["y%d" % i for i in range(nres)]
        args = list(operands) + ["%s=%s" % (k, fmt_attr(v)) for k, v in attrs.items()]
        lines.append("  %s = %s(%s)" % (", ".join(res), op, ", ".join(args)))
        lines.append("  output %s" % ", ".join(outputs if outputs is not None else res))
        lines.append("}")
        shapes = {n: list(s) for n, s in inputs}
        shapes.update({c[0]: list(c[2]) for c in consts})
        self.cases.append({
            "case": name,
            "op": op,
            "shapes": [shapes[o] for o in operands],
            "attributes": {k: json_attr(v) for k, v in attrs.items()},
            "text": "\n".join(lines) + "\n",
            "ranges": {n: list(r) for n, r in ranges.items()},
            "inputs": dict(inputs),
        })


# ---------------------------------------------------------------------------
# The cases

UNARY = ["neg", "abs", "exp", "log", "sqrt", "reciprocal", "relu", "sigmoid", "tanh", "erf", "hardswish",
         "identity"]
UNARY_SHAPES = [(), (1,), (7,), (8,), (16,), (17,), (3, 5), (2, 3, 9), (2, 3, 4, 5), (1, 1, 1, 1), (2, 515), (0,),
                (3, 0), (0, 5)]
# Inputs in a wider range than gdcc run's [-1, 1), as npy files (lin: uniform; log: log-uniform).
UNARY_RANGES = {
    "exp": [(-80, 80, "lin"), (-87, 88, "lin")],
    "log": [(1e-6, 1e6, "log"), (0.5, 2, "lin")],
    "sqrt": [(0, 1e4, "lin"), (1e-6, 1e6, "log")],
    "reciprocal": [(0.01, 100, "log"), (-100, -0.01, "lin")],
    "sigmoid": [(-20, 20, "lin")],
    "tanh": [(-10, 10, "lin"), (-0.01, 0.01, "lin")],
    "erf": [(-5, 5, "lin")],
    "hardswish": [(-8, 8, "lin")],
    "neg": [(-1e6, 1e6, "lin")],
    "abs": [(-1e6, 1e6, "lin")],
    "relu": [(-1e6, 1e6, "lin")],
    "identity": [(-1e6, 1e6, "lin")],
}
RANGE_SHAPE = (67,)

BINARY = ["add", "sub", "mul", "div", "pow"]
BINARY_SHAPES = [((7,), (7,)), ((8,), (8,)), ((17,), (17,)), ((1,), (1,)), ((), ()), ((3, 1), (1, 17)),
                 ((17,), (4, 17)), ((4, 17), (17,)), ((), (3, 5)), ((3, 5), ()), ((2, 1, 5), (3, 1)),
                 ((2, 3, 4, 5), (2, 3, 4, 5)), ((2, 3, 4, 5), (4, 1)), ((1, 3, 1, 5), (2, 1, 4, 1)), ((9,), (1,)),
                 ((16, 16), (16, 16)), ((0, 5), (5,)), ((0, 5), (0, 5)), ((0,), (1,))]


def sname(s):
    return "x".join(str(d) for d in s) if s else "scalar"


def rname(v):
    """A range bound in a case name: -80 -> m80, 1e-06 -> 1em06, 0.5 -> 0p5."""
    return ("%g" % v).replace("-", "m").replace("+", "p").replace(".", "p")


def gen_elementwise(S):
    for op in UNARY:
        for s in UNARY_SHAPES:
            S.add("%s_%s" % (op, sname(s)), op, [("x", s)])
        for lo, hi, kind in UNARY_RANGES.get(op, []):
            S.add("%s_range_%s_%s" % (op, rname(lo), rname(hi)), op, [("x", RANGE_SHAPE)],
                  ranges={"x": (lo, hi, kind)})
    for s in [(17,), (2, 3, 9), ()]:
        S.add("leaky_relu_%s" % sname(s), "leaky_relu", [("x", s)])
        S.add("leaky_relu_a0.2_%s" % sname(s), "leaky_relu", [("x", s)], {"alpha": 0.2})
    S.add("leaky_relu_a1.5_8", "leaky_relu", [("x", (8,))], {"alpha": 1.5})
    for s in [(17,), (8,), (2, 3, 9), (), (0,)]:
        S.add("gelu_%s" % sname(s), "gelu", [("x", s)])
        S.add("gelu_tanh_%s" % sname(s), "gelu", [("x", s)], {"approximate": "tanh"})
    S.add("gelu_range", "gelu", [("x", RANGE_SHAPE)], ranges={"x": (-10, 10, "lin")})
    S.add("gelu_tanh_range", "gelu", [("x", RANGE_SHAPE)], {"approximate": "tanh"}, ranges={"x": (-10, 10, "lin")})
    for s in [(17,), (8,), (2, 3, 9), ()]:
        S.add("clip_minmax_%s" % sname(s), "clip", [("x", s)], {"min": -0.5, "max": 0.25})
    S.add("clip_min_17", "clip", [("x", (17,))], {"min": -0.3})
    S.add("clip_max_17", "clip", [("x", (17,))], {"max": 0.3})
    S.add("clip_none_17", "clip", [("x", (17,))])
    S.add("clip_inf_17", "clip", [("x", (17,))], {"min": float("-inf"), "max": 0.5})
    S.add("clip_equal_9", "clip", [("x", (9,))], {"min": 0.1, "max": 0.1})
    for s in [(17,), (8,), (2, 3, 9), ()]:
        S.add("hardsigmoid_%s" % sname(s), "hardsigmoid", [("x", s)])
    S.add("hardsigmoid_a3_b0.4_17", "hardsigmoid", [("x", (17,))], {"alpha": 3.0, "beta": 0.4})
    S.add("hardsigmoid_range", "hardsigmoid", [("x", RANGE_SHAPE)], ranges={"x": (-6, 6, "lin")})
    for s in [(17,), (8,), (2, 3, 9), (), (1,)]:
        S.add("dropout_%s" % sname(s), "dropout", [("x", s)])
    S.add("dropout_ratio_17", "dropout", [("x", (17,))], {"ratio": 0.5})
    S.add("dropout_mask_17", "dropout", [("x", (17,))], nres=2)
    S.add("dropout_mask_2x3x9", "dropout", [("x", (2, 3, 9))], {"ratio": 0.25, "training_mode": 0}, nres=2)

    for op in BINARY:
        for a, b in BINARY_SHAPES:
            S.add("%s_%s_%s" % (op, sname(a), sname(b)), op, [("a", a), ("b", b)])
    # div: denominators away from zero; pow: positive bases, and integer
    # exponents with negative bases (ONNX: a real result, not NaN).
    S.add("div_range_3x17_17", "div", [("a", (3, 17)), ("b", (17,))],
          ranges={"a": (-100, 100, "lin"), "b": (0.5, 4, "lin")})
    S.add("pow_range_67", "pow", [("a", (67,)), ("b", (67,))], ranges={"a": (0.1, 10, "log"), "b": (-3, 3, "lin")})
    S.add("pow_range_3x1_1x17", "pow", [("a", (3, 1)), ("b", (1, 17))],
          ranges={"a": (0.5, 2, "lin"), "b": (-4, 4, "lin")})
    S.add("pow_range_17_4x17", "pow", [("a", (17,)), ("b", (4, 17))],
          ranges={"a": (0.01, 100, "log"), "b": (-2, 2, "lin")})
    S.add("pow_square_17", "pow", [("a", (17,))], consts=[("b", "f32", (), "[2]")])
    S.add("pow_cube_2x9", "pow", [("a", (2, 9))], consts=[("b", "f32", (), "[3]")])
    S.add("pow_half_pos", "pow", [("a", (17,))], consts=[("b", "f32", (), "[0.5]")], ranges={"a": (0, 4, "lin")})
    S.add("pow_intexp_negbase", "pow", [("a", (9,))], consts=[("b", "f32", (9,), "[0, 1, 2, 3, -1, -2, 4, 5, 1]")])

    for op in ["max", "min", "sum"]:
        S.add("%s_1op_17" % op, op, [("a", (17,))])
        S.add("%s_2op_8" % op, op, [("a", (8,)), ("b", (8,))])
        S.add("%s_2op_3x1_1x17" % op, op, [("a", (3, 1)), ("b", (1, 17))])
        S.add("%s_3op_17_4x17_scalar" % op, op, [("a", (17,)), ("b", (4, 17)), ("c", ())])
        S.add("%s_4op_2x3" % op, op, [("a", (2, 3)), ("b", (2, 3)), ("c", (2, 3)), ("d", (2, 3))])
        S.add("%s_2op_scalar" % op, op, [("a", ()), ("b", ())])
        S.add("%s_2op_2x3x4x5_5" % op, op, [("a", (2, 3, 4, 5)), ("b", (5,))])
        S.add("%s_1op_scalar" % op, op, [("a", ())])


def gen_reductions(S):
    for op in ["softmax", "logsoftmax"]:
        for s in [(17,), (8,), (1,), (3, 17), (4, 8), (5, 1), (2, 3, 9), (2, 3, 4, 5), (1, 1031)]:
            r = len(s)
            for ax in list(range(r)) + [-1]:
                S.add("%s_%s_axis%d" % (op, sname(s), ax), op, [("x", s)], {"axis": ax})
            S.add("%s_%s_default" % (op, sname(s)), op, [("x", s)])
        S.add("%s_range_3x17" % op, op, [("x", (3, 17))], {"axis": 1}, ranges={"x": (-50, 50, "lin")})
        S.add("%s_range_3x17_axis0" % op, op, [("x", (3, 17))], {"axis": 0}, ranges={"x": (-80, 80, "lin")})
    op = "reduce_mean"
    for s in [(17,), (8,), (1,), (3, 17), (8, 8), (2, 3, 9), (2, 3, 4, 5)]:
        r = len(s)
        for ax in range(r):
            S.add("%s_%s_axes%d" % (op, sname(s), ax), op, [("x", s)], {"axes": [ax]})
            S.add("%s_%s_axes%d_keep0" % (op, sname(s), ax), op, [("x", s)], {"axes": [ax], "keepdims": 0})
        S.add("%s_%s_axesneg1" % (op, sname(s)), op, [("x", s)], {"axes": [-1]})
        S.add("%s_%s_all" % (op, sname(s)), op, [("x", s)])
        S.add("%s_%s_all_keep0" % (op, sname(s)), op, [("x", s)], {"keepdims": 0})
    S.add("reduce_mean_3x17_axes01", op, [("x", (3, 17))], {"axes": [0, 1]})
    S.add("reduce_mean_2x3x9_axes02_keep0", op, [("x", (2, 3, 9))], {"axes": [0, 2], "keepdims": 0})
    S.add("reduce_mean_2x3x4x5_axes12", op, [("x", (2, 3, 4, 5))], {"axes": [1, 2]})
    S.add("reduce_mean_2x3x4x5_axes23", op, [("x", (2, 3, 4, 5))], {"axes": [2, 3]})
    S.add("reduce_mean_2x3x4x5_axes_neg2neg1_keep0", op, [("x", (2, 3, 4, 5))], {"axes": [-2, -1], "keepdims": 0})
    S.add("reduce_mean_2x3x4x5_axes013", op, [("x", (2, 3, 4, 5))], {"axes": [0, 1, 3]})
    S.add("reduce_mean_3x17_noop", op, [("x", (3, 17))], {"axes": [], "noop_with_empty_axes": 1})
    S.add("reduce_mean_3x17_emptyaxes", op, [("x", (3, 17))], {"axes": []})
    S.add("reduce_mean_1x1031_axes1", op, [("x", (1, 1031))], {"axes": [1]})


def gen_matmul(S):
    for a, b in [((3, 5), (5, 7)), ((1, 1), (1, 1)), ((8, 8), (8, 8)), ((17, 9), (9, 13)), ((1, 17), (17, 1)),
                 ((5, 1), (1, 7)), ((16, 24), (24, 32)), ((33, 65), (65, 17)), ((2, 3, 5), (2, 5, 4)),
                 ((5,), (5, 7)), ((3, 5), (5,)), ((9,), (9,)), ((7,), (2, 7, 3)), ((2, 3, 7), (7,)),
                 ((2, 1, 3, 5), (3, 5, 4)), ((3, 5), (2, 5, 4)), ((4, 3, 5), (5, 7)), ((2, 1, 3, 5), (1, 4, 5, 6)),
                 ((1, 2, 3), (3, 9)), ((2, 2, 2, 3, 5), (5, 3)), ((0, 5), (5, 3)), ((3, 0), (0, 4))]:
        S.add("matmul_%s_%s" % (sname(a), sname(b)), "matmul", [("a", a), ("b", b)])
    S.add("matmul_range_17x9_9x13", "matmul", [("a", (17, 9)), ("b", (9, 13))],
          ranges={"a": (-100, 100, "lin"), "b": (-100, 100, "lin")})

    def gemm(name, M, N, K, ta=0, tb=0, c=None, **attrs):
        A = (K, M) if ta else (M, K)
        B = (N, K) if tb else (K, N)
        ins = [("a", A), ("b", B)]
        if c is not None:
            ins.append(("c", c))
        at = dict(attrs)
        if ta:
            at["trans_a"] = ta
        if tb:
            at["trans_b"] = tb
        S.add("gemm_%s" % name, "gemm", ins, at)

    for M, N, K in [(3, 5, 7), (1, 1, 1), (8, 8, 8), (17, 9, 13), (5, 16, 3), (1, 17, 9), (33, 7, 65)]:
        gemm("%dx%dx%d" % (M, N, K), M, N, K)
        gemm("%dx%dx%d_bias" % (M, N, K), M, N, K, c=(M, N))
    for ta in (0, 1):
        for tb in (0, 1):
            gemm("ta%d_tb%d" % (ta, tb), 3, 7, 5, ta, tb, c=(7,))
            gemm("ta%d_tb%d_16x8x9" % (ta, tb), 16, 8, 9, ta, tb)
    for cs in [(), (1,), (7,), (1, 7), (3, 1), (3, 7), (1, 1)]:
        gemm("bias_%s" % sname(cs), 3, 7, 5, c=cs)
    gemm("alpha", 3, 7, 5, alpha=0.5)
    gemm("alpha_beta", 3, 7, 5, c=(3, 7), alpha=0.5, beta=2.0)
    gemm("beta0", 3, 7, 5, c=(3, 7), beta=0.0)
    gemm("alpha_beta_ta_tb_bias_n", 9, 11, 6, 1, 1, c=(11,), alpha=-1.5, beta=0.25)
    gemm("alpha0", 4, 5, 6, c=(4, 5), alpha=0.0)


def gen_conv(S):
    def conv(name, x, w, bias=False, **attrs):
        ins = [("x", x), ("w", w)]
        if bias:
            ins.append(("b", (w[0],)))
        S.add("conv_%s" % name, "conv", ins, attrs)

    conv("basic", (1, 3, 7, 7), (4, 3, 3, 3))
    conv("bias", (1, 3, 7, 7), (5, 3, 3, 3), True)
    conv("1x1", (2, 8, 5, 5), (16, 8, 1, 1), True)
    conv("1x1_odd", (1, 17, 3, 5), (9, 17, 1, 1))
    conv("image1x1", (1, 8, 1, 1), (8, 8, 1, 1), True)
    conv("stride2", (1, 3, 9, 9), (4, 3, 3, 3), strides=[2, 2])
    conv("stride1x2", (1, 3, 9, 8), (4, 3, 3, 3), strides=[1, 2])
    conv("stride3_k2", (1, 2, 10, 11), (3, 2, 2, 2), strides=[3, 3])
    conv("pads1", (1, 3, 7, 7), (4, 3, 3, 3), True, pads=[1, 1, 1, 1])
    conv("pads_asym", (1, 3, 7, 6), (4, 3, 3, 3), pads=[0, 1, 2, 0])
    conv("pads_big", (1, 2, 4, 4), (3, 2, 3, 3), pads=[3, 3, 3, 3])
    conv("dil2", (1, 3, 9, 9), (4, 3, 3, 3), dilations=[2, 2])
    conv("dil1x2_pads", (1, 3, 7, 9), (4, 3, 3, 3), dilations=[1, 2], pads=[1, 2, 1, 2])
    conv("group2", (1, 4, 6, 6), (6, 2, 3, 3), group=2)
    conv("group2_bias", (1, 4, 6, 6), (6, 2, 3, 3), True, group=2)
    conv("group3_odd", (1, 9, 5, 7), (6, 3, 3, 3), True, group=3)
    conv("depthwise", (1, 8, 7, 7), (8, 1, 3, 3), True, group=8)
    conv("depthwise_odd", (1, 17, 6, 5), (17, 1, 3, 3), group=17)
    conv("depthwise_mult2", (1, 3, 6, 6), (6, 1, 3, 3), group=3)
    conv("depthwise_s2_p1", (1, 16, 9, 9), (16, 1, 3, 3), True, group=16, strides=[2, 2], pads=[1, 1, 1, 1])
    conv("same_upper_s2", (1, 3, 8, 8), (4, 3, 3, 3), auto_pad="SAME_UPPER", strides=[2, 2])
    conv("same_upper_s1_k4", (1, 3, 7, 7), (4, 3, 4, 4), auto_pad="SAME_UPPER")
    conv("same_lower_s1_k4", (1, 3, 7, 7), (4, 3, 4, 4), auto_pad="SAME_LOWER")
    conv("same_lower_s2", (1, 3, 8, 8), (4, 3, 3, 3), auto_pad="SAME_LOWER", strides=[2, 2])
    conv("valid", (1, 3, 8, 8), (4, 3, 3, 3), auto_pad="VALID")
    conv("valid_s2", (1, 3, 8, 8), (4, 3, 3, 3), auto_pad="VALID", strides=[2, 2])
    conv("kernel_shape", (1, 3, 7, 7), (4, 3, 3, 3), kernel_shape=[3, 3])
    conv("kernel_2x5", (1, 2, 6, 9), (3, 2, 2, 5), True)
    conv("batch2_c17", (2, 17, 5, 5), (9, 17, 3, 3), True)
    conv("oc8", (1, 4, 6, 6), (8, 4, 3, 3), True, pads=[1, 1, 1, 1])
    conv("oc24_s2", (1, 5, 9, 9), (24, 5, 3, 3), True, strides=[2, 2], pads=[1, 1, 1, 1])
    conv("combo", (2, 4, 11, 10), (6, 2, 3, 3), True, strides=[2, 2], pads=[1, 2, 0, 1], dilations=[2, 1], group=2)
    conv("k_eq_image", (1, 3, 5, 5), (2, 3, 5, 5), True)
    conv("1d", (1, 3, 17), (5, 3, 3), True)
    conv("1d_s2_p1", (2, 3, 17), (5, 3, 3), strides=[2], pads=[1, 1])
    conv("1d_dil2_group3", (1, 6, 16), (3, 2, 3), dilations=[2], group=3)
    conv("1d_same_upper", (1, 3, 10), (4, 3, 4), auto_pad="SAME_UPPER")
    conv("3d", (1, 2, 5, 6, 7), (3, 2, 3, 3, 3), True, pads=[1, 1, 1, 1, 1, 1])
    conv("3d_s2", (1, 2, 6, 6, 6), (4, 2, 2, 2, 2), strides=[2, 2, 2])
    conv("3d_depthwise", (1, 4, 4, 5, 6), (4, 1, 3, 3, 3), group=4, pads=[0, 1, 1, 1, 0, 1])


def gen_pool(S):
    def pool(op, name, x, **attrs):
        S.add("%s_%s" % (op, name), op, [("x", x)], attrs)

    for op in ["maxpool", "avgpool"]:
        pool(op, "k2s2", (1, 3, 8, 8), kernel_shape=[2, 2], strides=[2, 2])
        pool(op, "k3s1", (1, 3, 7, 7), kernel_shape=[3, 3])
        pool(op, "k3s2_p1", (1, 4, 9, 9), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
        pool(op, "k3_pads_asym", (1, 2, 7, 6), kernel_shape=[3, 3], pads=[0, 1, 1, 0])
        pool(op, "k2x3_s1x2", (1, 3, 7, 9), kernel_shape=[2, 3], strides=[1, 2])
        pool(op, "ceil", (1, 3, 8, 8), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
        pool(op, "ceil_p1", (1, 3, 8, 8), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)
        pool(op, "ceil_k2s2_odd", (1, 2, 7, 9), kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
        pool(op, "dil2", (1, 3, 9, 9), kernel_shape=[2, 2], dilations=[2, 2])
        pool(op, "dil2_s2_p1", (1, 3, 10, 10), kernel_shape=[3, 3], dilations=[2, 2], strides=[2, 2],
             pads=[1, 1, 1, 1])
        pool(op, "same_upper", (1, 3, 8, 8), kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")
        pool(op, "same_upper_k2", (1, 3, 7, 7), kernel_shape=[2, 2], auto_pad="SAME_UPPER")
        pool(op, "same_lower", (1, 3, 8, 8), kernel_shape=[2, 2], auto_pad="SAME_LOWER")
        pool(op, "same_lower_s2", (1, 3, 9, 9), kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_LOWER")
        pool(op, "valid", (1, 3, 8, 8), kernel_shape=[3, 3], strides=[2, 2], auto_pad="VALID")
        pool(op, "global_like", (1, 3, 5, 5), kernel_shape=[5, 5])
        pool(op, "k1", (1, 3, 5, 5), kernel_shape=[1, 1])
        pool(op, "batch2_c17", (2, 17, 6, 6), kernel_shape=[2, 2], strides=[2, 2])
        pool(op, "c16", (1, 16, 7, 7), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
        pool(op, "1d", (1, 3, 17), kernel_shape=[3], strides=[2])
        pool(op, "1d_p1_ceil", (2, 2, 16), kernel_shape=[3], strides=[2], pads=[1, 1], ceil_mode=1)
        pool(op, "3d", (1, 2, 5, 6, 7), kernel_shape=[2, 2, 2], strides=[2, 2, 2])
        pool(op, "3d_p1", (1, 2, 4, 5, 6), kernel_shape=[3, 3, 3], pads=[1, 1, 1, 1, 1, 1])
    pool("maxpool", "storage_order0", (1, 3, 6, 6), kernel_shape=[2, 2], storage_order=0)
    S.add("maxpool_range", "maxpool", [("x", (1, 3, 8, 8))], {"kernel_shape": [3, 3], "strides": [2, 2]},
          ranges={"x": (-1e4, 1e4, "lin")})
    op = "avgpool"
    pool(op, "k3s2_p1_incl", (1, 4, 9, 9), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
         count_include_pad=1)
    pool(op, "k3_pads_asym_incl", (1, 2, 7, 6), kernel_shape=[3, 3], pads=[0, 1, 1, 0], count_include_pad=1)
    pool(op, "ceil_p1_incl", (1, 3, 8, 8), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1,
         count_include_pad=1)
    pool(op, "ceil_incl", (1, 3, 8, 8), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1, count_include_pad=1)
    pool(op, "same_upper_incl", (1, 3, 8, 8), kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER",
         count_include_pad=1)
    pool(op, "same_lower_incl", (1, 3, 7, 7), kernel_shape=[2, 2], auto_pad="SAME_LOWER", count_include_pad=1)
    pool(op, "k3_p1_excl", (1, 3, 6, 6), kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=0)
    pool(op, "dil2_p1_incl", (1, 2, 8, 8), kernel_shape=[2, 2], dilations=[2, 2], pads=[1, 1, 1, 1],
         count_include_pad=1)
    pool(op, "1d_p1_incl", (1, 3, 17), kernel_shape=[3], strides=[2], pads=[1, 1], count_include_pad=1)
    pool(op, "3d_p1_incl", (1, 2, 4, 5, 6), kernel_shape=[3, 3, 3], pads=[1, 1, 1, 1, 1, 1], count_include_pad=1)

    for op in ["global_avgpool", "global_maxpool"]:
        for s in [(1, 3, 5, 5), (2, 17, 7, 7), (1, 8, 1, 1), (1, 16, 8, 8), (1, 3, 17), (1, 2, 3, 4, 5),
                  (1, 1, 31, 33)]:
            S.add("%s_%s" % (op, sname(s)), op, [("x", s)])


def gen_norm(S):
    def bn(name, x, nres=1, **attrs):
        c = x[1] if len(x) > 1 else 1
        S.add("batchnorm_%s" % name, "batchnorm", [("x", x), ("scale", (c,)), ("bias", (c,)), ("mean", (c,))],
              attrs, consts=[("var", "f32", (c,), "random(7, low=0.1, high=2)")], nres=nres)

    bn("2x3x5x5", (2, 3, 5, 5))
    bn("1x17x4x4", (1, 17, 4, 4))
    bn("1x8x3x3", (1, 8, 3, 3))
    bn("2x8x7", (2, 8, 7))
    bn("4x5", (4, 5))
    bn("1x3x2x3x4", (1, 3, 2, 3, 4))
    bn("eps", (2, 3, 5, 5), epsilon=1e-3)
    bn("train", (2, 3, 5, 5), nres=3, training_mode=1, momentum=0.8)
    bn("train_y_only", (4, 5, 3), training_mode=1)

    def ln(name, x, axis=-1, bias=True, nres=1, **attrs):
        a = axis if axis >= 0 else len(x) + axis
        ns = tuple(x[a:])
        ins = [("x", x), ("scale", ns)] + ([("bias", ns)] if bias else [])
        at = dict(attrs)
        if axis != -1 or "force_axis" in at:
            at.pop("force_axis", None)
            at["axis"] = axis
        S.add("layernorm_%s" % name, "layernorm", ins, at, nres=nres)

    ln("3x17", (3, 17))
    ln("3x17_nobias", (3, 17), bias=False)
    ln("4x8", (4, 8))
    ln("17", (17,))
    ln("1x1", (1, 1))
    ln("2x3x9_axis1", (2, 3, 9), 1)
    ln("2x3x9_axis0", (2, 3, 9), 0)
    ln("2x3x9_axisneg2", (2, 3, 9), -2)
    ln("2x3x4x5", (2, 3, 4, 5))
    ln("2x3x4x5_axis2", (2, 3, 4, 5), 2)
    ln("eps", (3, 17), epsilon=1e-3)
    ln("mean_invstd", (3, 17), nres=3)
    ln("mean_invstd_axis1", (2, 3, 9), 1, nres=3)
    ln("2x1031", (2, 1031))
    S.add("layernorm_range_3x17", "layernorm", [("x", (3, 17)), ("scale", (17,)), ("bias", (17,))],
          ranges={"x": (-100, 100, "lin")})


def gen_movement(S):
    for x, s, extra in [((2, 3, 4), [6, 4], {}), ((24,), [2, 3, 4], {}), ((2, 3, 4), [-1], {}),
                        ((2, 3, 4), [0, -1], {}), ((2, 3, 4), [4, 0, 2], {}), ((17,), [1, 17, 1], {}),
                        ((1,), [], {}), ((), [1, 1], {}), ((0, 3), [3, 0], {"allowzero": 1}),
                        ((2, 3, 4, 5), [5, 4, 3, 2], {}), ((8, 8), [64], {})]:
        at = {"shape": s}
        at.update(extra)
        S.add("reshape_%s_to_%s" % (sname(x), "x".join(str(d) for d in s) or "scalar"), "reshape", [("x", x)], at)
    for x, p in [((3, 5), None), ((9, 17), [1, 0]), ((8, 8), [1, 0]), ((2, 3, 4), None), ((2, 3, 4), [1, 0, 2]),
                 ((2, 3, 4), [2, 0, 1]), ((2, 3, 4), [0, 2, 1]), ((2, 3, 4, 5), [0, 2, 3, 1]),
                 ((2, 3, 4, 5), [3, 1, 2, 0]), ((2, 3, 4, 5), [0, 1, 3, 2]), ((2, 3, 4, 5), None), ((1, 8, 1), [2, 1, 0]),
                 ((17,), None), ((), None), ((16, 24), [1, 0])]:
        S.add("transpose_%s_%s" % (sname(x), "".join(map(str, p)) if p else "default"), "transpose", [("x", x)],
              {"perm": p} if p else {})
    for x, axes in [((2, 3, 4), [0, 1, 2, 3, -1, -3]), ((2, 3, 4, 5), [2]), ((17,), [0, 1]), ((3, 5), [None])]:
        for a in axes:
            S.add("flatten_%s_axis%s" % (sname(x), a if a is not None else "default"), "flatten", [("x", x)],
                  {"axis": a} if a is not None else {})
    for name, ins, ax in [("3x5_4x5_axis0", [(3, 5), (4, 5)], 0), ("3x5_3x7_3x1_axis1", [(3, 5), (3, 7), (3, 1)], 1),
                          ("2x3x4_axis0", [(2, 3, 4), (1, 3, 4)], 0), ("2x3x4_axis1", [(2, 3, 4), (2, 5, 4)], 1),
                          ("2x3x4_axis2", [(2, 3, 4), (2, 3, 9)], 2), ("2x3x4_axisneg1", [(2, 3, 4), (2, 3, 4)], -1),
                          ("single_17", [(17,)], 0), ("17_8", [(17,), (8,)], 0),
                          ("2x3x4x5_axis3", [(2, 3, 4, 5), (2, 3, 4, 3)], 3),
                          ("2x3x4x5_axis1_3ops", [(2, 3, 4, 5), (2, 1, 4, 5), (2, 4, 4, 5)], 1),
                          ("empty_0x5_3x5", [(0, 5), (3, 5)], 0)]:
        S.add("concat_%s" % name, "concat", [("x%d" % i, s) for i, s in enumerate(ins)], {"axis": ax})
    for name, x, at, n in [("17_5_12", (17,), {"split": [5, 12]}, 2), ("6x4_num3", (6, 4), {"num_outputs": 3}, 3),
                           ("3x17_axis1", (3, 17), {"axis": 1, "split": [1, 8, 8]}, 3),
                           ("2x3x9_axisneg1", (2, 3, 9), {"axis": -1, "split": [4, 5]}, 2),
                           ("8_default", (8,), {}, 2), ("2x6_axis1_equal", (2, 6), {"axis": 1}, 2),
                           ("17_num2", (17,), {"num_outputs": 2}, 2), ("17_num3", (17,), {"num_outputs": 3}, 3),
                           ("2x3x4x5_axis2", (2, 3, 4, 5), {"axis": 2, "split": [1, 3]}, 2),
                           ("9_zero_part", (9,), {"split": [0, 9]}, 2)]:
        S.add("split_%s" % name, "split", [("x", x)], at, nres=n)
    for name, x, at in [("17_2_15", (17,), {"starts": [2], "ends": [15]}),
                        ("17_neg5_big", (17,), {"starts": [-5], "ends": [1000]}),
                        ("17_step2", (17,), {"starts": [1], "ends": [17], "steps": [2]}),
                        ("17_step3_clamp", (17,), {"starts": [-100], "ends": [100], "steps": [3]}),
                        ("17_reverse", (17,), {"starts": [-1], "ends": [-1000], "steps": [-1]}),
                        ("17_neg_step2", (17,), {"starts": [15], "ends": [2], "steps": [-2]}),
                        ("3x17_axis1", (3, 17), {"starts": [1], "ends": [9], "axes": [1]}),
                        ("3x17_axisneg1", (3, 17), {"starts": [3], "ends": [-2], "axes": [-1]}),
                        ("2x3x4x5_axes13", (2, 3, 4, 5), {"starts": [0, 1], "ends": [2, 3], "axes": [1, 3]}),
                        ("5x8x9_steps", (5, 8, 9), {"starts": [0, 1, 2], "ends": [5, 8, 9], "steps": [1, 2, 3]}),
                        ("5x8x9_rev_mid", (5, 8, 9), {"starts": [7], "ends": [0], "axes": [1], "steps": [-3]}),
                        ("empty", (17,), {"starts": [5], "ends": [2]}),
                        ("8x8_full", (8, 8), {"starts": [0, 0], "ends": [8, 8]}),
                        ("16x24_tile", (16, 24), {"starts": [3, 5], "ends": [11, 22]})]:
        S.add("slice_%s" % name, "slice", [("x", x)], at)
    for x, at in [((1, 3, 1, 5), {}), ((1, 3, 1, 5), {"axes": [0]}), ((1, 3, 1, 5), {"axes": [-2]}), ((1,), {}),
                  ((1, 1, 1, 1), {}), ((3, 1), {"axes": [1]}), ((1, 17), {"axes": [0]})]:
        S.add("squeeze_%s_%s" % (sname(x), "".join(map(str, at.get("axes", []))) or "default"), "squeeze",
              [("x", x)], at)
    for x, ax in [((3, 5), [0]), ((3, 5), [1]), ((3, 5), [2]), ((3, 5), [-1]), ((3, 5), [0, 3]), ((), [0]),
                  ((17,), [0, 2]), ((2, 3, 4), [1, -1])]:
        S.add("unsqueeze_%s_%s" % (sname(x), "_".join(map(str, ax))), "unsqueeze", [("x", x)], {"axes": ax})

    def gather(name, data, idx_shape, idx_vals, axis=None, dt="i64"):
        init = "[" + ", ".join(str(v) for v in idx_vals) + "]"
        S.add("gather_%s" % name, "gather", [("data", data)], {"axis": axis} if axis is not None else {},
              consts=[("idx", dt, idx_shape, init)])

    gather("5x4_axis0", (5, 4), (3,), [0, 4, 2])
    gather("5x4_axis1", (5, 4), (3,), [0, 3, 1], 1)
    gather("5x4_negidx", (5, 4), (2,), [-1, 0])
    gather("5x4_scalar_idx", (5, 4), (), [2])
    gather("5x4_idx2x2", (5, 4), (2, 2), [1, 0, 4, 4])
    gather("2x3x9_axis2", (2, 3, 9), (4,), [8, 0, 3, 3], 2)
    gather("2x3x9_axisneg1", (2, 3, 9), (2,), [5, -9], -1)
    gather("2x3x9_axis1_idx2x2", (2, 3, 9), (2, 2), [2, 1, 0, 2], 1)
    gather("17_5", (17,), (5,), [16, 0, 8, 7, 9])
    gather("17x16_rows", (17, 16), (3,), [3, 16, 0])
    gather("5x4_i32", (5, 4), (3,), [4, 1, 2], 0, "i32")
    for x, s in [((3, 1), [3, 17]), ((17,), [4, 17]), ((), [2, 3]), ((1, 5), [2, 3, 5]), ((3, 1, 5), [2, 3, 4, 5]),
                 ((4, 1), [1, 8]), ((8,), [8]), ((1,), [9]), ((2, 1, 1), [2, 3, 17])]:
        S.add("expand_%s_to_%s" % (sname(x), "x".join(map(str, s))), "expand", [("x", x)], {"shape": s})
    for name, x, at in [("3x5_const", (3, 5), {"pads": [1, 2, 1, 2]}),
                        ("3x5_value", (3, 5), {"pads": [0, 1, 2, 0], "value": 1.5}),
                        ("17", (17,), {"pads": [3, 5]}),
                        ("2x3x4_reflect", (2, 3, 4), {"pads": [0, 1, 2, 0, 1, 2], "mode": "reflect"}),
                        ("2x3x4_edge", (2, 3, 4), {"pads": [1, 1, 2, 1, 0, 3], "mode": "edge"}),
                        ("17_reflect", (17,), {"pads": [4, 7], "mode": "reflect"}),
                        ("17_edge", (17,), {"pads": [9, 1], "mode": "edge"}),
                        ("2x3x4x5_axes", (2, 3, 4, 5), {"pads": [2, 3], "axes": [1]}),
                        ("2x3x4x5_axes_neg", (2, 3, 4, 5), {"pads": [1, 1, 2, 2], "axes": [-2, -1], "value": -1.0}),
                        ("1x3x8x8_reflect", (1, 3, 8, 8), {"pads": [0, 0, 1, 1, 0, 0, 1, 1], "mode": "reflect"}),
                        ("negative_crop", (3, 5), {"pads": [-1, 0, 0, 1]}),
                        ("zero", (3, 5), {"pads": [0, 0, 0, 0]}),
                        ("1x1_edge", (1, 1), {"pads": [2, 3, 4, 5], "mode": "edge"})]:
        S.add("pad_%s" % name, "pad", [("x", x)], at)
    for x, at in [((2, 3, 4), {}), ((2, 3, 4), {"start": 1}), ((2, 3, 4), {"end": -1}),
                  ((2, 3, 4, 5), {"start": -2, "end": 3}), ((), {}), ((17,), {}), ((2, 3, 4), {"start": 2, "end": 1})]:
        S.add("shape_%s_%s" % (sname(x), "_".join("%s%d" % kv for kv in at.items()) or "all"), "shape", [("x", x)],
              at)
    for s, at in [([3, 5], {"value": 1.5}), ([17], {}), ([], {"value": -2.0}), ([2, 3, 4, 5], {"value": 0.25}),
                  ([8], {"value": 3.0, "dtype": Dt("i64")}), ([4], {"value": 2.0, "dtype": Dt("i32")}),
                  ([0], {"value": 1.0})]:
        at2 = {"shape": s}
        at2.update(at)
        S.add("constant_of_shape_%s%s" % ("x".join(map(str, s)) or "scalar", "_" + at["dtype"].name if "dtype" in at
                                             else ""), "constant_of_shape", [], at2)

    # constant: a const declaration that is itself an output.
    for name, dt, s, init in [("17_random", "f32", (17,), "random(3)"), ("scalar", "f32", (), "[2.5]"),
                              ("3x5_fill", "f32", (3, 5), "fill(-1.25)"), ("2x2_values", "f32", (2, 2), "[1, 2, 3, 4]")]:
        nm = "constant_%s" % name
        S.names.add(nm)
        S.cases.append({"case": nm, "op": "constant", "shapes": [], "attributes": {},
                        "text": "# conformance case %s: op constant\ngraph %s {\n  const c : %s = %s\n  output c\n}\n" % (
                            nm, nm, ty(s, dt), init),
                        "ranges": {}, "inputs": {}})


def gen_empty_and_medium(S):
    """Empty tensors where legal, and a few model-sized cases (the tiled paths)."""
    S.add("softmax_0x17_axis1", "softmax", [("x", (0, 17))], {"axis": 1})
    S.add("reduce_mean_0x5_axes1", "reduce_mean", [("x", (0, 5))], {"axes": [1]})
    S.add("transpose_0x3", "transpose", [("x", (0, 3))])
    S.add("logsoftmax_0x17_axis1", "logsoftmax", [("x", (0, 17))], {"axis": 1})
    S.add("gemm_m0", "gemm", [("a", (0, 5)), ("b", (5, 3))])
    S.add("gemm_k0_bias", "gemm", [("a", (3, 0)), ("b", (0, 4)), ("c", (4,))])
    S.add("conv_batch0", "conv", [("x", (0, 3, 5, 5)), ("w", (4, 3, 3, 3))])
    S.add("maxpool_batch0", "maxpool", [("x", (0, 3, 5, 5))], {"kernel_shape": [2, 2]})
    S.add("avgpool_batch0", "avgpool", [("x", (0, 3, 5, 5))], {"kernel_shape": [2, 2]})
    S.add("global_avgpool_batch0", "global_avgpool", [("x", (0, 3, 5, 5))])
    S.add("layernorm_0x17", "layernorm", [("x", (0, 17)), ("scale", (17,))])
    S.add("batchnorm_batch0", "batchnorm", [("x", (0, 3, 4, 4)), ("scale", (3,)), ("bias", (3,)), ("mean", (3,))],
          consts=[("var", "f32", (3,), "random(7, low=0.1, high=2)")])
    # rank 0 where the op allows it
    S.add("reduce_mean_scalar", "reduce_mean", [("x", ())])
    S.add("flatten_scalar_axis0", "flatten", [("x", ())], {"axis": 0})
    S.add("expand_scalar_to_scalar", "expand", [("x", ())], {"shape": []})
    S.add("squeeze_scalar", "squeeze", [("x", ())])
    S.add("reshape_scalar_to_scalar", "reshape", [("x", ())], {"shape": []})
    S.add("gather_17_scalar_idx", "gather", [("data", (17,))], consts=[("idx", "i64", (), "[11]")])
    S.add("relu_medium_1x64x56x56", "relu", [("x", (1, 64, 56, 56))])
    S.add("add_medium_1x64x56x56_64x1x1", "add", [("a", (1, 64, 56, 56)), ("b", (64, 1, 1))])
    S.add("matmul_medium_64x256_256x96", "matmul", [("a", (64, 256)), ("b", (256, 96))])
    S.add("matmul_medium_batched_12x128x64_12x64x128", "matmul", [("a", (12, 128, 64)), ("b", (12, 64, 128))])
    S.add("gemm_medium_fc_128x100_tb", "gemm", [("a", (128, 100)), ("b", (64, 100)), ("c", (64,))], {"trans_b": 1})
    S.add("conv_medium_1x32x28x28_64x32x3x3", "conv", [("x", (1, 32, 28, 28)), ("w", (64, 32, 3, 3)), ("b", (64,))],
          {"pads": [1, 1, 1, 1]})
    S.add("conv_medium_depthwise_1x64x28x28", "conv", [("x", (1, 64, 28, 28)), ("w", (64, 1, 3, 3)), ("b", (64,))],
          {"pads": [1, 1, 1, 1], "group": 64})
    S.add("conv_medium_s2_1x16x32x32_32x16x3x3", "conv", [("x", (1, 16, 32, 32)), ("w", (32, 16, 3, 3))],
          {"pads": [1, 1, 1, 1], "strides": [2, 2]})
    S.add("maxpool_medium_1x64x56x56", "maxpool", [("x", (1, 64, 56, 56))],
          {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})
    S.add("global_avgpool_medium_1x512x7x7", "global_avgpool", [("x", (1, 512, 7, 7))])
    S.add("softmax_medium_64x1000", "softmax", [("x", (64, 1000))])
    S.add("layernorm_medium_128x768", "layernorm", [("x", (128, 768)), ("scale", (768,)), ("bias", (768,))])
    S.add("batchnorm_medium_1x64x56x56", "batchnorm",
          [("x", (1, 64, 56, 56)), ("scale", (64,)), ("bias", (64,)), ("mean", (64,))],
          consts=[("var", "f32", (64,), "random(7, low=0.1, high=2)")])
    S.add("transpose_medium_8x128x64_021", "transpose", [("x", (8, 128, 64))], {"perm": [0, 2, 1]})
    S.add("reduce_mean_medium_32x1000_axes1", "reduce_mean", [("x", (32, 1000))], {"axes": [1]})


def build():
    S = Suite()
    gen_elementwise(S)
    gen_reductions(S)
    gen_matmul(S)
    gen_conv(S)
    gen_pool(S)
    gen_norm(S)
    gen_movement(S)
    gen_empty_and_medium(S)
    return S


def range_values(seed, n, lo, hi, kind):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        if kind == "log":
            v = math.exp(rng.uniform(math.log(lo), math.log(hi)))
        else:
            v = rng.uniform(lo, hi)
        out.append(v)
    return out


def cmd_gen(d):
    S = build()
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "cases.jsonl"), "w") as man:
        for i, c in enumerate(S.cases):
            c["seed"] = zlib.crc32(c["case"].encode()) % 1000000  # stable when cases are added
            with open(os.path.join(d, c["case"] + ".ir"), "w") as f:
                f.write(c["text"])
            args = ["--seed", str(c["seed"])]
            for k, (inp, (lo, hi, kind)) in enumerate(sorted(c["ranges"].items())):
                shape = c["inputs"][inp]
                p = "%s.%s.npy" % (c["case"], inp)
                write_npy(os.path.join(d, p), shape, range_values(1000 * c["seed"] + k, numel(shape), lo, hi, kind))
                args += ["--input", "%s=%s" % (inp, p)]
            c["args"] = args
            with open(os.path.join(d, c["case"] + ".args"), "w") as f:
                f.write(" ".join(args) + "\n")
            rec = {k: c[k] for k in ("case", "op", "shapes", "attributes", "seed", "args", "ranges")}
            # A node's dtype is its first operand's, its result's without operands (docs/reports.md).
            rec["dtype"] = c["attributes"].get("dtype", "f32") if not c["shapes"] else "f32"
            man.write(json.dumps(rec) + "\n")
    return 0


# ---------------------------------------------------------------------------
# Collecting the results

DEFAULT_TOL = {"atol": 1e-5, "rtol": 1e-4}
LINE = re.compile(r"^(\S+): max abs error (\S+), max rel error (\S+), (\d+) of (\d+) outside atol (\S+) \+ rtol (\S+): "
                  r"(ok|MISMATCH)$")
UNSUPPORTED = ["the backend does not lower this op", "cannot run on", "is unsupported on",
               "the backend does not copy it yet"]


def num(s):
    try:
        v = float(s)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def first_error(err):
    lines = [l for l in err.splitlines() if l.strip()]
    for l in lines:
        if "error:" in l:
            return l.split("error:", 1)[1].strip()
    return lines[0].strip() if lines else ""


def classify(d, c):
    base = os.path.join(d, c["case"])
    rc_text = read(base + ".rc").strip()
    out, err = read(base + ".out"), read(base + ".err")
    rc = int(rc_text) if re.fullmatch(r"-?\d+", rc_text or "x") else None
    mabs = mrel = None
    tol = None
    bad_outputs = []
    for l in out.splitlines():
        m = LINE.match(l.strip())
        if not m:
            continue
        a, r = num(m.group(2)), num(m.group(3))
        if m.group(2) in ("inf", "nan") or a is None:
            a = float("inf")
        if m.group(3) in ("inf", "nan") or r is None:
            r = float("inf")
        mabs = a if mabs is None else max(mabs, a)
        mrel = r if mrel is None else max(mrel, r)
        tol = {"atol": float(m.group(6)), "rtol": float(m.group(7))}
        if m.group(8) != "ok":
            bad_outputs.append("%s: %s of %s outside" % (m.group(1), m.group(4), m.group(5)))
    if rc == 0 and tol is not None and not bad_outputs:
        status, reason = "pass", None
    elif rc == 1 and any(u in err for u in UNSUPPORTED):
        status, reason = "unsupported", first_error(err)
    elif rc == 4 or bad_outputs:
        status, reason = "fail", "mismatch: " + "; ".join(bad_outputs)
    elif rc == 3:
        status, reason = "fail", "run failure: " + (first_error(err) or "exit 3")
    elif rc == 124:
        status, reason = "fail", "timeout"
    elif rc is None:
        status, reason = "fail", "no result (the runner did not finish)"
    elif rc > 128 or rc < 0:
        status, reason = "fail", "crash: signal %d%s" % (rc - 128 if rc > 128 else -rc,
                                                          (": " + first_error(err)) if err.strip() else "")
    elif rc == 0:
        status, reason = "fail", "exit 0 without a comparison line"
    else:
        status, reason = "fail", "exit %d: %s" % (rc, first_error(err) or "no message")

    def clean(v):
        return None if v is None or not math.isfinite(v) else v

    return status, reason, clean(mabs), clean(mrel), tol or dict(DEFAULT_TOL)


def case_placement(d, name):
    """Where a placed target ran each node, and the simulator's figures,
    from the case's --report (targets with a host: npu-systolic)."""
    try:
        with open(os.path.join(d, name + ".report.json")) as f:
            rep = json.load(f)
    except (OSError, ValueError):
        return None
    if "placement" not in rep:
        return None
    out = {"placement": [{"node": n["name"], "op": n["op"], "runs_on": n["runs_on"], "reason": n["reason"]}
                         for n in rep["placement"]["nodes"]],
           "transfers": rep["placement"]["transfers"]}
    sims = rep.get("simulator") or []
    if sims:
        out["simulator"] = [{"cycles": s.get("cycles"), "pe_utilization": s.get("pe_utilization")} for s in sims]
    return out


def cmd_collect(d, evidence, version, target):
    cases = [json.loads(l) for l in open(os.path.join(d, "cases.jsonl")) if l.strip()]
    if os.path.exists(os.path.join(d, "names")):  # the cases that ran (CONFORMANCE_CASES)
        ran = set(l.strip() for l in open(os.path.join(d, "names")))
        cases = [c for c in cases if c["case"] in ran]
    counts = {"pass": 0, "fail": 0, "unsupported": 0}
    per_op = {}
    with open(evidence, "w") as ev:
        for c in cases:
            status, reason, mabs, mrel, tol = classify(d, c)
            counts[status] += 1
            po = per_op.setdefault(c["op"], {"pass": 0, "fail": 0, "unsupported": 0})
            po[status] += 1
            rec = {
                "schema": "gdcc.evidence", "schema_version": 1, "target": target, "case": c["case"], "op": c["op"],
                "dtype": c.get("dtype", "f32"), "shapes": c["shapes"], "attributes": c["attributes"], "status": status,
                "max_abs_error": mabs, "max_rel_error": mrel, "tolerance": tol, "reason": reason,
                "gdcc_version": version, "seed": c["seed"],
            }
            if os.environ.get("CONFORMANCE_ARGS"):
                rec["options"] = os.environ["CONFORMANCE_ARGS"]
            if os.environ.get("CONFORMANCE_VLEN"):
                rec["vlen"] = int(os.environ["CONFORMANCE_VLEN"])
            if c["ranges"]:
                rec["input_ranges"] = c["ranges"]
            placement = case_placement(d, c["case"])
            if placement:
                rec.update(placement)
            ev.write(json.dumps(rec) + "\n")
            tag = {"pass": "PASS", "fail": "FAIL", "unsupported": "UNSUPPORTED"}[status]
            extra = ""
            if status == "pass":
                extra = " (max abs %.3g, max rel %.3g)" % (mabs or 0, mrel or 0)
            elif reason:
                extra = ": " + reason
            print("%s: %s [%s]%s" % (tag, c["case"], c["op"], extra))
    if os.environ.get("CONFORMANCE_PER_OP"):
        for op, po in per_op.items():
            print("  %-18s %3d cases: %d passed, %d failed, %d unsupported" % (op, sum(po.values()), po["pass"],
                                                                              po["fail"], po["unsupported"]))
    print("conformance: %d passed, %d failed, %d unsupported" % (counts["pass"], counts["fail"], counts["unsupported"]))
    print("%d passed, %d failed" % (counts["pass"], counts["fail"]))
    return 1 if counts["fail"] else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "gen":
        return cmd_gen(argv[2])
    if len(argv) == 6 and argv[1] == "collect":
        return cmd_collect(argv[2], argv[3], argv[4], argv[5])
    if len(argv) == 2 and argv[1] == "list":
        for c in build().cases:
            print(c["case"])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
