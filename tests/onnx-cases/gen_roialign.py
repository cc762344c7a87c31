#!/usr/bin/python3
# RoiAlign cases in the ONNX backend-test layout beyond the suite's two (one
# image, one channel): two images of three channels, regions on both (batch
# indices), reaching past the image's edges, several output sizes and
# sampling ratios, both coordinate modes.  The oracle is torchvision's
# roi_align (aligned=True: half_pixel; False: output_half_pixel), whose
# definition ONNX's follows:
#   tests/onnx-cases/gen_roialign.py tests/onnx-cases   wrote the committed cases
# (python3-onnx, python3-numpy, python3-torch, python3-torchvision).
import numpy as np, os, sys, torch
from onnx import helper, TensorProto
from torchvision.ops import roi_align
from casefile import write_case

out = sys.argv[1]
rng = np.random.RandomState(31)
for name, (oh, ow, sr, half, scale) in {
        "roialign_half_pixel_2x3_sr1": (2, 3, 1, 1, 0.5),
        "roialign_output_half_pixel_3x3_sr3": (3, 3, 3, 0, 1.0),
        "roialign_half_pixel_4x2_sr2": (4, 2, 2, 1, 1.0)}.items():
    x = rng.randn(2, 3, 9, 11).astype(np.float32)
    boxes = []
    for r in range(5):
        x1, y1 = rng.uniform(-3, 9), rng.uniform(-3, 7)
        boxes.append([x1, y1, x1 + rng.uniform(0.3, 8) / scale, y1 + rng.uniform(0.3, 6) / scale])
    rois = (np.array(boxes) / scale).astype(np.float32)
    bidx = np.array([0, 1, 1, 0, 1], np.int64)
    y = roi_align(torch.from_numpy(x), torch.from_numpy(np.concatenate([bidx[:, None].astype(np.float32), rois], 1)),
                  output_size=(oh, ow), spatial_scale=scale, sampling_ratio=sr, aligned=bool(half)).numpy()
    node = helper.make_node("RoiAlign", ["X", "rois", "batch_indices"], ["Y"], output_height=oh, output_width=ow,
                            sampling_ratio=sr, spatial_scale=scale, mode="avg",
                            coordinate_transformation_mode="half_pixel" if half else "output_half_pixel")
    feeds = [("X", x), ("rois", rois), ("batch_indices", bidx)]
    ty = lambda v: TensorProto.INT64 if v.dtype == np.int64 else TensorProto.FLOAT
    gin = [helper.make_tensor_value_info(k, ty(v), v.shape) for k, v in feeds]
    gout = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, y.shape)]
    m = helper.make_model(helper.make_graph([node], "test_" + name, gin, gout), opset_imports=[helper.make_opsetid("", 16)])
    write_case(os.path.join(out, "node", "test_" + name), m, feeds, [("Y", y)])
    print(name, y.shape)
