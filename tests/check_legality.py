#!/usr/bin/python3
"""Checks one target's legality exports: the JSON validates against
docs/legality.schema.json; it has exactly one deciding (unconditional) entry
for every op x declared dtype of `gdcc --list-ops`; CSV and Markdown hold
the same rows (with the same strategy, the last column).

usage: check_legality.py SCHEMA OPS_LIST JSON CSV MD
"""
import csv
import json
import sys

import jsonschema


def main():
    schema_path, ops_path, json_path, csv_path, md_path = sys.argv[1:]
    schema = json.load(open(schema_path))
    doc = json.load(open(json_path))
    jsonschema.validate(doc, schema)
    ops = [line.split()[0] for line in open(ops_path) if line.strip() and not line.startswith(" ")]
    ops = [o for o in ops if o != "constant"]
    dtypes = doc["target"]["dtypes"]
    deciding = {}
    for e in doc["entries"]:
        if e["constraint"] is None:
            key = (e["op"], e["dtype"])
            assert key not in deciding, f"two unconditional rows for {key}"
            deciding[key] = e
    for op in ops:
        for dt in dtypes:
            assert (op, dt) in deciding, f"no deciding row for {op} {dt}"
    rows = list(csv.DictReader(open(csv_path)))
    assert len(rows) == len(doc["entries"]), (len(rows), len(doc["entries"]))
    for r, e in zip(rows, doc["entries"]):
        assert (r["op"], r["dtype"], r["action"]) == (e["op"], e["dtype"], e["action"]), (r, e)
        assert r["target"] == doc["target"]["name"]
        assert r["strategy"] == (e["strategy"] or ""), (r, e)
    md_rows = [l for l in open(md_path) if l.startswith("| ") and not l.startswith("| op ")]
    assert len(md_rows) == len(doc["entries"]), (len(md_rows), len(doc["entries"]))
    for l, e in zip(md_rows, doc["entries"]):
        # (the last column: the strategy; no strategy name has a '|')
        assert l.rstrip("\n").rstrip(" |").endswith(" " + e["strategy"]) if e["strategy"] else l.rstrip("\n").endswith("|  |"), (l, e)
    print(f"{doc['target']['name']}: {len(doc['entries'])} entries, "
          f"{sum(1 for e in deciding.values() if e['action'] == 'native')} native, valid")


if __name__ == "__main__":
    main()
