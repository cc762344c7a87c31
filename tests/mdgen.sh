#!/bin/sh
# mdgen's checks: every file in tests/md-errors must be rejected with the
# messages and locations its "# expect:" lines give ("L:C: ..." in the file
# itself, "OTHER.md:L:C: ..." in a file it extends), exactly N errors when
# it has an "# errors: N" line, a caret under the column, exit status 1, no
# output file, and no raw control byte in the messages.  The good test
# targets in tests/md must be accepted.  Then the limits (gen/mdgen.h) on
# large inputs made here: a 50,000-term && chain is rejected in linear
# time, deep expressions and nesting and long extends chains are located
# errors, and inputs that are not regular files are refused.
set -u
MDGEN=${MDGEN:-gen/mdgen}
SRCDIR=${SRCDIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

dir="$SRCDIR/tests/md-errors"
for f in "$dir"/*.md; do
	name=$(basename "$f")
	rm -f "$tmp/out.c"
	timeout 60 "$MDGEN" -o "$tmp/out.c" "$f" >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [ "$st" -eq 1 ]; then pass=$((pass + 1)); else bad "$name: exit $st, expected 1"; cat "$tmp/err"; fi
	if [ -e "$tmp/out.c" ] || [ -e "$tmp/out.c.tmp" ]; then bad "$name: an output file was written"; else pass=$((pass + 1)); fi
	if grep -q '^ *\^$' "$tmp/err"; then pass=$((pass + 1)); else bad "$name: no caret under the error"; fi
	if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$tmp/err"; then bad "$name: raw control bytes in the messages"; else pass=$((pass + 1)); fi
	want=$(sed -n 's/^# errors: //p' "$f")
	if [ -n "$want" ]; then
		got=$(grep -c ': error: ' "$tmp/err")
		[ "$got" -eq "$want" ] && pass=$((pass + 1)) || { bad "$name: $got errors, expected $want"; sed 's/^/  | /' "$tmp/err"; }
	fi
	n=0
	while IFS= read -r line; do
		n=$((n + 1))
		case $line in
		[0-9]*) line="$f:$line" ;;
		*.md:*) line="$dir/$line" ;;
		esac
		if grep -qF -- "$line" "$tmp/err"; then
			pass=$((pass + 1))
		else
			bad "$name: no '$line' in:"
			sed 's/^/  | /' "$tmp/err"
		fi
	done <<EOF2
$(grep '^# expect: ' "$f" | sed 's/^# expect: //')
EOF2
	[ "$n" -gt 0 ] || bad "$name: has no '# expect:' line"
done

# The test-only targets are accepted, and a target listed twice is not.
if "$MDGEN" -o "$tmp/good.c" "$SRCDIR/tests/md/targets.list" 2>"$tmp/err"; then pass=$((pass + 1)); else bad "tests/md rejected"; cat "$tmp/err"; fi
ntargets=$(sed 's/#.*//' "$SRCDIR/tests/md/targets.list" | grep -c '[^[:space:]]')
grep -q "const int gdcc_ntargets = $ntargets;" "$tmp/good.c" && pass=$((pass + 1)) || bad "tests/md: expected $ntargets targets"
if "$MDGEN" -o "$tmp/twice.c" "$SRCDIR/tests/md/targets.list" "$SRCDIR/tests/md/targets.list" 2>"$tmp/err"; then
	bad "a target listed twice was accepted"
else
	grep -q "target 'toy' is listed twice" "$tmp/err" && pass=$((pass + 1)) || bad "no 'listed twice' message"
fi
# A listed target whose parent cannot be read is an error, and the targets
# listed after it are still checked (mdgen once crashed comparing their names
# with the failed one's).
mkdir "$tmp/lst"
printf 'target "orphan" extends "no-such-parent" {\n  isa "x"\n}\n' >"$tmp/lst/orphan.md"
cp "$SRCDIR/tests/md/toy.md" "$tmp/lst/toy.md"
printf 'orphan\ntoy\n' >"$tmp/lst/targets.list"
"$MDGEN" -o "$tmp/lst.c" "$tmp/lst/targets.list" 2>"$tmp/err"
st=$?
if [ $st -eq 1 ] && grep -q "orphan.md:1:.*error: cannot read '.*no-such-parent.md'" "$tmp/err" && [ ! -e "$tmp/lst.c" ]; then
	pass=$((pass + 1))
else
	bad "a list with a target whose parent is missing: exit $st"; cat "$tmp/err"
fi
# Bad command lines.
"$MDGEN" >/dev/null 2>&1; [ $? -eq 2 ] && pass=$((pass + 1)) || bad "mdgen without arguments: expected exit 2"
"$MDGEN" -o "$tmp/x.c" "$tmp/none.list" 2>"$tmp/err"; [ $? -eq 1 ] && grep -q "cannot read" "$tmp/err" && pass=$((pass + 1)) || bad "missing list"

# ---- limits, on inputs made here (gen/mdgen.h) -----------------------------------
# big NAME WHEN: tests/md/toy.md plus one legality row with that constraint.
big() {
	cat "$SRCDIR/tests/md/toy.md" >"$tmp/$1.md"
	printf 'legal add f32 native when %s\n' "$2" >>"$tmp/$1.md"
}
# rejects NAME MESSAGE: mdgen rejects $tmp/NAME.md (exit 1, no output) with
# a located message containing MESSAGE, within 60 s.
rejects() {
	rm -f "$tmp/out.c"
	timeout 60 "$MDGEN" -o "$tmp/out.c" "$tmp/$1.md" >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [ "$st" -eq 1 ] && [ ! -e "$tmp/out.c" ] && grep "^$tmp/[^ ]*: error: " "$tmp/err" | grep -qF -- "$2"; then
		pass=$((pass + 1))
	else
		bad "$1: exit $st, expected 1 with '$2':"
		head -c 2000 "$tmp/err" | sed 's/^/  | /'
	fi
}
# A flat chain of 50,000 terms (the fuzzing run's md-and-chain-stack-overflow-1,
# whose recursive walk overflowed the stack) is a located error past
# MD_MAX_TERMS terms, found in linear time; 1,000 terms are fine.
terms=$(awk 'BEGIN { for (i = 0; i < 1000; i++) printf "%srank == 1", i ? " && " : "" }')
big and-chain-1k "$terms"
if "$MDGEN" -o "$tmp/out.c" "$tmp/and-chain-1k.md" 2>"$tmp/err" && [ -s "$tmp/out.c" ]; then pass=$((pass + 1)); else
	bad "a 1,000-term && chain was rejected:"
	head -c 2000 "$tmp/err" | sed 's/^/  | /'
fi
terms=$(awk 'BEGIN { for (i = 0; i < 50000; i++) printf "%srank == 1", i ? " && " : "" }')
big and-chain "$terms"
start=$(date +%s)
rejects and-chain "a chain of more than 1000 '&&' terms in one expression"
[ "$(grep -c ': error: ' "$tmp/err")" -eq 1 ] && pass=$((pass + 1)) || bad "and-chain: more than one error"
# (4 times the terms must take about 4 times as long, not 16)
terms2=$(awk 'BEGIN { for (i = 0; i < 200000; i++) printf "%srank == 1", i ? " && " : "" }')
mid=$(date +%s)
big and-chain-2 "$terms2"
rejects and-chain-2 "a chain of more than 1000 '&&' terms"
end=$(date +%s)
t1=$((mid - start)) t2=$((end - mid))
[ "$t2" -le $((8 * t1 + 5)) ] && pass=$((pass + 1)) || bad "the && chain is not linear: 50,000 terms in ${t1}s, 200,000 in ${t2}s"
rm -f "$tmp"/out*.c "$tmp"/and-chain*.md
# Operators that alternate make a deep tree: a located error, reported once.
big alt-chain "rank$(awk 'BEGIN { for (i = 0; i < 25000; i++) printf " + 1 - 1" }') == 1"
rejects alt-chain "expression nested deeper than 256 operators"
[ "$(grep -c ': error: ' "$tmp/err")" -eq 1 ] && pass=$((pass + 1)) || bad "alt-chain: more than one error"
# So do 10,001 '!' (past bison's stack), 50,000 parentheses, deep lists.
big not-chain "$(awk 'BEGIN { for (i = 0; i < 10001; i++) printf "!" }')rank"
rejects not-chain "nested too deeply: more than 10000 levels of the parser's stack"
big parens "$(awk 'BEGIN { for (i = 0; i < 50000; i++) printf "(" }')rank$(awk 'BEGIN { for (i = 0; i < 50000; i++) printf ")" }')"
rejects parens "nested deeper than 64 levels"
{ cat "$SRCDIR/tests/md/toy.md"; awk 'BEGIN { printf "param p = "; for (i = 0; i < 50000; i++) printf "["; printf "1"; for (i = 0; i < 50000; i++) printf "]"; print "" }'; } >"$tmp/lists.md"
rejects lists "nested deeper than 64 levels"
{ cat "$SRCDIR/tests/md/toy.md"; awk 'BEGIN { for (i = 0; i < 5000; i++) print "foreach $a in [(x)] {"; print "legal relu f32 native"; for (i = 0; i < 5000; i++) print "}" }'; } >"$tmp/foreach.md"
rejects foreach "nested deeper than 64 levels"
# strategy(tiles)'s params (core/lowerings.def) in a child of npu-systolic:
# the square-array relation is reported where the child breaks it, and a
# child that keeps the array square (and a fractional DMA latency, a number)
# is accepted.
cp "$SRCDIR/md/npu-systolic.md" "$tmp/npu-systolic.md"
printf 'target "npu-wide" extends "npu-systolic" {\n}\nparam array_rows = 32\n' >"$tmp/npu-wide.md"
rejects npu-wide "npu-wide.md:3:20: error: param array_rows = 32 differs from param array_cols = 16: strategy(tiles) needs them equal"
printf 'target "npu-big" extends "npu-systolic" {\n}\nparam array_rows = 32\nparam array_cols = 32\nparam dma_latency_cycles = 12.5\n' >"$tmp/npu-big.md"
if "$MDGEN" -o "$tmp/out.c" "$tmp/npu-big.md" 2>"$tmp/err" && [ -s "$tmp/out.c" ]; then pass=$((pass + 1)); else
	bad "a square 32 x 32 child of npu-systolic was rejected:"
	head -c 2000 "$tmp/err" | sed 's/^/  | /'
fi
rm -f "$tmp"/out*.c
# An extends chain deeper than 16 files.
for i in $(seq 0 20); do
	printf 'target "c%d" extends "c%d" {\n}\n' "$i" $((i + 1)) >"$tmp/c$i.md"
done
rejects c0 "'extends' is nested more than 16 deep"
# Inputs that are not regular files: a directory, a FIFO (without waiting
# for a writer), as a target and as a list.
mkdir "$tmp/dir.md" "$tmp/dir.list"
rejects dir "cannot read '$tmp/dir.md': it is a directory"
mkfifo "$tmp/fifo.md"
rejects fifo "cannot read '$tmp/fifo.md': it is not a regular file"
timeout 60 "$MDGEN" -o "$tmp/x.c" "$tmp/dir.list" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "dir.list: error: cannot read: it is a directory" "$tmp/err" && pass=$((pass + 1)) || { bad "a directory as a list"; cat "$tmp/err"; }

echo "mdgen: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
