#!/usr/bin/python3
"""gdcc's x86 code (x86-avx2, or --target=x86-avx512) against PyTorch eager, in one process.

  bench/pytorch_bench.py [--gdcc=PATH] [--gdcc-flags=FLAGS | --compare=FLAGS,FLAGS...]
                         [--models=NAME,...] [--seconds=S] [--workdir=DIR] [--keep]
                         [--json=FILE] [-v]

For each model: export it to ONNX (eval mode, seeded weights and BatchNorm
statistics), compile it with `gdcc -S MODEL.onnx -t x86-avx2 FLAGS -o M.s
--report=M.report.json`, link `gcc -shared -o M.so M.s`, load it with ctypes,
allocate its arguments from the manifest M.s.json (inputs, outputs, then the
workspace, each 64-byte aligned), check its output against PyTorch's (|out -
ref| <= 1e-4 + 1e-3 |ref|, elementwise) and time gdcc_entry against the eager
forward (torch.no_grad, one thread) in alternating rounds of N warm calls each,
the order rotated every round; the figure is the median over rounds of the
time per call, the ratio is gdcc / PyTorch from the same rounds.

--compare=A,B,...  several gdcc builds of each model (flag sets separated by
                   commas, flags inside one set by spaces; an empty set means no
                   flags: `--compare=,-O2`), all timed in the same rounds.
--seconds=S        the time budget of one model's timing (default 15): rounds
                   (3..11, odd) and calls per round N are chosen from a first
                   call of each contender.

The bundled examples with a benchmark model's architecture and shapes
(examples/resnet_block.ir, mlp.ir, bert_layer.ir) are compiled from their .ir
and timed in the same rounds against that model's PyTorch forward (their own
weights, so their outputs are not compared here; --no-examples leaves them out).

Pinning and thread variables are left to the caller (bench/pytorch.sh).
A model that fails to export, compile, link, run or match is reported with the
reason; the exit status is then 1.
"""
import argparse
import ctypes
import gc
import importlib.util
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
RTOL, ATOL = 1e-3, 1e-4
MODELS = ["resnet18", "mobilenet_v2", "resnet_block", "mlp", "bert_layer"]
# The bundled examples with the architecture and shapes of a benchmark model
# (their own seeded weights; mlp.ir also has a softmax output): each also
# timed against that model's PyTorch forward, in the same rounds.
EXAMPLES = {"resnet_block": "resnet_block.ir", "mlp": "mlp.ir", "bert_layer": "bert_layer.ir"}
DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "bool": np.bool_,
          "f16": np.float16, "i8": np.int8, "u8": np.uint8, "i16": np.int16}


def load_export_module(srcdir):
    """tests/models/export.py, for its build() and OPSET."""
    path = os.path.join(srcdir, "tests", "models", "export.py")
    spec = importlib.util.spec_from_file_location("gdcc_models_export", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build_model(name, export_mod):
    """(module, input shape) for one benchmark model; seeded."""
    torch.manual_seed(1)
    if name == "resnet_block":
        # conv3x3-bn-relu-conv3x3-bn, + identity, relu: torchvision's own basic block
        model, shape = torchvision.models.resnet.BasicBlock(64, 64), (1, 64, 56, 56)
    elif name == "mlp":
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        shape = (64, 784)
    else:
        model, shape = export_mod.build(name)
    # random BatchNorm statistics and affine terms, so that folding them matters
    gen = torch.Generator().manual_seed(3)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.copy_(torch.rand(m.running_mean.shape, generator=gen) - 0.5)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) + 0.5)
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) + 0.5)
                m.bias.copy_(0.4 * torch.rand(m.bias.shape, generator=gen) - 0.2)
    model.eval()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(7))
    return model, x


class Failure(Exception):
    pass


def run_cmd(cmd, what):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        lines = [ln for ln in r.stdout.strip().splitlines() if ln.strip()]
        tail = " | ".join(lines[-3:]) if lines else "(no output)"
        raise Failure(f"{what} failed (exit {r.returncode}): {tail}")
    return r.stdout


def aligned(nbytes, dtype, shape):
    """A zeroed numpy array of dtype/shape whose data is 64-byte aligned."""
    raw = np.zeros(max(nbytes, 1) + 64, dtype=np.uint8)
    off = (-raw.ctypes.data) % 64
    buf = raw[off:off + nbytes]
    if dtype is None:
        return buf
    return buf.view(dtype).reshape(shape)


