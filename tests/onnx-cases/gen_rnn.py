#!/usr/bin/python3
# RNN, GRU and LSTM cases in the ONNX backend-test layout (model.onnx,
# test_data_set_0/input_N.pb, output_N.pb) for what the ONNX suite's own twelve
# cases leave out: reverse and bidirectional, layout 1, initial states,
# sequence_lens, clip, the other activations with their alpha and beta,
# GRU's linear_before_reset 0 in both directions, LSTM's input_forget.
#   tests/onnx-cases/gen_rnn.py tests/onnx-cases   wrote the committed cases
# (python3-onnx, python3-numpy, python3-torch).
#
# The oracles: PyTorch for what it exports (torch.nn.RNN / GRU / LSTM, stacked
# and bidirectional, batch_first: its outputs stored), and for the rest a numpy
# reading of the ONNX operator text, one batch entry at a time (a finished
# entry stops: its Y rows stay 0, its Y_h the state at its last step), in
# float64.  That reading is checked here first against PyTorch (the same
# configurations) and against the ONNX suite's stored outputs of its twelve
# cases; a disagreement stops the script.
import numpy as np, onnx, os, sys, glob
from onnx import helper, TensorProto, numpy_helper
from casefile import write_case

out = sys.argv[1]
rng = np.random.RandomState(11)
SUITE = "/usr/share/libonnx-testdata/data/node"

def act(name, x, alpha, beta):
    n = name.lower()
    if n == "sigmoid": return 1 / (1 + np.exp(-x))
    if n == "tanh": return np.tanh(x)
    if n == "relu": return np.maximum(x, 0)
    if n == "affine": return alpha * x + beta
    if n == "leakyrelu": return np.where(x >= 0, x, alpha * x)
    if n == "thresholdedrelu": return np.where(x > alpha, x, 0)
    if n == "scaledtanh": return alpha * np.tanh(beta * x)
    if n == "hardsigmoid": return np.clip(alpha * x + beta, 0, 1)
    if n == "elu": return np.where(x >= 0, x, alpha * (np.exp(x) - 1))
    if n == "softsign": return x / (1 + np.abs(x))
    if n == "softplus": return np.log1p(np.exp(x))
    raise ValueError(name)

PARAMS = {"leakyrelu": (1, 0.01, 0), "thresholdedrelu": (1, 1.0, 0), "scaledtanh": (2, 1.0, 1.0),
          "hardsigmoid": (2, 0.2, 0.5), "elu": (1, 1.0, 0), "affine": (2, 1.0, 0.0)}

def activations(kind, dirs, attrs):
    nact = {"RNN": 1, "GRU": 2, "LSTM": 3}[kind]
    names = attrs.get("activations", (["Tanh"] if kind == "RNN" else ["Sigmoid", "Tanh"] + (["Tanh"] if kind == "LSTM" else [])) * dirs)
    if len(names) == nact and dirs == 2: names = names * 2
    al, be = list(attrs.get("activation_alpha", [])), list(attrs.get("activation_beta", []))
    res = []
    for n in names:
        p, a, b = PARAMS.get(n.lower(), (0, 0, 0))
        if p >= 1 and al: a = al.pop(0)
        if p >= 2 and be: b = be.pop(0)
        res.append((n, a, b))
    return [res[d * nact:(d + 1) * nact] for d in range(dirs)]

