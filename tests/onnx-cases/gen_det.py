#!/usr/bin/python3
# Det cases in the ONNX backend-test layout beyond the suite's two (2 x 2):
# every size gdcc takes, 1 x 1 to 5 x 5, batched (well conditioned: a
# singular matrix's f32 result is rounding, beyond ONNX's 1e-7 absolute).
# The oracle is numpy.linalg.det in float64:
#   tests/onnx-cases/gen_det.py tests/onnx-cases   wrote the committed cases
# (python3-onnx, python3-numpy).
import numpy as np, os, sys
from onnx import helper, TensorProto
from casefile import write_case

out = sys.argv[1]
rng = np.random.RandomState(29)
def case(name, x):
    y = np.linalg.det(x.astype(np.float64)).astype(np.float32)
    node = helper.make_node("Det", ["x"], ["y"])
    gin = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)]
    gout = [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape)]
    m = helper.make_model(helper.make_graph([node], "test_" + name, gin, gout), opset_imports=[helper.make_opsetid("", 11)])
    write_case(os.path.join(out, "node", "test_" + name), m, [("x", x)], [("y", y)])
    print(name, y.shape, y.ravel()[:3])
for n in range(1, 6):
    # well away from singular: the identity plus a perturbation
    x = (np.eye(n) + 0.4 * rng.randn(2, 3, n, n)).astype(np.float32)
    case("det_%dx%d_batched" % (n, n), x)