class GdccBuild:
    """One model compiled with one flag set, loaded and ready to call."""

    def __init__(self, gdcc, flags, onnx_path, stem, target="x86-avx2"):
        self.flags = flags
        self.asm = stem + ".s"
        self.report_path = stem + ".report.json"
        t0 = time.perf_counter()
        run_cmd([gdcc, "-S", onnx_path, "-t", target, *flags, "-o", self.asm, "--report=" + self.report_path],
                "gdcc -S " + " ".join(flags))
        self.compile_s = time.perf_counter() - t0
        with open(self.asm + ".json") as f:
            self.manifest = json.load(f)
        self.report = {}
        try:
            with open(self.report_path) as f:
                self.report = json.load(f)
        except (OSError, ValueError):
            pass
        so = stem + ".so"
        run_cmd(["gcc", "-shared", "-o", so, self.asm], "gcc -shared")
        self.lib = ctypes.CDLL(so)
        entry = getattr(self.lib, self.manifest.get("entry", "gdcc_entry"))
        entry.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        entry.restype = ctypes.c_int
        self.entry = entry
        man = self.manifest
        nargs = man["nargs"]
        self.arrays = [None] * nargs
        for v in man["inputs"] + man["outputs"]:
            dt = DTYPES.get(v["dtype"])
            if dt is None:
                raise Failure(f"unknown dtype {v['dtype']} of {v['name']} in the manifest")
            self.arrays[v["arg"]] = aligned(v["bytes"], dt, tuple(v["shape"]))
        ws = man.get("workspace", {})
        self.arrays[ws.get("arg", nargs - 1)] = aligned(int(ws.get("bytes", 0)), None, None)
        if any(a is None for a in self.arrays):
            raise Failure("the manifest does not describe every argument")
        self.argv = (ctypes.c_void_p * nargs)(*[a.ctypes.data for a in self.arrays])

    def set_input(self, x):
        ins = self.manifest["inputs"]
        if len(ins) != 1:
            raise Failure(f"{len(ins)} inputs in the manifest, the model has 1")
        a = self.arrays[ins[0]["arg"]]
        if tuple(a.shape) != tuple(x.shape):
            raise Failure(f"input shape {list(a.shape)} in the manifest, the model's is {list(x.shape)}")
        a[...] = x

    def output(self):
        outs = self.manifest["outputs"]
        if len(outs) != 1:
            raise Failure(f"{len(outs)} outputs in the manifest, the model has 1")
        return self.arrays[outs[0]["arg"]]

    def __call__(self):
        st = self.entry(self.argv)
        if st != 0:
            raise Failure(f"gdcc_entry returned {st}")

    def stat(self, *keys):
        """A figure from the compilation report (or the manifest), None if absent."""
        for src in (self.report, self.manifest):
            d = src
            for k in keys:
                d = d.get(k) if isinstance(d, dict) else None
            if d is not None:
                return d
        return None

    def nodes(self):
        n = self.report.get("nodes")
        return len(n) if isinstance(n, list) else None

    def groups(self):
        """The kernels the fuse pass formed; when it did not run, every
        node is its own kernel."""
        for p in self.report.get("passes", []) if isinstance(self.report.get("passes"), list) else []:
            if p.get("name") == "fuse":
                return p.get("kernels") if p.get("ran") else self.nodes()
        return None


def compare(out, ref):
    """(ok, text) by compare.py's rule."""
    if out.shape != ref.shape:
        return False, f"output shape {list(out.shape)} != PyTorch's {list(ref.shape)}"
    o, r = out.astype(np.float64), ref.astype(np.float64)
    err = np.abs(o - r)
    bad = int((err > ATOL + RTOL * np.abs(r)).sum()) + (0 if np.isfinite(o).all() else 1)
    text = f"max |diff| {err.max() if err.size else 0:.2g}"
    if bad:
        text = f"MISMATCH: {bad} of {ref.size} outside {ATOL:g} + {RTOL:g} |ref|, " + text
    return bad == 0, text


