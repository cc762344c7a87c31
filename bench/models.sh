#!/bin/sh
# The example models: the compiled x86-avx2 program (TARGET=x86-avx512 for
# that target) against the reference interpreter, on the same seeded inputs, in the same run (median of 5
# alternating runs each; both as whole processes, so both include start-up
# and reading/writing their tensors).  usage: bench/models.sh [GDCC] [SRCDIR]
set -eu
GDCC=${1:-./gdcc}
SRC=${2:-$(cd "$(dirname "$0")/.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pin=""
command -v taskset >/dev/null && pin="taskset -c 1"
ms() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
rt=$("$GDCC" --version >/dev/null; ls -d "$(dirname "$GDCC")/runtime" 2>/dev/null || true)
for m in mlp resnet_block bert_layer; do
	model="$SRC/examples/$m.ir"
	"$GDCC" -S -t "${TARGET:-x86-avx2}" "$model" -o "$tmp/$m.s"
	cc -o "$tmp/$m" "$tmp/$m.s" "$rt/harness-x86_64.o"
	# argument list from the manifest: inputs and outputs as raw files
	args=$(/usr/bin/python3 - "$tmp/$m.s.json" "$tmp" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); d = sys.argv[2]
out = []
for i in m["inputs"]:
    open(f"{d}/in{i['arg']}.bin", "wb").write(bytes(i["bytes"]))
    out.append(f"i:{d}/in{i['arg']}.bin:{i['bytes']}")
for o in m["outputs"]:
    out.append(f"o:{d}/out{o['arg']}.bin:{o['bytes']}")
out.append(f"w:{m['workspace']['bytes']}")
print(" ".join(out))
PY
)
	: >"$tmp/tg"; : >"$tmp/tr"
	for i in 1 2 3 4 5; do
		t0=$(ms); $pin "$tmp/$m" $args; t1=$(ms)
		$pin "$GDCC" run "$model" --seed 1 --output-dir "$tmp" >/dev/null; t2=$(ms)
		echo $(( (t1 - t0) / 1000 )) >>"$tmp/tg"; echo $(( (t2 - t1) / 1000 )) >>"$tmp/tr"
	done
	g=$(median <"$tmp/tg"); r=$(median <"$tmp/tr")
	echo "$m: compiled ${TARGET:-x86-avx2} ${g} us, reference interpreter ${r} us, speed-up $(awk "BEGIN {printf \"%.1f\", $r / $g}")x"
done
