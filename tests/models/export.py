#!/usr/bin/python3
"""Export the real models of the ONNX check with PyTorch's own outputs.

  tests/models/export.py OUTDIR [MODEL ...]

For each model (resnet18, mobilenet_v2, bert_layer, seg_head; default all; or any
torchvision classification model by its name, e.g. vit_b_16, swin_t,
densenet121, inception_v3 (299 x 299), convnext_tiny, efficientnet_b0)
writes OUTDIR/MODEL.onnx, OUTDIR/MODEL.input.npy (a seeded input) and
OUTDIR/MODEL.output.npy (PyTorch's output on it, in eval mode).  Weights
are random (seeded); nothing is downloaded.  BatchNorm running statistics
are randomized too, so that folding them is actually tested (measured on a
calibration batch instead where random ones drive the logits past 1e6).  OPSET in the
environment picks the opset (default 17).
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision

OPSET = int(os.environ.get("OPSET", "17"))


class BertLayer(nn.Module):
    """A BERT-base encoder layer (hidden 768, 12 heads, FFN 3072, GELU),
    written as Hugging Face's BertLayer computes it."""

    def __init__(self, hidden=768, heads=12, ffn=3072):
        super().__init__()
        self.heads, self.dh = heads, hidden // heads
        self.q, self.k, self.v = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.attn_out = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.ffn_in = nn.Linear(hidden, ffn)
        self.ffn_out = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.dh).permute(0, 2, 1, 3)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh)
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        ctx = ctx.permute(0, 2, 1, 3).reshape(b, s, h)
        x = self.ln1(x + self.attn_out(ctx))
        return self.ln2(x + self.ffn_out(nn.functional.gelu(self.ffn_in(x))))


class SegHead(nn.Module):
    """A segmentation-style decoder: the ops gdcc imports as several of its
    own (ConvTranspose with groups, stride, dilation and output padding;
    InstanceNorm; LRN; Resize bilinear, bicubic and nearest)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 16, 3, padding=1)
        self.up1 = nn.ConvTranspose2d(16, 12, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.norm = nn.InstanceNorm2d(12, affine=True)
        self.up2 = nn.ConvTranspose2d(12, 6, (3, 2), stride=(1, 2), dilation=(2, 1), bias=False)
        self.lrn = nn.LocalResponseNorm(3, alpha=1e-2, beta=0.7, k=1.5)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = self.norm(self.up1(x))
        x = self.lrn(torch.relu(self.up2(x)))
        x = nn.functional.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=False)
        x = nn.functional.interpolate(x, size=(20, 30), mode="bicubic", align_corners=True)
        return nn.functional.interpolate(x, scale_factor=2, mode="nearest")


def build(name):
    if name == "seg_head":
        return SegHead(), (1, 8, 7, 9)
    if name == "resnet18":
        return torchvision.models.resnet18(), (1, 3, 224, 224)
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2(), (1, 3, 224, 224)
    if name == "bert_layer":
        return BertLayer(), (1, 128, 768)
    ctor = getattr(torchvision.models, name, None)
    if callable(ctor) and not name[0].isupper():
        size = 299 if name == "inception_v3" else 224
        kw = {"aux_logits": False, "init_weights": True} if name in ("inception_v3", "googlenet") else {}
        return ctor(**kw), (1, 3, size, size)
    raise SystemExit(f"export.py: unknown model '{name}' (resnet18, mobilenet_v2, bert_layer, or a torchvision classifier)")


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name in sys.argv[2:] or ["resnet18", "mobilenet_v2", "bert_layer", "seg_head"]:
        torch.manual_seed(1)
        model, shape = build(name)
        for m in model.modules():
            # (inception_v3's and googlenet's own init draws conv weights with
            # std 0.1 whatever the fan-in: over their depth the logits reach
            # 1e13, where f32's rounding is larger than the comparison's
            # tolerance; He's init keeps them near 1)
            if name in ("inception_v3", "googlenet") and isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            # (vit_b_16's head starts at zero: its logits would all be 0,
            # and match anything)
            if isinstance(m, nn.Linear) and not m.weight.detach().any():
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, (nn.BatchNorm2d, nn.InstanceNorm2d)) and m.affine:
                if m.track_running_stats:
                    m.running_mean.uniform_(-0.5, 0.5)
                    m.running_var.uniform_(0.5, 1.5)
                nn.init.uniform_(m.weight, 0.5, 1.5)
                nn.init.uniform_(m.bias, -0.2, 0.2)
        model.eval()
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(7))
        # Random running statistics do not normalize: over a deep residual
        # stack the logits can grow geometrically (resnet152: 2e11, where
        # f32's rounding exceeds any tolerance for elements that cancel).
        # Then, and only then, BatchNorm's statistics are measured on the
        # activations instead (one training-mode pass over a calibration
        # batch, cumulative average), which keeps the logits near 1.
        bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d) and m.track_running_stats]
        with torch.no_grad():
            probe = model(x)
        probe = probe[0] if isinstance(probe, tuple) else probe
        if bns and not (torch.isfinite(probe).all() and probe.abs().max() < 1e6):
            print(f"{name}: logits reach {probe.abs().max().item():.3g} with random BatchNorm statistics: calibrated")
            for m in bns:
                m.reset_running_stats()
                m.momentum = None
            model.train()
            with torch.no_grad():
                model(torch.randn(2, *shape[1:], generator=torch.Generator().manual_seed(11)))
            for m in bns:
                m.momentum = 0.1
        model.eval()
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(7))
        with torch.no_grad():
            y = model(x)
        # (exported outside no_grad: under it nn.MultiheadAttention takes a
        # fused fast path that has no ONNX export, vit_b_16)
        torch.onnx.export(model, (x,), os.path.join(out, name + ".onnx"), opset_version=OPSET,
                          input_names=["input"], output_names=["output"], do_constant_folding=True)
        np.save(os.path.join(out, name + ".input.npy"), x.numpy())
        # the same model in float64, for judging gdcc where PyTorch's own f32
        # rounding is larger than the tolerance (tests/models/compare.py)
        try:
            with torch.no_grad():
                y64 = model.double()(x.double())
            np.save(os.path.join(out, name + ".output64.npy"), (y64[0] if isinstance(y64, tuple) else y64).numpy())
        except (RuntimeError, TypeError) as e:
            print(f"{name}: no float64 reference ({e})")
        np.save(os.path.join(out, name + ".output.npy"), y.numpy())
        print(f"{name}: input {tuple(x.shape)} output {tuple(y.shape)}")


if __name__ == "__main__":
    main()