def reference(kind, ins, attrs):
    """ONNX RNN/GRU/LSTM in float64, one batch entry at a time."""
    X = ins["X"].astype(np.float64); W = ins["W"].astype(np.float64); R = ins["R"].astype(np.float64)
    layout = attrs.get("layout", 0)
    if layout: X = X.transpose(1, 0, 2)
    seq, batch, _ = X.shape
    dirs, H = W.shape[0], R.shape[2]
    G = {"RNN": 1, "GRU": 3, "LSTM": 4}[kind]
    B = ins.get("B", np.zeros((dirs, 2 * G * H))).astype(np.float64)
    st = lambda k: ins[k].astype(np.float64).transpose(1, 0, 2) if layout else ins[k].astype(np.float64)
    h0 = st("initial_h") if "initial_h" in ins else np.zeros((dirs, batch, H))
    c0 = st("initial_c") if "initial_c" in ins else np.zeros((dirs, batch, H))
    P = ins.get("P", np.zeros((dirs, 3 * H))).astype(np.float64)
    lens = ins.get("sequence_lens", np.full(batch, seq))
    clip = attrs.get("clip")
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    acts = activations(kind, dirs, attrs)
    lbr, couple = attrs.get("linear_before_reset", 0), attrs.get("input_forget", 0)
    Y = np.zeros((seq, dirs, batch, H)); Yh = np.zeros((dirs, batch, H)); Yc = np.zeros((dirs, batch, H))
    for d in range(dirs):
        rev = d == 1 or attrs.get("direction") == "reverse"
        f, g, hh = (acts[d] + acts[d] + acts[d])[:3] if kind != "RNN" else (acts[d][0],) * 3
        A = lambda a, v: act(a[0], v, a[1], a[2])
        Wb, Rb = B[d, :G * H], B[d, G * H:]
        for b in range(batch):
            h, c = h0[d, b], c0[d, b]
            L = int(lens[b])
            for t in (range(L - 1, -1, -1) if rev else range(L)):
                x = X[t, b]
                if kind == "RNN":
                    h = A(f, cl(x @ W[d].T + h @ R[d].T + Wb + Rb))
                elif kind == "GRU":
                    w = np.split(W[d], 3); r = np.split(R[d], 3); wb = np.split(Wb, 3); rb = np.split(Rb, 3)
                    z = A(f, cl(x @ w[0].T + h @ r[0].T + wb[0] + rb[0]))
                    rr = A(f, cl(x @ w[1].T + h @ r[1].T + wb[1] + rb[1]))
                    if lbr: hc = A(g, cl(x @ w[2].T + rr * (h @ r[2].T + rb[2]) + wb[2]))
                    else: hc = A(g, cl(x @ w[2].T + (rr * h) @ r[2].T + rb[2] + wb[2]))
                    h = (1 - z) * hc + z * h
                else:
                    w = np.split(W[d], 4); r = np.split(R[d], 4); wb = np.split(Wb, 4); rb = np.split(Rb, 4)
                    p = np.split(P[d], 3)
                    i = A(f, cl(x @ w[0].T + h @ r[0].T + p[0] * c + wb[0] + rb[0]))
                    ff = 1 - i if couple else A(f, cl(x @ w[2].T + h @ r[2].T + p[2] * c + wb[2] + rb[2]))
                    cc = A(g, cl(x @ w[3].T + h @ r[3].T + wb[3] + rb[3]))
                    c = ff * c + i * cc
                    o = A(f, cl(x @ w[1].T + h @ r[1].T + p[1] * c + wb[1] + rb[1]))
                    h = o * A(hh, c)
                Y[t, d, b] = h
            Yh[d, b] = h; Yc[d, b] = c
    if layout: Y, Yh, Yc = Y.transpose(2, 0, 1, 3), Yh.transpose(1, 0, 2), Yc.transpose(1, 0, 2)
    return [Y, Yh, Yc][:3 if kind == "LSTM" else 2]

def load_pb(path):
    t = onnx.TensorProto(); t.ParseFromString(open(path, "rb").read()); return numpy_helper.to_array(t)

# the reading against the ONNX suite's stored outputs
for d in sorted(glob.glob(SUITE + "/test_*")):
    name = os.path.basename(d)
    if not any(name.startswith("test_" + p) for p in ("rnn", "simple_rnn", "gru", "lstm")): continue
    m = onnx.load(d + "/model.onnx"); n = m.graph.node[0]
    attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
    attrs = {k: (v.decode() if isinstance(v, bytes) else [s.decode() for s in v] if isinstance(v, list) and v and isinstance(v[0], bytes) else v) for k, v in attrs.items()}
    ins = {}
    for k, nm in enumerate(n.input):
        if nm: ins[["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"][k]] = load_pb("%s/test_data_set_0/input_%d.pb" % (d, [i.name for i in m.graph.input].index(nm)))
    want = [load_pb(f) for f in sorted(glob.glob(d + "/test_data_set_0/output_*.pb"))]
    got = reference(n.op_type, ins, attrs)
    outs = [k for k, nm in enumerate(n.output) if nm]
    for w, k in zip(want, outs):
        assert np.allclose(got[k], w, rtol=1e-4, atol=1e-6), (name, k, np.abs(got[k] - w).max())
    print("reading agrees with", name)

