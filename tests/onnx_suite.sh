#!/bin/sh
# The ONNX backend test suite (Debian's libonnx-testdata) through gdcc: each
# case imported, compiled, run on test_data_set_0's inputs and compared with
# its outputs by ONNX's rule (|out - ref| <= 1e-7 + 1e-3 |ref|, same dtype),
# on the reference interpreter and on each target.  Integer inputs (shapes)
# are specialized to their test values: gdcc's shapes are static.
#
#   ONNX_CASES    a file listing cases (folder/name), or "all" for every case of
#                 the four folders (default: tests/onnx/tier1.txt, the Tier-1 cases)
#   ONNX_TARGETS  default: "reference x86-avx2 riscv-rvv npu-systolic" (riscv-rvv at VLEN 256,
#                 skipped without qemu; npu-systolic: the simulator and the host)
#   ONNX_RESULTS  the JSON Lines results (default tests/onnx-results.jsonl)
#   ONNX_ARGS     more options for `gdcc run` on the targets (e.g. -O0)
#   JOBS          cases at a time (default 2)
#   ONNX_REDUCE   1 (default): every fail or crash on a target is imported to
#                 model.ir and minimized with `gdcc reduce` (docs/testing.md);
#                 the smallest failing model is recorded as "reduced" in the
#                 results, under ONNX_REDUCED (default tests/onnx-reduced/)
#
# Each case is pass, fail (a wrong answer or a run failure), unsupported
# (import or lowering says why) or crash; exit 1 on any fail or crash.
# The full run: ONNX_CASES=all sh tests/onnx_suite.sh
set -u
GDCC=${GDCC:-./gdcc}
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
DATA=${ONNX_DATA:-/usr/share/libonnx-testdata/data}
JOBS=${JOBS:-2}
if [ ! -d "$DATA" ]; then
	echo "onnx: SKIP: no $DATA (apt-get install libonnx-testdata)"
	exit 77
