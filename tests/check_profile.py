#!/usr/bin/env python3
"""Check a gdcc run --profile JSON (schema gdcc.profile v1, docs/profile.md)
against the --report of the same model and target compiled without
--profile.  Usage: check_profile.py PROFILE.json REPORT.json TARGET [NO_KERNEL...]

Every node the report lists (constants are not listed there: they are data)
must be in exactly one kernel, or in the profile's no_kernel list (views,
empty results) and then in no kernel; NO_KERNEL names the nodes that must be
there.  Exit 0 when all holds, else 1 with the reasons."""
import json
import math
import sys


def main():
    prof_path, rep_path, target = sys.argv[1:4]
    want_no_kernel = set(sys.argv[4:])
    errs = []

    def err(msg):
        errs.append(msg)

    with open(prof_path) as f:
        p = json.load(f)
    with open(rep_path) as f:
        r = json.load(f)
    if p.get("schema") != "gdcc.profile" or p.get("schema_version") != 1:
        err("schema %r version %r, expected gdcc.profile 1" % (p.get("schema"), p.get("schema_version")))
    if p.get("target") != target or r.get("target") != target:
        err("target %r (report %r), expected %r" % (p.get("target"), r.get("target"), target))
    if p.get("model") != r.get("model"):
        err("model %r, the report's %r" % (p.get("model"), r.get("model")))
    for key in ("runs", "clock_ghz", "total_seconds", "run_seconds", "estimated_cycles", "measured_on",
                "kernels", "no_kernel", "timer", "statistic"):
        if key not in p:
            err("no %r" % key)
    if errs:
        print("\n".join(errs))
        return 1
    ks = p["kernels"]
    nk = r["code"]["kernels"]
    if len(ks) != nk:
        err("%d kernels, the report (without --profile) has code.kernels %d" % (len(ks), nk))
    if len(ks) == 0:
        err("no kernels")
    report_nodes = [n["name"] for n in r["nodes"]]
    if len(set(report_nodes)) != len(report_nodes):
        err("the report names a node twice")
    where = {}
    for i, k in enumerate(ks):
        if k.get("index") != i:
            err("kernel %d has index %r" % (i, k.get("index")))
        if k.get("symbol") != "gdcc_kernel_%d" % i:
            err("kernel %d has symbol %r" % (i, k.get("symbol")))
        if not k["nodes"]:
            err("kernel %d holds no node" % i)
        elif k.get("output") != k["nodes"][-1]["name"]:
            err("kernel %d: output %r is not its last node %r" % (i, k.get("output"), k["nodes"][-1]["name"]))
        for n in k["nodes"]:
            where.setdefault(n["name"], []).append(i)
        if not (isinstance(k["seconds"], (int, float)) and k["seconds"] > 0):
            err("kernel %d: time %r is not positive" % (i, k["seconds"]))
        if not (k["min_seconds"] <= k["seconds"] <= k["max_seconds"]):
            err("kernel %d: median %r outside [min %r, max %r]" % (i, k["seconds"], k["min_seconds"], k["max_seconds"]))
        if k["flops"] < 0 or k["bytes"] < 0:
            err("kernel %d: flops %r, bytes %r" % (i, k["flops"], k["bytes"]))
        mc = k["measured_cycles"]
        if mc is None or not math.isclose(mc, k["seconds"] * p["clock_ghz"] * 1e9, rel_tol=1e-3, abs_tol=2):
            err("kernel %d: measured cycles %r, not seconds x clock_ghz" % (i, mc))
        if k["gflops_per_s"] is None or not math.isclose(k["gflops_per_s"], k["flops"] / k["seconds"] / 1e9,
                                                         rel_tol=1e-3, abs_tol=1e-9):
            err("kernel %d: GFLOP/s %r, not flops / seconds" % (i, k["gflops_per_s"]))
    share = sum(k["share"] for k in ks)
    if abs(share - 1) > 0.01:
        err("the shares sum to %r" % share)
    total = sum(k["seconds"] for k in ks)
    if not math.isclose(total, p["total_seconds"], rel_tol=1e-4, abs_tol=1e-8):
        err("total_seconds %r, the kernels' sum %r" % (p["total_seconds"], total))
    nok = {n["name"]: n for n in p["no_kernel"]}
    for name in report_nodes:
        inks = where.get(name, [])
        if name in nok:
            if inks:
                err("node %s is in no_kernel and in kernel(s) %r" % (name, inks))
        elif len(inks) != 1:
            err("node %s is in %d kernels %r, expected exactly one" % (name, len(inks), inks))
    for name in list(where) + list(nok):
        if name not in report_nodes:
            err("node %s of the profile is not in the report" % name)
    for name in want_no_kernel:
        if name not in nok:
            err("node %s is not in no_kernel (%r)" % (name, sorted(nok)))
        elif not nok[name].get("reason"):
            err("node %s in no_kernel without a reason" % name)
    if errs:
        print("\n".join(errs))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