def save_case(name, model, feeds, outs, npy=False):
    d = os.path.join(out, "node", "test_" + name)
    if npy:  # the same data as .npy, for a run with sequence_lens an input (tests/onnx_extra.sh)
        os.makedirs(os.path.join(d, "npy"), exist_ok=True)
        for k, v in feeds + outs:
            np.save(os.path.join(d, "npy", k + ".npy"), v)
    write_case(d, model, feeds, outs)
    print(name, [v.shape for _, v in outs])

# ---- the ONNX op's own cases, the numpy reading the oracle -----------------------
def case(name, kind, seq, batch, I, H, attrs, have=("B",), outputs=("Y", "Y_h", "Y_c"), lens=None):
    G = {"RNN": 1, "GRU": 3, "LSTM": 4}[kind]
    dirs = 2 if attrs.get("direction") == "bidirectional" else 1
    layout = attrs.get("layout", 0)
    r = lambda *s: (rng.randn(*s) * 0.5).astype(np.float32)
    ins = {"X": r(batch, seq, I) if layout else r(seq, batch, I), "W": r(dirs, G * H, I), "R": r(dirs, G * H, H)}
    if "B" in have: ins["B"] = r(dirs, 2 * G * H)
    if lens is not None: ins["sequence_lens"] = np.array(lens, np.int32)
    st = (batch, dirs, H) if layout else (dirs, batch, H)
    if "initial_h" in have: ins["initial_h"] = r(*st)
    if "initial_c" in have: ins["initial_c"] = r(*st)
    if "P" in have: ins["P"] = r(dirs, 3 * H)
    order = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]
    last = max(order.index(k) for k in ins)
    node_in = [k if k in ins else "" for k in order[:last + 1]]
    nout = 3 if kind == "LSTM" else 2
    node_out = [k if k in outputs else "" for k in ["Y", "Y_h", "Y_c"][:nout]]
    node = helper.make_node(kind, node_in, node_out, hidden_size=H, **attrs)
    got = reference(kind, ins, attrs)
    feeds = [(k, ins[k]) for k in order if k in ins]
    ty = lambda v: TensorProto.INT32 if v.dtype == np.int32 else TensorProto.FLOAT
    gin = [helper.make_tensor_value_info(k, ty(v), v.shape) for k, v in feeds]
    outs = [(k, got[i].astype(np.float32)) for i, k in enumerate(["Y", "Y_h", "Y_c"][:nout]) if k in outputs]
    gout = [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in outs]
    m = helper.make_model(helper.make_graph([node], "test_" + name, gin, gout), opset_imports=[helper.make_opsetid("", 14)])
    save_case(name, m, feeds, outs, npy=lens is not None)

case("rnn_reverse_relu_clip", "RNN", 4, 2, 3, 5, dict(direction="reverse", activations=["Relu"], clip=0.75),
     have=("B", "initial_h"))
case("rnn_bidirectional_layout1", "RNN", 3, 2, 3, 4, dict(direction="bidirectional", layout=1,
     activations=["LeakyRelu", "ScaledTanh"], activation_alpha=[0.2, 0.7], activation_beta=[1.5]), have=("B", "initial_h"))
case("gru_bidirectional_sequence_lens", "GRU", 4, 3, 3, 4, dict(direction="bidirectional"),
     have=("B", "initial_h"), lens=[3, 1, 4])
case("gru_hardsigmoid_affine_clip", "GRU", 3, 2, 4, 3, dict(linear_before_reset=1, activations=["HardSigmoid", "Affine"],
     activation_alpha=[0.3, 0.9], activation_beta=[0.4, 0.1], clip=2.0), outputs=("Y",))
case("gru_reverse_layout1", "GRU", 3, 2, 3, 5, dict(direction="reverse", layout=1), have=("B", "initial_h"))
case("lstm_bidirectional_peepholes_sequence_lens", "LSTM", 5, 3, 3, 4, dict(direction="bidirectional"),
     have=("B", "initial_h", "initial_c", "P"), lens=[2, 5, 3])
case("lstm_input_forget_reverse_layout1", "LSTM", 4, 2, 3, 3, dict(direction="reverse", layout=1, input_forget=1,
     activations=["Sigmoid", "Elu", "Softsign"], activation_alpha=[0.8], clip=3.0), have=("B", "initial_h", "initial_c"))
