#!/usr/bin/python3
# Einsum cases in the ONNX backend-test layout (model.onnx, test_data_set_0/
# input_N.pb, output_0.pb) with f32 data (the ONNX suite's own Einsum cases are
# f64), numpy.einsum the oracle: tests/onnx-cases/gen_einsum.py tests/onnx-cases
# wrote the committed cases (python3-onnx, python3-numpy).
import numpy as np, onnx, os, sys
from onnx import helper, TensorProto, numpy_helper
out = sys.argv[1]
rng = np.random.RandomState(3)
cases = {
 "einsum_batch_matmul": ("bij,bjk->bik", [(3,4,5),(3,5,6)]),
 "einsum_inner_prod": ("i,i", [(7,),(7,)]),
 "einsum_sum": ("ij->i", [(4,5)]),
 "einsum_transpose": ("ij->ji", [(4,5)]),
 "einsum_outer": ("i,j->ij", [(3,),(4,)]),
 "einsum_bilinear": ("bn,anm,bm->ba", [(2,3),(5,3,4),(2,4)]),
 "einsum_ellipsis": ("...ij,...jk->...ik", [(2,3,4,5),(2,3,5,2)]),
 "einsum_broadcast_ellipsis": ("...ij,...jk", [(2,1,4,5),(3,5,2)]),
 "einsum_implicit": ("kj,ji", [(3,4),(4,2)]),
 "einsum_attention": ("bhqd,bhkd->bhqk", [(1,2,5,4),(1,2,6,4)]),
 "einsum_sum_all": ("ijk->", [(2,3,4)]),
 "einsum_only_one_side_sum": ("ij,kl->ik", [(2,3),(4,5)]),
}
for name, (eq, shapes) in cases.items():
    d = os.path.join(out, "node", "test_" + name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    xs = [rng.randn(*s).astype(np.float32) for s in shapes]
    y = np.einsum(eq, *xs).astype(np.float32)
    ins = [helper.make_tensor_value_info("x%d" % i, TensorProto.FLOAT, s) for i, s in enumerate(shapes)]
    o = helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape)
    node = helper.make_node("Einsum", ["x%d" % i for i in range(len(shapes))], ["y"], equation=eq)
    g = helper.make_graph([node], "test_" + name, ins, [o])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)])
    onnx.save(m, os.path.join(d, "model.onnx"))
    for i, x in enumerate(xs):
        open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb").write(numpy_helper.from_array(x, "x%d" % i).SerializeToString())
    open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb").write(numpy_helper.from_array(y, "y").SerializeToString())
    print(name, eq, y.shape)
