#!/bin/sh
# The error contract of every command (issue 11).  Each bad input of the
# corpus (tests/bad-inputs/cases, and every tests/errors/*.ir and
# tests/md-errors/*.md) goes through every command that takes its kind, and
# each bad command line or unwritable output of tests/bad-inputs/command-lines
# is run; each must give
#   - its exit status (1 invalid input, 2 bad command line, 3 run failure),
#   - a message that locates the problem (FILE:LINE:COL: error: for text,
#     FILE: error: for a binary file, PROGRAM: error: for a command line),
#   - no output file: it runs in a fresh empty folder, which must stay empty,
#   - no sanitizer report, and no timeout or signal.
# Then the rules for what -o names (devices, FIFOs, symlinks: docs/gdcc.1)
# and all-or-nothing outputs.
# Run by `make check` with GDCC, MDGEN and SRCDIR set; NPUSIM defaults to the
# npusim built beside GDCC.  CONTRACT_TIMEOUT: seconds per command (60).
set -u
abs() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd)" "$(basename "$1")"); }
GDCC=$(abs "${GDCC:-./gdcc}")
MDGEN=$(abs "${MDGEN:-gen/mdgen}")
NPUSIM=$(abs "${NPUSIM:-$(dirname "$GDCC")/sim/npusim}")
SRCDIR=${SRCDIR:-.}
B=$(cd "$SRCDIR/tests/bad-inputs" && pwd)
E=$(cd "$SRCDIR/tests/errors" && pwd)
MDE=$(cd "$SRCDIR/tests/md-errors" && pwd)
TIMEOUT=${CONTRACT_TIMEOUT:-60}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 n=0
TARGETS=$("$GDCC" --list-targets | awk 'NR > 1 {print $1}')

# ---- the fixtures: directories, a 24-byte file, a good npusim program --------------
in=$tmp/in
mkdir "$in" "$in/dir.ir" "$in/dir.onnx" "$in/dir.npy" "$in/dir.pb" "$in/dir.md" "$in/dir.s" "$in/adir"
printf '0123456789abcdefghijklmn' >"$in/in24.bin"
if ! "$GDCC" -S -t npu-systolic -o "$in/prog.s" "$B/npy-model.ir" 2>"$tmp/err"; then
	echo "contract: cannot compile the npusim fixture:"
	cat "$tmp/err"
	exit 1
fi
NONE=$tmp/none/x

