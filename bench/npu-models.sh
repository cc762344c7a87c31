#!/bin/sh
# Whole models on npu-systolic in gdcc's simulator, at the .md's defaults
# (16 x 16 array, weight stationary): torchvision resnet18 and mobilenet_v2
# (batch 1, 3 x 224 x 224) and the BERT-base layer (1 x 128 x 768), exported
# to ONNX by tests/models/export.py (seeded random weights and BatchNorm
# statistics; the exporter folds each BatchNorm into its convolution).
#
# 1. Each model: `gdcc run MODEL.onnx -t npu-systolic --check --seed 1
#    --report=R.json`; from the report: the device segments' simulated
#    cycles (the sum over segments), the segments, the placement (nodes on
#    the device and on the host, each host op with the .md's reason), the
#    transfers between host and device memory (count, bytes, and what they
#    would cost at the .md's host_link_bytes_per_cycle, read from
#    md/npu-systolic.md: bytes / link rounded up, per transfer) and the
#    device segments' PE utilization (the simulator's: the MACs the array
#    performed, edge tiles padded, over cycles x rows x cols; and the
#    array's utilization while it was busy).
# 2. The convolutions of each ONNX model: every Conv node with its shapes
#    (onnx shape inference), the distinct ones each written as a one-node
#    model.ir (random weights, its constant bias, and a following Relu where
#    the model has one, which gdcc fuses on the array) and run the same way;
#    per layer: the count in the model, simulated cycles and the useful PE
#    utilization = the layer's own MACs / (cycles x rows x cols); then the
#    total weighted by count, sum(MACs) / (sum(cycles) x rows x cols), for
#    the group-1 convolutions (on the array) and, separately, the grouped
#    (depthwise) ones (on the vector unit: the array idles).
#
# Not measured: the host segments' time (the report has the simulator's
# statistics for device segments only; host segments run natively and are not
# timed), the transfers' time (reported by the .md's link rate, not
# simulated: the cycles printed are the device segments' alone), and, in
# part 2, the nodes around the convolutions (mobilenet_v2's Clip (ReLU6)
# after a convolution is a vector pass of its own in the model and is left
# out of the one-node models; so are resnet18's residual adds).  Cycles are
# simulated, so deterministic.  Every run is --check'ed against the
# reference interpreter; a mismatch or failure stops the script (exit 1).
#
#   sh bench/npu-models.sh [GDCC] [MODEL ...]   (from the build folder:
#   sh ../bench/npu-models.sh ./gdcc; MODEL: resnet18 mobilenet_v2
#   bert_layer (the default: all three), or a path to an .onnx file)
# Needs Debian's python3-torch, python3-torchvision, python3-onnx (exit 77
# without them).  About 1.5 minutes for the three models.
set -eu
GDCC=${1:-./gdcc}
[ $# -gt 0 ] && shift
models=${*:-"resnet18 mobilenet_v2 bert_layer"}
here=$(cd "$(dirname "$0")" && pwd)
SRC=$(dirname "$here")
PY=/usr/bin/python3
if ! $PY -c 'import torch, torchvision, onnx' 2>/dev/null; then
	echo "npu-models.sh: needs python3-torch, python3-torchvision and python3-onnx (Debian's /usr/bin/python3)" >&2
	exit 77
fi
MD=$SRC/md/npu-systolic.md
link=$(sed -n 's/^param[[:space:]]*host_link_bytes_per_cycle[[:space:]]*=[[:space:]]*\([0-9][0-9]*\).*/\1/p' "$MD")
[ -n "$link" ] || { echo "npu-models.sh: no host_link_bytes_per_cycle in $MD" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

cat >"$tmp/h.py" <<'PY'
import json, math, os, sys
from collections import Counter, OrderedDict


def load(path):
    return json.load(open(path))


def sims(r):
    s = r.get("simulator") or []
    if not s or not all(x.get("completed") and x.get("ret") == 0 for x in s):
        sys.exit("npu-models.sh: the report has no completed simulator run")
    return s


def summary(report, name, link):
    """one row of part 1's table, and the details below it into DETAILS"""
    r = load(report)
    p = r["placement"]
    s = sims(r)
    a = s[0]["array"]
    pes = a["rows"] * a["cols"]
    cyc = sum(x["cycles"] for x in s)
    macs = sum(x["macs"] for x in s)
    busy = sum(x["array_busy_cycles"] for x in s)
    segs = p["segments"]
    dev = sum(1 for g in segs if not g["host"])
    nodes = p["nodes"]
    ndev = sum(1 for n in nodes if n["runs_on"] == p["device"])
    tr = p["transfers"]
    tb = sum(t["bytes"] for t in tr)
    tc = sum(-(-t["bytes"] // link) for t in tr)
    h2d = [t for t in tr if t["to"] == p["device"]]
    d2h = [t for t in tr if t["from"] == p["device"]]
    print("| %s | %d | %d (%d device, %d host) | %d / %d | %d (%d in, %d out) | %d | %d | %.3f | %.3f |" % (
        name, cyc, len(segs), dev, len(segs) - dev, ndev, len(nodes) - ndev, len(tr), len(h2d), len(d2h), tb, tc,
        macs / (cyc * pes) if cyc else 0, macs / (busy * pes) if busy else 0))
    d = ["%s: array %dx%d %s; device segments:" % (name, a["rows"], a["cols"], a["dataflow"])]
    si = iter(s)
    for g in segs:
        if g["host"]:
            d.append("  seg%d host (%s): not timed" % (g["index"], g["runs_on"]))
        else:
            x = next(si)
            d.append("  seg%d device: %d cycles, %d MACs, PE utilization %.3f (busy %.3f), stalls %s" % (
                g["index"], x["cycles"], x["macs"], x["pe_utilization"], x["array_utilization_busy"],
                ", ".join("%s %d" % kv for kv in x["stalls"].items() if kv[1])))
    host = Counter((n["op"], n["reason"]) for n in nodes if n["runs_on"] != p["device"])
    if host:
        d.append("  on the host (%s):" % p["host"])
        for (op, why), k in host.items():
            d.append("    %s x%d: %s" % (op, k, why))
    else:
        d.append("  on the host: nothing")
    d.append("  transfers: %d host->device, %d bytes; %d device->host, %d bytes; %d cycles at %d B/cycle (not simulated)" % (
        len(h2d), sum(t["bytes"] for t in h2d), len(d2h), sum(t["bytes"] for t in d2h), tc, link))
    open(os.environ["DETAILS"], "a").write("\n".join(d) + "\n")


def convs(onnx_path, outdir):
    """the distinct Conv nodes as one-node models: OUTDIR/cN.ir, and
    OUTDIR/list: one line per layer: id count macs group label"""
    import onnx
    from onnx import shape_inference
    m = shape_inference.infer_shapes(onnx.load(onnx_path))
    g = m.graph
    shapes = {}
    for v in list(g.input) + list(g.value_info) + list(g.output):
        t = v.type.tensor_type
        shapes[v.name] = [d.dim_value for d in t.shape.dim]
    for i in g.initializer:
        shapes[i.name] = list(i.dims)
    consts = {i.name for i in g.initializer}
    users = {}
    for n in g.node:
        for x in n.input:
            users.setdefault(x, []).append(n)
    layers = OrderedDict()
    for n in g.node:
        if n.op_type != "Conv":
            continue
        at = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        if at.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            sys.exit("npu-models.sh: %s: auto_pad is not handled" % n.name)
        x, w = shapes[n.input[0]], shapes[n.input[1]]
        if len(x) != 4 or not all(x) or n.input[1] not in consts:
            sys.exit("npu-models.sh: %s: not a 2-D convolution with constant weights and known shapes" % n.name)
        b = len(n.input) > 2 and n.input[2] != ""
        if b and n.input[2] not in consts:
            sys.exit("npu-models.sh: %s: its bias is not a constant" % n.name)
        u = users.get(n.output[0], [])
        relu = len(u) == 1 and u[0].op_type == "Relu" and n.output[0] not in [o.name for o in g.output]
        k = list(at.get("kernel_shape", w[2:]))
        s = list(at.get("strides", [1, 1]))
        p = list(at.get("pads", [0, 0, 0, 0]))
        dl = list(at.get("dilations", [1, 1]))
        grp = at.get("group", 1)
        y = [x[0], w[0]] + [(x[2 + i] + p[i] + p[2 + i] - dl[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
        key = (tuple(x), tuple(w), tuple(k), tuple(s), tuple(p), tuple(dl), grp, b, relu)
        if key in layers:
            layers[key]["count"] += 1
            continue
        macs = y[0] * y[1] * (x[1] // grp) * k[0] * k[1] * y[2] * y[3]
        # the node's name without the components that prefix the next one
        # (/layer1/layer1.0/conv1/Conv: layer1.0/conv1)
        parts = [c for c in n.name.split("/") if c and c != "Conv"] or [n.name]
        short = "/".join(c for i, c in enumerate(parts) if i + 1 == len(parts) or not parts[i + 1].startswith(c))
        label = "%s %dx%d/%d %d->%d @%dx%d%s%s%s%s" % (
            short, k[0], k[1], s[0], x[1], w[0], x[2], x[3],
            " p%d" % p[0] if any(p) else "", " dw" if grp == x[1] == w[0] and grp > 1 else (" g%d" % grp if grp > 1 else ""),
            " d%d" % dl[0] if dl != [1, 1] else "", " +relu" if relu else "")
        layers[key] = {"count": 1, "macs": macs, "group": grp, "label": label, "x": x, "w": w,
                       "k": k, "s": s, "p": p, "dl": dl, "b": b, "relu": relu}
    lst = []
    for i, L in enumerate(layers.values()):
        x, w = L["x"], L["w"]
        ops = "x, w, b" if L["b"] else "x, w"
        ir = ["graph c%d {" % i,
              "  input x : f32[%s]" % ", ".join(map(str, x)),
              "  const w : f32[%s] = normal(seed=1, mean=0, std=0.05)" % ", ".join(map(str, w))]
        if L["b"]:
            ir.append("  const b : f32[%d] = normal(seed=2, mean=0, std=0.1)" % w[0])
        ir.append("  y = conv(%s, kernel_shape=[%s], strides=[%s], pads=[%s], dilations=[%s], group=%d)" % (
            ops, ", ".join(map(str, L["k"])), ", ".join(map(str, L["s"])), ", ".join(map(str, L["p"])),
            ", ".join(map(str, L["dl"])), L["group"]))
        if L["relu"]:
            ir.append("  r = relu(y)")
        ir += ["  output %s" % ("r" if L["relu"] else "y"), "}"]
        open(os.path.join(outdir, "c%d.ir" % i), "w").write("\n".join(ir) + "\n")
        lst.append("c%d %d %d %d %s" % (i, L["count"], L["macs"], L["group"], L["label"]))
    open(os.path.join(outdir, "list"), "w").write("\n".join(lst) + "\n" if lst else "")


def convrow(report, cid, count, macs, group, label, rows):
    """one layer's row; its figures appended to ROWS for the totals"""
    r = load(report)
    s = sims(r)
    pes = s[0]["array"]["rows"] * s[0]["array"]["cols"]
    cyc = sum(x["cycles"] for x in s)
    amacs = sum(x["macs"] for x in s)
    count, macs, group = int(count), int(macs), int(group)
    busy = sum(x["array_busy_cycles"] for x in s)
    where = "array" if amacs else "vector unit"
    print("| %s | %s | %d | %d | %d | %.3f | %.3f | %.2f | %s |" % (
        cid, label.replace("->", "→"), count, macs, cyc, macs / (cyc * pes),
        amacs / (cyc * pes), busy / cyc, where))
    open(rows, "a").write("%d %d %d %d %d\n" % (count, macs, cyc, group, pes))


def convtotal(rows, name, modelrep):
    L = [list(map(int, l.split())) for l in open(rows) if l.strip()]
    if not L:
        return
    pes = L[0][4]
    whole = sum(x["cycles"] for x in sims(load(modelrep))) if modelrep != "-" else 0
    parts = [("group-1 convolutions", [l for l in L if l[3] == 1]), ("grouped (depthwise)", [l for l in L if l[3] > 1])]
    if parts[1][1]:
        parts.append(("all convolutions", L))
    for what, ls in parts:
        if not ls:
            continue
        m = sum(c * mc for c, mc, _, _, _ in ls)
        cy = sum(c * y for c, _, y, _, _ in ls)
        share = " (%.0f%% of the whole model's device cycles)" % (100.0 * cy / whole) if whole else ""
        print("%s, %s: %d layers, %d MACs, %d cycles%s; useful PE utilization %.3f" % (
            name, what, sum(l[0] for l in ls), m, cy, share, m / (cy * pes)))


f = sys.argv[1]
a = sys.argv[2:]
if f == "summary":
    summary(a[0], a[1], int(a[2]))
elif f == "convs":
    convs(a[0], a[1])
elif f == "convrow":
    convrow(*a)
elif f == "convtotal":
    convtotal(*a)
PY

# check: run gdcc, fail loudly on a failure or a mismatch
run() { # MODEL REPORT WHAT
	if ! "$GDCC" run "$1" -t npu-systolic --check --seed 1 --report="$2" </dev/null >"$tmp/out" 2>&1 ||
		grep -q MISMATCH "$tmp/out" || ! grep -q ': ok$' "$tmp/out"; then
		cat "$tmp/out" >&2
		echo "npu-models.sh: $3: gdcc run -t npu-systolic --check failed" >&2
		exit 1
	fi
}

# the models: export the known ones (one process), take .onnx paths as they are
mkdir "$tmp/m"
exp=""
for m in $models; do
	case $m in
	*.onnx) [ -f "$m" ] || { echo "npu-models.sh: no $m" >&2; exit 1; } ;;
	resnet18 | mobilenet_v2 | bert_layer) exp="$exp $m" ;;
	*) echo "npu-models.sh: unknown model '$m' (resnet18, mobilenet_v2, bert_layer, or FILE.onnx)" >&2; exit 1 ;;
	esac
done
if [ -n "$exp" ]; then
	echo "exporting$exp (tests/models/export.py)" >&2
	# shellcheck disable=SC2086
	$PY "$SRC/tests/models/export.py" "$tmp/m" $exp >&2
fi
path() { case $1 in *.onnx) echo "$1" ;; *) echo "$tmp/m/$1.onnx" ;; esac; }
name() { basename "$1" .onnx; }

export DETAILS="$tmp/details"
: >"$DETAILS"
echo "## Whole models (npu-systolic, the .md's defaults; simulated cycles of the device segments)"
echo
echo "| model | device cycles | segments | nodes device / host | transfers | bytes | link cycles at $link B/cycle | PE utilization | PE util. while busy |"
echo "|---|---|---|---|---|---|---|---|---|"
for m in $models; do
	n=$(name "$m")
	echo "$n: gdcc run -t npu-systolic --check" >&2
	run "$(path "$m")" "$tmp/$n.json" "$n"
	$PY "$tmp/h.py" summary "$tmp/$n.json" "$n" "$link"
done
echo
cat "$DETAILS"

for m in $models; do
	n=$(name "$m")
	mkdir "$tmp/$n.c"
	$PY "$tmp/h.py" convs "$(path "$m")" "$tmp/$n.c"
	[ -s "$tmp/$n.c/list" ] || continue
	total=$(wc -l <"$tmp/$n.c/list")
	echo
	echo "## $n: its convolutions, each as a one-node model"
	echo
	echo "(useful: the layer's MACs / (cycles x PEs); array: the same with the MACs the array performed, edge"
	echo "tiles padded; busy: the share of the cycles the array was busy)"
	echo
	echo "| id | layer (first node; kernel/stride, channels, input) | count | MACs | cycles | useful | array | busy | runs on |"
	echo "|---|---|---|---|---|---|---|---|---|"
	: >"$tmp/$n.rows"
	i=0
	while read -r cid count macs group label; do
		i=$((i + 1))
		echo "$n: conv $i/$total $label" >&2
		run "$tmp/$n.c/$cid.ir" "$tmp/r.json" "$n $cid ($label)"
		$PY "$tmp/h.py" convrow "$tmp/r.json" "$cid" "$count" "$macs" "$group" "$label" "$tmp/$n.rows"
	done <"$tmp/$n.c/list"
	echo
	$PY "$tmp/h.py" convtotal "$tmp/$n.rows" "$n" "$tmp/$n.json"
done