def time_rounds(contenders, budget, max_rounds=11, min_rounds=3):
    """contenders: list of callables.  Returns (per-call medians, rounds, N)."""
    # warm-up: at least one call each, up to ~0.3 s each, and a per-call estimate
    est = []
    for fn in contenders:
        fn()
        t0 = time.perf_counter()
        fn()
        t = time.perf_counter() - t0
        k = 1
        while k < 20 and (time.perf_counter() - t0) < 0.3:
            fn()
            k += 1
        est.append((time.perf_counter() - t0) / k if k > 1 else t)
    per_set = sum(est)
    rounds = int(max(min_rounds, min(max_rounds, budget / max(per_set, 1e-9))))
    if rounds % 2 == 0:
        rounds -= 1
    rounds = max(rounds, min_rounds)
    n = max(1, int(budget / (rounds * per_set)))
    times = [[] for _ in contenders]
    gc.disable()
    try:
        for r in range(rounds):
            order = list(range(len(contenders)))
            order = order[r % len(order):] + order[:r % len(order)]
            for i in order:
                fn = contenders[i]
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                times[i].append((time.perf_counter() - t0) / n)
    finally:
        gc.enable()
    return [statistics.median(t) for t in times], rounds, n


def fmt(v, spec="{}"):
    return "-" if v is None else spec.format(v)