# located WHO HOW: does some line of stderr start with WHO and an error?
#   HOW line: WHO:LINE:COL: error:   file: WHO: error: or WHO:LINE:COL: error:
#   under: a file under the folder WHO, at a line
located() {
	while IFS= read -r l; do
		case $2 in
		line) case $l in "$1":[0-9]*:[0-9]*": error: "*) return 0 ;; esac ;;
		under) case $l in "$1"/*:[0-9]*:[0-9]*": error: "*) return 0 ;; esac ;;
		*) case $l in "$1: error: "* | "$1":[0-9]*:[0-9]*": error: "*) return 0 ;; esac ;;
		esac
	done <"$tmp/err"
	return 1
}

# check WHAT STATUS WHO HOW -- COMMAND...: one command in a fresh empty folder
check() {
	what=$1 want=$2 who=$3 how=$4
	shift 5
	n=$((n + 1))
	w=$tmp/w$n
	mkdir "$w"
	(cd "$w" && exec timeout -k 5 "$TIMEOUT" "$@") >"$tmp/out" 2>"$tmp/err" </dev/null
	got=$?
	why=
	[ "$got" -eq "$want" ] || why="exit $got, expected $want"
	if [ "$got" -ge 124 ]; then why="$why (a timeout or a signal)"; fi
	if grep -qE 'runtime error:|ERROR: [A-Za-z]*Sanitizer|SUMMARY: [A-Za-z]*Sanitizer' "$tmp/err"; then
		why="$why${why:+; }a sanitizer report"
	fi
	located "$who" "$how" || why="$why${why:+; }no message located at $who ($how)"
	left=$(ls -A "$w" | tr '\n' ' ')
	[ -z "$left" ] || why="$why${why:+; }left behind: $left"
	rm -rf "$w"
	if [ -z "$why" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: $what: $why"
		echo "  \$ $*"
		head -n 6 "$tmp/err" | sed 's/^/  | /'
	fi
}

# corpus KIND FILE STATUS HOW: one bad input through every command of its kind
corpus() {
	kind=$1 st=$3 how=$4
	case $2 in
	@*) f=$in/${2#@} ;;
	/*) f=$2 ;;
	*) f=$B/$2 ;;
	esac
	name=$(basename "$2")
	who=$f
	[ "$how" = under ] && who=$(dirname "$f")
	case $kind in
	ir | onnx)
		check "$name: check" "$st" "$who" "$how" -- "$GDCC" "$f"
		check "$name: --emit=ir" "$st" "$who" "$how" -- "$GDCC" --emit=ir -o out.ir "$f"
		for t in $TARGETS; do
			check "$name: -S -t $t" "$st" "$who" "$how" -- "$GDCC" -S -t "$t" -o out.s "$f"
		done
		check "$name: -S --report" "$st" "$who" "$how" -- "$GDCC" -S -t npu-systolic -o out.s --report=r.json "$f"
		for e in legality loops mir; do
			check "$name: --emit=$e" "$st" "$who" "$how" -- "$GDCC" --emit=$e -t x86-avx2 -o out.txt "$f"
		done
		for e in placement loops; do
			check "$name: --emit=$e -t npu-systolic" "$st" "$who" "$how" -- "$GDCC" --emit=$e -t npu-systolic -o out.txt "$f"
		done
		check "$name: run" "$st" "$who" "$how" -- "$GDCC" run "$f" --output-dir .
		for t in $TARGETS; do
			check "$name: run -t $t" "$st" "$who" "$how" -- "$GDCC" run "$f" -t "$t" --output-dir .
		done
		if [ "$kind" = onnx ]; then
			check "$name: import" "$st" "$who" "$how" -- "$GDCC" import -o out.ir "$f"
		fi
		;;
	npy | pb)
		check "$name: run --input" "$st" "$who" "$how" -- "$GDCC" run "$B/npy-model.ir" --input "x=$f" --output-dir .
		for t in $TARGETS; do
			check "$name: run --input -t $t" "$st" "$who" "$how" -- "$GDCC" run "$B/npy-model.ir" -t "$t" --input "x=$f" --output-dir .
		done
		;;
	md)
		check "$name: mdgen" "$st" "$who" "$how" -- "$MDGEN" -o out.c "$f"
		;;
	s)
		check "$name: npusim" "$st" "$who" "$how" -- "$NPUSIM" --target npu-systolic "$f" w:64
		;;
	*)
		fail=$((fail + 1))
		echo "FAIL: tests/bad-inputs/cases: unknown kind '$kind'"
		;;
	esac
}

grep -v '^#' "$B/cases" | grep . >"$tmp/cases"
while read -r kind file st how; do
	corpus "$kind" "$file" "$st" "$how"
done <"$tmp/cases"
for f in "$E"/*.ir; do corpus ir "$f" 1 line; done
for f in "$MDE"/*.md; do corpus md "$f" 1 under; done

# ---- command lines -------------------------------------------------------------------
grep -v '^#' "$B/command-lines" | grep . | sed \
	-e "s|@M2|$B/two-outputs.ir|g" -e "s|@MW|$B/workspace.ir|g" -e "s|@M|$B/npy-model.ir|g" \
	-e "s|@O|$B/relu.onnx|g" -e "s|@S|$in/prog.s|g" -e "s|@IN|$in/in24.bin|g" -e "s|@D|$in/adir|g" \
	-e "s|@NONE|$NONE|g" >"$tmp/lines"
set -f
while read -r st who rest; do
	case $rest in
	*/dev/full*) [ -c /dev/full ] || continue ;; # (a system without it)
	esac
	# shellcheck disable=SC2086
	set -- $rest
	k=$#
	while [ "$k" -gt 0 ]; do
		a=$1
		shift
		case $a in
		gdcc) a=$GDCC ;;
		npusim) a=$NPUSIM ;;
		mdgen) a=$MDGEN ;;
		esac
		set -- "$@" "$a"
		k=$((k - 1))
	done
	check "$rest" "$st" "$who" file -- "$@"
done <"$tmp/lines"
set +f

# ---- what -o names ---------------------------------------------------------------------
ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	echo "FAIL: $*"
	sed 's/^/  | /' "$tmp/err"
}
M=$B/npy-model.ir
o=$tmp/o
mkdir "$o"
cd "$o" || exit 1

# a device is written into, never replaced; nothing is written beside it
"$GDCC" --emit=ir -o /dev/null "$M" 2>"$tmp/err" && [ -c /dev/null ] && ok || bad "-o /dev/null"
"$GDCC" -S -t x86-avx2 -o /dev/null "$M" 2>"$tmp/err" && [ -c /dev/null ] && [ ! -e /dev/null.json ] && ok ||
	bad "-S -o /dev/null (and no /dev/null.json)"
if [ -c /dev/full ]; then
	"$GDCC" --emit=ir -o /dev/full "$M" 2>"$tmp/err"
	[ $? -eq 3 ] && [ -c /dev/full ] && grep -q "^gdcc: error: cannot write '/dev/full': No space left on device" "$tmp/err" &&
		ok || bad "-o /dev/full: status 3, the device left a device, the error named"
	"$GDCC" --emit=ir "$M" >/dev/full 2>"$tmp/err"
	[ $? -eq 3 ] && grep -q "^gdcc: error: cannot write to standard output" "$tmp/err" && ok || bad "stdout on /dev/full"
fi

# a FIFO is written into (and stays a FIFO)
if mkfifo fifo 2>/dev/null; then
	cat fifo >got &
	reader=$!
	timeout 30 "$GDCC" --emit=ir -o fifo "$M" 2>"$tmp/err"
	st=$?
	i=0
	while kill -0 "$reader" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill "$reader" 2>/dev/null
	wait "$reader"
	[ "$st" -eq 0 ] && [ -p fifo ] && grep -q '^graph m' got && ok || bad "-o FIFO"
	rm -f fifo got
