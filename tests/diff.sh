#!/bin/sh
# The differential run of `make check` (tests/diff/run.sh, docs/testing.md):
#  1. a self-test: on x86-avx2-wrong (tests/gdcc_toy's x86-avx2 with a planted
#     wrong mul.v), graphs with a mul must be reported as failing (seeds
#     whose `gengraph --op mul` graph has a mul wide enough for a vector loop:
#     4, 5 and 6 since gather_nd and topk; re-chosen when the generator's
#     draws change, as some seeds draw a mul of short rows, scalar mul.f);
#  2. DIFF_CHECK_SEEDS (default 1-50) random graphs of DIFF_CHECK_NODES ops
#     (default 12) on every target at each of DIFF_CHECK_LEVELS (default
#     "-O0 -O2"), which must all pass or be unsupported with the target's
#     reason.
# `make diff SEEDS=1-500` runs more.
set -u
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
run=$SRCDIR/tests/diff/run.sh
sp=0 sf=0
if [ -n "${GDCC_TOY:-}" ] && [ -x "$GDCC_TOY" ] && "$GDCC_TOY" --list-targets | grep -q '^x86-avx2-wrong '; then
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/gdcc-diff-self.XXXXXX") || exit 99
	gengraph=${GENGRAPH:-$(dirname "${GDCC:-./gdcc}")/tests/diff/gengraph}
	GDCC=$GDCC_TOY GENGRAPH=$gengraph TARGETS=x86-avx2-wrong \
		SEEDS="4 5 6" NODES=6 GENFLAGS="--op mul" DIFF_REDUCE=0 EVIDENCE=$tmp/ev.jsonl DIFF_OUT=$tmp/out \
		sh "$run" >"$tmp/log" 2>&1
	st=$?
	n=$(grep -c '^FAIL: seed [0-9]* x86-avx2-wrong: mismatch' "$tmp/log")
	if [ $st -eq 1 ] && [ "$n" -eq 3 ]; then
		sp=1
		echo "PASS: self-test: the planted wrong mul.v of x86-avx2-wrong is reported on all 3 seeds"
	else
		sf=1
		echo "FAIL: self-test: x86-avx2-wrong (a planted wrong mul.v) was reported on $n of 3 seeds (status $st):"
		sed 's/^/  /' "$tmp/log"
	fi
	rm -rf "$tmp"
else
	echo "diff: self-test skipped: no tests/gdcc_toy with the x86-avx2-wrong target (GDCC_TOY)"
fi
out=$(SEEDS=${DIFF_CHECK_SEEDS:-1-50} NODES=${DIFF_CHECK_NODES:-12} LEVELS=${DIFF_CHECK_LEVELS:-"-O0 -O2"} DIFF_REDUCE_TIMEOUT=${DIFF_REDUCE_TIMEOUT:-120} sh "$run")
st=$?
printf '%s\n' "$out"
p=$(printf '%s\n' "$out" | sed -n 's/^diff: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' | tail -n 1)
f=$(printf '%s\n' "$out" | sed -n 's/^diff: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' | tail -n 1)
[ -n "$p" ] || { echo "diff: error: tests/diff/run.sh gave no summary (status $st)"; exit 99; }
echo "diff: $((p + sp)) passed, $((f + sf)) failed (with the self-test)"
[ $st -eq 0 ] && [ $sf -eq 0 ]