def main():
    ap = argparse.ArgumentParser(description="gdcc x86-avx2 against PyTorch eager (see the module docstring)")
    ap.add_argument("--gdcc", default="./gdcc", help="the compiler (default ./gdcc)")
    ap.add_argument("--target", default="x86-avx2", help="the gdcc target (default x86-avx2; x86-avx512 where the CPU runs it)")
    ap.add_argument("--gdcc-flags", default="", help="extra gdcc flags, one set (e.g. --gdcc-flags=-O0)")
    ap.add_argument("--compare", default=None, help="several flag sets, comma-separated (e.g. --compare=-O0,-O2)")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated, of " + ", ".join(MODELS))
    ap.add_argument("--seconds", type=float, default=15.0, help="timing budget per model (default 15)")
    ap.add_argument("--srcdir", default=os.path.dirname(HERE), help="gdcc's source tree (for tests/models/export.py)")
    ap.add_argument("--workdir", default=None, help="where exports and builds go (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--json", default=None, help="also write the results as JSON to this file")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the report's per-pass figures too")
    ap.add_argument("--no-examples", action="store_true",
                    help="do not also time the bundled examples (examples/*.ir) against their models' PyTorch forward")
    a = ap.parse_args()

    if a.compare is not None:
        flagsets = [shlex.split(s) for s in a.compare.split(",")]
    else:
        flagsets = [shlex.split(a.gdcc_flags)]
    models = [m for m in a.models.split(",") if m]
    for m in models:
        if m not in MODELS:
            ap.error(f"unknown model '{m}' (of {', '.join(MODELS)})")
    gdcc = os.path.abspath(a.gdcc) if os.path.sep in a.gdcc else (shutil.which(a.gdcc) or a.gdcc)

    torch.set_num_threads(1)
    export_mod = load_export_module(a.srcdir)
    opset = getattr(export_mod, "OPSET", 17)
    work = a.workdir or tempfile.mkdtemp(prefix="gdcc-pytorch-")
    os.makedirs(work, exist_ok=True)
    label = lambda fl: " ".join(fl) if fl else "(none)"
    print(f"gdcc: {gdcc} -t {a.target}; flag sets: {', '.join(label(f) for f in flagsets)}; "
          f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); opset {opset}; "
          f"tolerance {ATOL:g} + {RTOL:g} |ref|; budget {a.seconds:g} s per model", flush=True)

    rows, failed = [], 0
    for name in models:
        print(f"\n== {name}", flush=True)
        try:
            model, x = build_model(name, export_mod)
            onnx_path = os.path.join(work, name + ".onnx")
            with torch.no_grad():
                ref = model(x).numpy()
                torch.onnx.export(model, (x,), onnx_path, opset_version=opset, input_names=["input"],
                                  output_names=["output"], do_constant_folding=True)
        except Exception as e:  # export problems are results too
            print(f"  export failed: {e}")
            rows.append({"model": name, "flags": None, "status": f"export failed: {e}"})
            failed += 1
            continue
        xn = x.numpy()
        builds = []
        for k, fl in enumerate(flagsets):
            row = {"model": name, "flags": label(fl), "status": "ok"}
            rows.append(row)
            try:
                b = GdccBuild(gdcc, fl, onnx_path, os.path.join(work, f"{name}.v{k}"), a.target)
                row.update(compile_s=b.compile_s, nodes=b.nodes(), groups=b.groups(), kernels=b.stat("code", "kernels"),
                           workspace_bytes=b.stat("code", "workspace_bytes") or b.stat("workspace", "bytes"),
                           instructions=b.stat("code", "instructions"))
                b.set_input(xn)
                b()
                ok, text = compare(b.output(), ref)
                row["check"] = text
                print(f"  [{label(fl)}] compiled in {b.compile_s:.2f} s, {text}")
                if a.verbose:
                    for p in b.report.get("passes", []) if isinstance(b.report.get("passes"), list) else []:
                        extra = {k2: v for k2, v in p.items() if k2 not in ("name",)}
                        print(f"      pass {p.get('name', '?')}: {extra}")
                if not ok:
                    raise Failure(text)
                builds.append((row, b))
            except Failure as e:
                row["status"] = str(e)
                print(f"  [{label(fl)}] {e}")
                failed += 1
        if not builds:
            continue
        if name in EXAMPLES and not a.no_examples:
            # the example program (its own weights: no output check; its
            # results are checked by the test suite's run --check)
            ex = os.path.join(a.srcdir, "examples", EXAMPLES[name])
            row = {"model": name, "flags": "examples/" + EXAMPLES[name], "status": "ok"}
            rows.append(row)
            try:
                b = GdccBuild(gdcc, flagsets[0], ex, os.path.join(work, f"{name}.example"), a.target)
                row.update(compile_s=b.compile_s, nodes=b.nodes(), groups=b.groups(), kernels=b.stat("code", "kernels"),
                           workspace_bytes=b.stat("code", "workspace_bytes") or b.stat("workspace", "bytes"))
                b.set_input(xn)
                b()
                print(f"  [{row['flags']}] compiled in {b.compile_s:.2f} s (its own weights: not compared)")
                builds.append((row, b))
            except Failure as e:
                row["status"] = str(e)
                print(f"  [{row['flags']}] {e}")
                failed += 1
        try:
            with torch.no_grad():
                fwd = lambda: model(x)
                meds, rounds, n = time_rounds([b for _, b in builds] + [fwd], a.seconds)
        except Failure as e:  # a run that fails while timed
            for row, _ in builds:
                row["status"] = str(e)
            failed += 1
            continue
        t_torch = meds[-1]
        for (row, _), t in zip(builds, meds[:-1]):
            row.update(gdcc_ms=t * 1e3, torch_ms=t_torch * 1e3, ratio=t / t_torch, rounds=rounds, calls=n,
                       vs_first=t / meds[0])
            print(f"  [{row['flags']}] gdcc {t * 1e3:.3f} ms, PyTorch {t_torch * 1e3:.3f} ms, "
                  f"ratio {t / t_torch:.2f} ({rounds} rounds x {n} calls)", flush=True)

    several = len(flagsets) > 1
    cols = ["model", "flags", "gdcc ms", "PyTorch ms", "ratio"] + (["vs first"] if several else []) + \
           ["nodes", "groups", "lowered", "workspace B", "compile s", "rounds×N"]
    table = []
    for r in rows:
        ok = r["status"] == "ok" and "gdcc_ms" in r
        table.append([r["model"], r["flags"] or "-",
                      fmt(r.get("gdcc_ms"), "{:.3f}"), fmt(r.get("torch_ms"), "{:.3f}"),
                      fmt(r.get("ratio"), "{:.2f}")] + ([fmt(r.get("vs_first"), "{:.2f}")] if several else []) +
                     [fmt(r.get("nodes")), fmt(r.get("groups")), fmt(r.get("kernels")), fmt(r.get("workspace_bytes")),
                      fmt(r.get("compile_s"), "{:.2f}"), f"{r['rounds']}×{r['calls']}" if ok else "-"])
    width = [max(len(c), *(len(t[i]) for t in table)) if table else len(c) for i, c in enumerate(cols)]
    print("\nratio = gdcc / PyTorch (below 1: gdcc faster); medians over rounds, same process" +
          ("; vs first = gdcc time / the first flag set's that ran" if several else ""))
    print("  ".join(c.ljust(w) for c, w in zip(cols, width)))
    for t, r in zip(table, rows):
        line = "  ".join(v.ljust(w) for v, w in zip(t, width))
        if r["status"] != "ok":
            line += "  FAILED: " + r["status"]
        print(line.rstrip())
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"torch": torch.__version__, "gdcc": gdcc, "rows": rows}, f, indent=1)
    if not a.workdir and not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    elif not a.workdir:
        print(f"kept {work}")
    if failed:
        print(f"\n{failed} build(s) failed or mismatched")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
