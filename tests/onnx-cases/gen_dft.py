#!/usr/bin/python3
# DFT, STFT and ReverseSequence cases in the ONNX backend-test layout for what
# the suite's own seven leave out: dft_length cutting and padding, onesided,
# complex input along a middle axis, the inverse of a complex signal, STFT of
# a complex signal and two-sided, ReverseSequence of rank 3, MelWeightMatrix
# at a speech front end's parameters.  The oracle is numpy (numpy.fft,
# slicing, and for MelWeightMatrix the ONNX suite's generator's own steps,
# its f32 scalars as they are):
#   tests/onnx-cases/gen_dft.py tests/onnx-cases   wrote the committed cases
# (python3-onnx, python3-numpy).
import numpy as np, onnx, os, sys
from onnx import helper, TensorProto, numpy_helper
from casefile import write_case

out = sys.argv[1]
rng = np.random.RandomState(17)

def save(name, node, feeds, outs, opset=17, consts=()):
    ty = lambda v: TensorProto.INT64 if v.dtype == np.int64 else TensorProto.FLOAT
    gin = [helper.make_tensor_value_info(k, ty(v), v.shape) for k, v in feeds]
    gout = [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in outs]
    inits = [numpy_helper.from_array(v, k) for k, v in consts]
    m = helper.make_model(helper.make_graph([node], "test_" + name, gin, gout, inits), opset_imports=[helper.make_opsetid("", opset)])
    write_case(os.path.join(out, "node", "test_" + name), m, feeds, outs)
    print(name, [v.shape for _, v in outs])

def pack(c):  # complex -> [..., 2]
    return np.stack([c.real, c.imag], -1).astype(np.float32)

def dft_case(name, shape, axis, complex_in=False, n=None, inverse=0, onesided=0):
    x = rng.randn(*shape, 2 if complex_in else 1).astype(np.float32)
    xc = x[..., 0] + 1j * x[..., 1] if complex_in else x[..., 0].astype(np.float64)
    N = n or shape[axis]
    y = (np.fft.ifft if inverse else np.fft.fft)(xc.astype(np.complex128), n=N, axis=axis)
    if onesided: y = np.take(y, np.arange(N // 2 + 1), axis=axis)
    ins = ["x"] + (["n"] if n else [])
    node = helper.make_node("DFT", ins, ["y"], axis=axis, inverse=inverse, onesided=onesided)
    save(name, node, [("x", x)], [("y", pack(y))], consts=[("n", np.array(n, np.int64))] if n else [])

dft_case("dft_length_pad_onesided", (2, 6, 3), 1, n=9, onesided=1)
dft_case("dft_length_cut_complex", (2, 12, 3), 1, complex_in=True, n=8)
dft_case("dft_complex_middle_axis", (2, 3, 7, 4), 2, complex_in=True)
dft_case("dft_inverse_complex_last_axis", (3, 8), 1, complex_in=True, inverse=1)

def stft_case(name, batch, length, step, flen, complex_in=False, window=False, onesided=1):
    x = rng.randn(batch, length, 2 if complex_in else 1).astype(np.float32)
    xc = x[..., 0] + 1j * x[..., 1] if complex_in else x[..., 0].astype(np.float64)
    w = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(flen) / flen)).astype(np.float32) if window else None
    frames = (length - flen) // step + 1
    fr = np.stack([xc[:, f * step:f * step + flen] for f in range(frames)], 1)
    if window: fr = fr * w.astype(np.float64)
    y = np.fft.fft(fr, axis=2)
    if onesided: y = y[:, :, :flen // 2 + 1]
    consts = [("step", np.array(step, np.int64))]
    ins, feeds = ["x", "step"], [("x", x)]
    if window: ins.append("w"); feeds.append(("w", w))
    else: ins += ["", "flen"]; consts.append(("flen", np.array(flen, np.int64)))
    node = helper.make_node("STFT", ins, ["y"], onesided=onesided)
    save(name, node, feeds, [("y", pack(y))], consts=consts)

stft_case("stft_complex_twosided", 2, 40, 6, 10, complex_in=True, onesided=0)
stft_case("stft_window_odd_frame", 1, 50, 7, 11, window=True)

def revseq_case(name, shape, batch_axis, time_axis, lens):
    x = rng.randn(*shape).astype(np.float32)
    y = x.copy()
    for b, L in enumerate(lens):
        idx = [slice(None)] * len(shape); idx[batch_axis] = b
        src = list(idx); src[time_axis] = slice(0, L)
        dst = list(idx); dst[time_axis] = slice(L - 1, None, -1) if L else slice(0, 0)
        y[tuple(src)] = x[tuple(dst)]
    node = helper.make_node("ReverseSequence", ["x", "l"], ["y"], batch_axis=batch_axis, time_axis=time_axis)
    save(name, node, [("x", x), ("l", np.array(lens, np.int64))], [("y", y)], opset=10)

revseq_case("reversesequence_rank3_time", (5, 3, 4), 1, 0, [5, 0, 2])
revseq_case("reversesequence_rank4_batch", (3, 6, 2, 2), 0, 1, [1, 6, 4])

def mel_case(name, M, N, rate, lo, hi):
    num_mel_bins, dft_length, sample_rate = np.int32(M), np.int32(N), np.int32(rate)
    lower_edge_hertz, upper_edge_hertz = np.float32(lo), np.float32(hi)
    bins = np.arange(0, num_mel_bins + 2)
    low_mel = 2595 * np.log10(1 + lower_edge_hertz / 700)
    high_mel = 2595 * np.log10(1 + upper_edge_hertz / 700)
    step = (high_mel - low_mel) / bins.shape[0]
    bins = bins * step + low_mel
    bins = 700 * (np.power(10, (bins / 2595)) - 1)
    bins = (((dft_length + 1) * bins) // sample_rate).astype(int)
    y = np.zeros((dft_length // 2 + 1, num_mel_bins))
    for i in range(num_mel_bins):
        l, c, r = bins[i], bins[i + 1], bins[i + 2]
        if c == l: y[c, i] = 1
        else:
            for j in range(l, c + 1): y[j, i] = float(j - l) / float(c - l)
        for j in range(c, r): y[j, i] = float(r - j) / float(r - c)
    names = ["num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"]
    vals = [num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz]
    node = helper.make_node("MelWeightMatrix", names, ["y"])
    feeds = [(k, np.array(v)) for k, v in zip(names, vals)]
    d = os.path.join(out, "node", "test_" + name)
    ty = lambda v: TensorProto.INT32 if v.dtype == np.int32 else TensorProto.FLOAT
    gin = [helper.make_tensor_value_info(k, ty(v), ()) for k, v in feeds]
    gout = [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape)]
    m = helper.make_model(helper.make_graph([node], "test_" + name, gin, gout), opset_imports=[helper.make_opsetid("", 17)])
    write_case(d, m, feeds, [("y", y.astype(np.float32))])
    print(name, y.shape)

mel_case("melweightmatrix_speech", 20, 256, 16000, 125.0, 7600.0)
