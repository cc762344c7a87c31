#!/usr/bin/python3
# GridSample cases in the ONNX backend-test layout beyond the suite's eight
# (one padding or mode at a time, 1 channel): every mode (bilinear, nearest,
# bicubic) with every padding_mode (zeros, border, reflection), align_corners
# both ways, 2 images of 3 channels, a grid reaching past the edges.  The
# oracle is PyTorch's torch.nn.functional.grid_sample, whose definition
# ONNX's GridSample follows:
#   tests/onnx-cases/gen_gridsample.py tests/onnx-cases   wrote the committed cases
# (python3-onnx, python3-numpy, python3-torch).
import numpy as np, onnx, os, sys, torch
from onnx import helper, TensorProto
from casefile import write_case

out = sys.argv[1]
rng = np.random.RandomState(23)
for mi, mode in enumerate(["bilinear", "nearest", "bicubic"]):
    for pi, pad in enumerate(["zeros", "border", "reflection"]):
        align = (mi + pi) % 2
        x = rng.randn(2, 3, 5, 7).astype(np.float32)
        # past the edges by up to 30 %, and (nearest) off the halfway points
        g = rng.uniform(-1.3, 1.3, size=(2, 4, 6, 2)).astype(np.float32)
        y = torch.nn.functional.grid_sample(torch.from_numpy(x), torch.from_numpy(g), mode=mode, padding_mode=pad,
                                            align_corners=bool(align)).numpy()
        name = "gridsample_%s_%s_align%d" % (mode, pad, align)
        node = helper.make_node("GridSample", ["X", "Grid"], ["Y"], mode=mode, padding_mode=pad, align_corners=align)
        gin = [helper.make_tensor_value_info("X", TensorProto.FLOAT, x.shape),
               helper.make_tensor_value_info("Grid", TensorProto.FLOAT, g.shape)]
        gout = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, y.shape)]
        m = helper.make_model(helper.make_graph([node], "test_" + name, gin, gout), opset_imports=[helper.make_opsetid("", 16)])
        write_case(os.path.join(out, "node", "test_" + name), m, [("X", x), ("Grid", g)], [("Y", y)])
        print(name, y.shape)