fi

# a symlink stays a symlink; its target is replaced (or made, when it dangles)
echo old >real.ir
ln -s real.ir link.ir
"$GDCC" --emit=ir -o link.ir "$M" 2>"$tmp/err" && [ -L link.ir ] && grep -q '^graph m' real.ir && ok ||
	bad "-o SYMLINK: the link kept, its target written"
ln -s sub/new.ir dangling.ir
mkdir sub
"$GDCC" --emit=ir -o dangling.ir "$M" 2>"$tmp/err" && [ -L dangling.ir ] && grep -q '^graph m' sub/new.ir && ok ||
	bad "-o DANGLING-SYMLINK: its target made"
rm -rf real.ir link.ir dangling.ir sub

# a file replaced keeps its mode; a failed command leaves it as it was
echo old >keep.s
chmod 640 keep.s
"$GDCC" -S -t x86-avx2 -o keep.s "$M" 2>"$tmp/err" && [ "$(stat -c %a keep.s)" = 640 ] && ok || bad "-o keeps the mode"
echo old >keep.s
"$GDCC" -S -t x86-avx2 -o keep.s "$E/syntax.ir" 2>"$tmp/err"
[ $? -eq 1 ] && [ "$(cat keep.s)" = old ] && ok || bad "a failed compile changed the old output"
rm -f keep.s keep.s.json keep.weights.bin

# all or none: the manifest cannot be written, so neither is the assembly
mkdir -p d/out.s.json
"$GDCC" -S -t x86-avx2 -o d/out.s "$M" 2>"$tmp/err"
[ $? -eq 3 ] && [ "$(ls -A d)" = out.s.json ] && grep -q "d/out.s.json" "$tmp/err" && ok ||
	bad "-S with OUT.s.json a directory: status 3, no OUT.s"
"$GDCC" -S -t npu-systolic -o d/out.s "$M" 2>"$tmp/err"
[ $? -eq 3 ] && [ "$(ls -A d)" = out.s.json ] && ok || bad "-S -t npu-systolic with OUT.s.json a directory"
rm -rf d
# ... the weights file cannot be written, so neither is the assembly; nor the
# object of -c when its header cannot be
mkdir -p d/out.weights.bin
"$GDCC" -S -t x86-avx2 -o d/out.s "$M" 2>"$tmp/err"
[ $? -eq 3 ] && [ "$(ls -A d)" = out.weights.bin ] && grep -q "d/out.weights.bin" "$tmp/err" && ok ||
	bad "-S with OUT.weights.bin a directory: status 3, no OUT.s"
mkdir -p d/out.h
"$GDCC" -c -t x86-avx2 -o d/out.o --header=d/out.h "$M" 2>"$tmp/err"
[ $? -eq 3 ] && [ "$(ls -A d | tr '\n' ' ')" = "out.h out.weights.bin " ] && grep -q "d/out.h" "$tmp/err" && ok ||
	bad "-c with its --header a directory: status 3, no object"
rm -rf d

# import: the weights beside the model.ir, all or none
"$GDCC" import -o m.ir "$B/weights.onnx" 2>"$tmp/err" && [ -f m.w.npy ] && grep -q 'npy("m.w.npy")' m.ir &&
	[ "$(ls -A | tr '\n' ' ')" = "m.ir m.w.npy " ] && ok || bad "import with weights"
"$GDCC" run m.ir --output-dir . 2>"$tmp/err" >/dev/null && ok || bad "the imported model runs"
rm -f m.ir m.w.npy y.npy
mkdir m.w.npy
"$GDCC" import -o m.ir "$B/weights.onnx" 2>"$tmp/err"
[ $? -eq 3 ] && [ "$(ls -A)" = m.w.npy ] && [ -z "$(ls -A m.w.npy)" ] && ok ||
	bad "import with a weight file that cannot be written: status 3, no model.ir"
rm -rf m.w.npy
mkdir m.ir
"$GDCC" import -o m.ir "$B/weights.onnx" 2>"$tmp/err"
[ $? -eq 3 ] && [ "$(ls -A)" = m.ir ] && ok || bad "import with the model.ir a directory: status 3, no weights"
rm -rf m.ir

# a model read from a pipe, with the cap
"$GDCC" /dev/stdin <"$M" 2>"$tmp/err" && ok || bad "a model from standard input"
cat "$M" | "$GDCC" --max-model-bytes=10 /dev/stdin 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "^/dev/stdin: error: .*--max-model-bytes" "$tmp/err" && ok || bad "a model from a pipe above the cap"

# messages escape what they quote
"$GDCC" "$B/control-bytes.ir" 2>"$tmp/err"
if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$tmp/err"; then bad "a control byte reached stderr"; else ok; fi
"$GDCC" "$(printf 'no\033[2Jsuch.ir')" 2>"$tmp/err"
if LC_ALL=C grep -q "$(printf '\033')" "$tmp/err"; then bad "a control byte of a file name reached stderr"; else ok; fi
cd "$tmp" || exit 1
[ -z "$(ls -A "$o")" ] && ok || { bad "files left: $(ls -A "$o")"; }

echo "contract: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
