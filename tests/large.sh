#!/bin/sh
# Large inputs take time linear in their size (regression: the 2026-12-01
# fuzzing run's 100,000-node chain took minutes in the model.ir parser, and
# the register allocator's liveness grew as blocks x values).  Bounds are
# generous, for the sanitizer build on a loaded 2-core machine: quadratic
# behaviour is 100x over them.
set -u
GDCC=${GDCC:-./gdcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
chain() { # N FILE: a chain of N relus
	awk -v n="$1" 'BEGIN {
		print "graph g {"; print "  input x : f32[2]"
		for (i = 0; i < n; i++) printf "  v%d = relu(%s)\n", i, i ? "v" (i - 1) : "x"
		printf "  output v%d\n}\n", n - 1 }' >"$2"
}
timed() { # SECONDS WHAT CMD...: the command succeeds within the time
	limit=$1 what=$2
	shift 2
	start=$(date +%s)
	if timeout "$((limit * 3))" "$@" >"$tmp/out" 2>&1; then
		t=$(($(date +%s) - start))
		if [ "$t" -le "$limit" ]; then ok; else bad "$what: $t s (bound $limit s)"; fi
	else
		bad "$what: failed or timed out"
		tail -5 "$tmp/out"
	fi
}
chain 100000 "$tmp/c100k.ir"
timed 20 "parse + verify + print of a 100,000-node chain" "$GDCC" --emit=ir -o "$tmp/c.ir" "$tmp/c100k.ir"
"$GDCC" --emit=ir -o "$tmp/c2.ir" "$tmp/c.ir" && cmp -s "$tmp/c.ir" "$tmp/c2.ir" && ok || bad "print is not a fixed point"
timed 30 "reference run of a 100,000-node chain" "$GDCC" run "$tmp/c100k.ir"
chain 20000 "$tmp/c20k.ir"
timed 60 "-S -t x86-avx2 of a 20,000-node chain" "$GDCC" -S -t x86-avx2 -o "$tmp/c.s" "$tmp/c20k.ir"
# a 100,000-node dead chain beside a live node: pruned in one pass
awk 'BEGIN { print "graph g {"; print "  input x : f32[2]"; print "  y = relu(x)"
	for (i = 0; i < 100000; i++) printf "  d%d = neg(%s)\n", i, i ? "d" (i - 1) : "x"
	print "  output y"; print "}" }' >"$tmp/dead.ir"
start=$(date +%s)
"$GDCC" "$tmp/dead.ir" >"$tmp/out" 2>&1
st=$?
t=$(($(date +%s) - start))
[ "$st" -eq 1 ] && grep -q "'d99999' is computed but never used" "$tmp/out" && [ "$t" -le 20 ] && ok ||
	bad "dead chain: exit $st in $t s"
echo "large: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
