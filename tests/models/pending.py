#!/usr/bin/python3
"""pending.py [torchvision.md]: the cells of tests/models/torchvision.md not run yet
("—"), one line each, "MODEL OPSET TARGET", in the file's order (by parameter
count), so that a sweep can go on from where the file stands:

    python3 tests/models/pending.py | while read m o t; do
        MODELS=$m MODELS_OPSETS=$o MODELS_TARGETS=$t make -C build models-check
    done

(check.sh also checks `gdcc import` of each model it runs.)"""
import os
import sys

path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "torchvision.md")
head = None
for line in open(path, encoding="utf-8"):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if line.startswith("| model"):
        head = cells
        continue
    if head is None or not line.startswith("| ") or len(cells) != len(head):
        continue
    for h, c in zip(head[1:], cells[1:]):
        if c == "—":
            opset, target = h.split(" ", 1)
            print(cells[0], opset.removeprefix("op"), target)