case("lstm_thresholdedrelu_softplus", "LSTM", 3, 2, 2, 3, dict(activations=["ThresholdedRelu", "Softplus", "Tanh"],
     activation_alpha=[0.1]), have=("B",), outputs=("Y_h", "Y_c"))

# ---- PyTorch's modules, exported: its outputs the oracle -------------------------
import torch
torch.manual_seed(5)
class Wrap(torch.nn.Module):
    def __init__(self, m): super().__init__(); self.m = m
    def forward(self, x):
        y = self.m(x)
        return (y[0],) + (tuple(y[1]) if isinstance(y[1], tuple) else (y[1],))
def torch_case(name, mod, x):
    mod.eval()
    w = Wrap(mod)
    with torch.no_grad(): ys = w(x)
    path = "/tmp/gen_rnn_%s.onnx" % name
    outs = ["Y", "Y_h", "Y_c"][:len(ys)]
    torch.onnx.export(w, (x,), path, input_names=["X"], output_names=outs, opset_version=14)
    m = onnx.load(path)
    save_case(name, m, [("X", x.numpy())], [(k, y.numpy()) for k, y in zip(outs, ys)])
# the numpy reading against PyTorch, one layer in both directions, the
# module's weights in ONNX's gate order (PyTorch: LSTM i f g o, GRU r z n;
# ONNX: i o f c, z r h; PyTorch's GRU is linear_before_reset 1)
def torch_vs_reading(kind, mod, x, attrs):
    perm = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2], "RNN": [0]}[kind]
    G = len(perm)
    def reorder(t):
        parts = np.split(t.detach().numpy().astype(np.float64), G)
        return np.concatenate([parts[k] for k in perm])
    sfx = ["_l0", "_l0_reverse"] if mod.bidirectional else ["_l0"]
    W = np.stack([reorder(getattr(mod, "weight_ih" + s)) for s in sfx])
    R = np.stack([reorder(getattr(mod, "weight_hh" + s)) for s in sfx])
    B = np.stack([np.concatenate([reorder(getattr(mod, "bias_ih" + s)), reorder(getattr(mod, "bias_hh" + s))]) for s in sfx])
    with torch.no_grad(): y = mod(x)
    got = reference(kind, {"X": x.numpy(), "W": W, "R": R, "B": B},
                    dict(attrs, direction="bidirectional" if mod.bidirectional else "forward"))
    dirs = 2 if mod.bidirectional else 1
    want_y = y[0].numpy().reshape(x.shape[0], x.shape[1], dirs, -1).transpose(0, 2, 1, 3)
    want_h = (y[1][0] if kind == "LSTM" else y[1]).numpy()
    assert np.allclose(got[0], want_y, atol=1e-5) and np.allclose(got[1], want_h, atol=1e-5), kind
    if kind == "LSTM": assert np.allclose(got[2], y[1][1].numpy(), atol=1e-5)
    print("reading agrees with torch.nn." + kind, attrs)
torch_vs_reading("LSTM", torch.nn.LSTM(3, 4, bidirectional=True), torch.randn(5, 2, 3), {})
torch_vs_reading("GRU", torch.nn.GRU(3, 4, bidirectional=True), torch.randn(5, 2, 3), {"linear_before_reset": 1})
torch_vs_reading("RNN", torch.nn.RNN(3, 4, bidirectional=True, nonlinearity="relu"), torch.randn(5, 2, 3), {"activations": ["Relu"]})
torch_vs_reading("RNN", torch.nn.RNN(3, 4), torch.randn(5, 2, 3), {})

torch_case("torch_lstm_2layer_bidirectional", torch.nn.LSTM(5, 6, num_layers=2, bidirectional=True), torch.randn(4, 3, 5))
torch_case("torch_gru_bidirectional_batch_first", torch.nn.GRU(4, 5, bidirectional=True, batch_first=True), torch.randn(2, 3, 4))
torch_case("torch_rnn_relu_2layer", torch.nn.RNN(3, 4, num_layers=2, nonlinearity="relu"), torch.randn(5, 2, 3))
torch_case("torch_rnn_tanh_bidirectional", torch.nn.RNN(3, 4, bidirectional=True), torch.randn(3, 2, 3))