fi
case $GDCC in /*) ;; *) GDCC=$(pwd)/$GDCC ;; esac
targets=${ONNX_TARGETS:-"reference x86-avx2 riscv-rvv npu-systolic"}
if ! command -v qemu-riscv64 >/dev/null 2>&1 || ! command -v riscv64-linux-gnu-gcc >/dev/null 2>&1; then
	targets=$(echo "$targets" | sed 's/riscv-rvv//')
	echo "onnx: riscv-rvv not run: no qemu-riscv64 or cross gcc"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
list=${ONNX_CASES:-$SRCDIR/tests/onnx/tier1.txt}
if [ "$list" = all ]; then
	(cd "$DATA" && ls -d node/* pytorch-converted/* pytorch-operator/* simple/* 2>/dev/null) >"$tmp/cases"
else
	grep -v '^#' "$list" | awk 'NF' >"$tmp/cases"
fi
RESULTS=${ONNX_RESULTS:-tests/onnx-results.jsonl}
mkdir -p "$(dirname "$RESULTS")"
REDUCED=${ONNX_REDUCED:-tests/onnx-reduced}
case $REDUCED in /*) ;; *) REDUCED=$(pwd)/$REDUCED ;; esac
REDUCE=${ONNX_REDUCE:-1}
"$GDCC" reduce --help >/dev/null 2>&1 || { [ "$REDUCE" = 1 ] && echo "onnx: failures not reduced: this gdcc has no 'reduce'"; REDUCE=0; }

cat >"$tmp/one.sh" <<'EOS'
c=$1
t=$2
d="$DATA/$c"
out="$TMPD/$(echo "$c.$t" | tr '/' '_')"
set --
case $t in
reference) ;;
riscv-rvv) set -- -t riscv-rvv --vlen 256 $ONNX_ARGS ;;
*) set -- -t "$t" $ONNX_ARGS ;;
esac
if [ ! -f "$d/model.onnx" ] || [ ! -d "$d/test_data_set_0" ]; then
	printf 'unsupported\tthe case has no model.onnx or test_data_set_0\n' >"$out"
	exit 0
fi
timeout 120 "$GDCC" run "$d/model.onnx" "$@" --onnx-test "$d/test_data_set_0" >"$out.o" 2>"$out.e" </dev/null
rc=$?
reason=$(grep -m1 'error:' "$out.e" | sed 's/^[^ ]*error: //' | tr '\t\n' '  ' | cut -c1-300)
case $rc in
0) printf 'pass\t\n' >"$out" ;;
4) printf 'fail\t%s\n' "$(grep -m1 MISMATCH "$out.o" | tr '\t' ' ')" >"$out" ;;
1) if grep -q 'not supported\|dynamic\|cannot run on\|does not lower\|is unsupported on\|not known when compiling\|no direct lowering\|ONNX data type' "$out.e"; then
	printf 'unsupported\t%s\n' "$reason" >"$out"
   else
	printf 'fail\t%s\n' "$reason" >"$out"
   fi ;;
3) printf 'fail\t%s\n' "$reason" >"$out" ;;
*) printf 'crash\texit status %s %s\n' "$rc" "$reason" >"$out" ;;
esac
# A failure on a target: the smallest model.ir that still fails, by
# `gdcc reduce` over the imported model (random inputs: a wrong pattern
# shows on any data), recorded beside the result.
st=$(cut -f1 "$out")
if [ "$REDUCE" = 1 ] && [ "$t" != reference ] && { [ "$st" = fail ] || [ "$st" = crash ]; }; then
	rd="$REDUCED/$(echo "$c.$t" | tr '/' '_')"
	mkdir -p "$rd"
	if "$GDCC" import "$d/model.onnx" -o "$rd/model.ir" >"$rd/import.log" 2>&1; then
		if [ "$st" = crash ]; then set -- --crash -- "$GDCC" run {} "$@"; else
			case $t in riscv-rvv) set -- --mismatch=riscv-rvv --vlen=256 ;; *) set -- --mismatch="$t" ;; esac
		fi
		timeout 600 "$GDCC" reduce "$rd/model.ir" "$@" -o "$rd/reduced.ir" >"$rd/reduce.log" 2>&1 &&
			printf '%s' "$rd/reduced.ir" >"$out.reduced"
	fi
fi
EOS
ONNX_ARGS=${ONNX_ARGS:-}
export GDCC DATA REDUCE REDUCED ONNX_ARGS
TMPD=$tmp
export TMPD
for t in $targets; do
	sed "s|\$| $t|" "$tmp/cases"
done | xargs -P "$JOBS" -n 2 sh "$tmp/one.sh"

pass=0 fail=0 uns=0 crash=0
: >"$RESULTS"
version=$("$GDCC" --version | sed -n '1s/^gdcc //p')
for t in $targets; do
	while read -r c; do
		f="$tmp/$(echo "$c.$t" | tr '/' '_')"
		st=$(cut -f1 "$f"); why=$(cut -f2- "$f" | sed 's/\\/\\\\/g; s/"/\\"/g')
		case $st in pass) pass=$((pass + 1)) ;; fail) fail=$((fail + 1)) ;; unsupported) uns=$((uns + 1)) ;; *) crash=$((crash + 1)) ;; esac
		[ "$st" = pass ] || echo "$(echo "$st" | tr a-z A-Z): $c [$t]: $why"
		red=null
		[ -f "$f.reduced" ] && red="\"$(cat "$f.reduced")\"" && echo "  reduced: $(cat "$f.reduced")"
		printf '{"schema": "gdcc.onnx-result", "schema_version": 1, "case": "%s", "folder": "%s", "target": "%s", "options": "%s", "status": "%s", "reason": %s, "reduced": %s, "gdcc_version": "%s"}\n' \
			"$c" "${c%%/*}" "$t" "$( [ "$t" = reference ] || printf '%s' "$ONNX_ARGS")" "$st" "$( [ -n "$why" ] && printf '"%s"' "$why" || printf null)" "$red" "$version" >>"$RESULTS"
	done <"$tmp/cases"
done
echo "onnx: by folder and target (pass/fail/unsupported/crash):"
for t in $targets; do
	for fo in node pytorch-converted pytorch-operator simple; do
		line=$(grep "\"folder\": \"$fo\", \"target\": \"$t\"" "$RESULTS" | sed -n 's/.*"status": "\([a-z]*\)".*/\1/p' | sort | uniq -c | tr '\n' ' ')
		[ -n "$line" ] && echo "  $t $fo: $line"
	done
done
echo "onnx: $pass passed, $fail failed, $uns unsupported, $crash crashed (results in $RESULTS)"
echo "$pass passed, $((fail + crash)) failed"
[ $((fail + crash)) -eq 0 ]
