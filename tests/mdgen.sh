#!/bin/sh
# mdgen's checks: every file in tests/md-errors must be rejected with the
# messages and locations its "# expect:" lines give ("L:C: ..." in the file
# itself, "OTHER.md:L:C: ..." in a file it extends), a caret under the
# column, exit status 1, and no output file.  The good test targets in
# tests/md must be accepted.
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
	"$MDGEN" -o "$tmp/out.c" "$f" >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [ "$st" -eq 1 ]; then pass=$((pass + 1)); else bad "$name: exit $st, expected 1"; cat "$tmp/err"; fi
	if [ -e "$tmp/out.c" ] || [ -e "$tmp/out.c.tmp" ]; then bad "$name: an output file was written"; else pass=$((pass + 1)); fi
	if grep -q '^ *\^$' "$tmp/err"; then pass=$((pass + 1)); else bad "$name: no caret under the error"; fi
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
grep -q 'const int gdcc_ntargets = 2;' "$tmp/good.c" && pass=$((pass + 1)) || bad "tests/md: expected 2 targets"
if "$MDGEN" -o "$tmp/twice.c" "$SRCDIR/tests/md/targets.list" "$SRCDIR/tests/md/targets.list" 2>"$tmp/err"; then
	bad "a target listed twice was accepted"
else
	grep -q "target 'toy' is listed twice" "$tmp/err" && pass=$((pass + 1)) || bad "no 'listed twice' message"
fi
# Bad command lines.
"$MDGEN" >/dev/null 2>&1; [ $? -eq 2 ] && pass=$((pass + 1)) || bad "mdgen without arguments: expected exit 2"
"$MDGEN" -o "$tmp/x.c" "$tmp/none.list" 2>"$tmp/err"; [ $? -eq 1 ] && grep -q "cannot read" "$tmp/err" && pass=$((pass + 1)) || bad "missing list"

echo "mdgen: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
