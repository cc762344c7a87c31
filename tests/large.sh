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
# a 100,000-node dead chain beside a live node: a warning (for the node
# nothing reads), and pass_dce removes the chain in one walk
awk 'BEGIN { print "graph g {"; print "  input x : f32[2]"; print "  y = relu(x)"
	for (i = 0; i < 100000; i++) printf "  d%d = neg(%s)\n", i, i ? "d" (i - 1) : "x"
	print "  output y"; print "}" }' >"$tmp/dead.ir"
start=$(date +%s)
"$GDCC" "$tmp/dead.ir" >"$tmp/out" 2>&1
st=$?
t=$(($(date +%s) - start))
[ "$st" -eq 0 ] && grep -q "'d99999' is computed but never used" "$tmp/out" && [ "$t" -le 20 ] && ok ||
	bad "dead chain: exit $st in $t s"
[ "$(grep -c 'is computed but never used' "$tmp/out")" -eq 1 ] && ok || bad "dead chain: more than one warning"
# (canonicalize would remove the neg(neg) pairs first: dce and fold do the work here)
timed 20 "-S -O1 of a 100,000-node dead chain" "$GDCC" -S -O1 -t x86-avx2 --disable-pass=canonicalize \
	-o "$tmp/dead.s" "$tmp/dead.ir"
# a 100,000-node chain of constants: folded in one walk
awk 'BEGIN { print "graph g {"; print "  input x : f32[2]"; print "  const c : f32[2] = [1, 2]"
	for (i = 0; i < 100000; i++) printf "  v%d = neg(%s)\n", i, i ? "v" (i - 1) : "c"
	print "  y = add(x, v99999)"; print "  output y"; print "}" }' >"$tmp/fold.ir"
timed 20 "-S -O1 of a 100,000-node constant chain" "$GDCC" -S -O1 -t x86-avx2 --disable-pass=canonicalize \
	-o "$tmp/fold.s" "$tmp/fold.ir"
# two equal 50,000-node chains: one goes by CSE, in one walk
awk 'BEGIN { print "graph g {"; print "  input x : f32[2]"
	for (i = 0; i < 50000; i++) printf "  v%d = add(%s, x)\n  w%d = add(%s, x)\n", i, i ? "v" (i - 1) : "x", i, i ? "w" (i - 1) : "x"
	print "  y = add(v49999, w49999)"; print "  output y"; print "}" }' >"$tmp/cse.ir"
timed 60 "-S -O1 of two equal 50,000-node chains" "$GDCC" -S -O1 -t x86-avx2 --disable-pass=canonicalize \
	--print-after=cse -o "$tmp/cse.s" "$tmp/cse.ir"
[ "$(grep -c ' = add(' "$tmp/out")" -eq 50001 ] && ok || bad "CSE of two equal chains did not leave one"
echo "large: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
