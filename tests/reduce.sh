#!/bin/sh
# gdcc reduce: a planted mismatch in a 300-node model shrinks to <= 3 nodes,
# and the result parses, still mismatches and carries a reproduce command
# that works; the other conditions (--crash, --hang, --error, --exit, with
# the default command or one after --) on small models; npy constants; and
# the errors: bad command lines (exit 2), a model that does not fail or does
# not verify (exit 1), never an output file.
#
# The planted bug is tests/md/x86-avx2-wrong.md, built only into
# tests/gdcc_toy: x86-avx2 whose f32 vector multiply emits a subtract.
# Run by `make check` with GDCC_TOY and SRCDIR set.
set -u
GDCC_TOY=${GDCC_TOY:-tests/gdcc_toy}
SRCDIR=${SRCDIR:-.}
PY=${PYTHON_NUMPY:-/usr/bin/python3}
[ -x "$PY" ] || PY=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
show() { sed 's/^/  | /' "$1"; }
# nodes FILE: the node count of a model.ir (constants and ops)
nodes() { grep -cE '^  (const [A-Za-z_]|[A-Za-z_][A-Za-z0-9_.]*( :[^=]*)?(, [^=]*)? = [a-z_]+\()' "$1"; }
# reproduce FILE: run the command in FILE's "# reproduce:" line; its status
reproduce() {
	line=$(sed -n 's/^# reproduce: //p' "$1")
	[ -n "$line" ] || { echo "no '# reproduce:' line in $1"; return 255; }
	(eval "$line") >"$tmp/rep.out" 2>"$tmp/rep.err" </dev/null
}

# ---- the planted mismatch in a 300-node model -----------------------------------
# A seeded generator (stdlib only): 3 inputs of f32[4, 8], a pool of four
# live values, and 300 nodes of add sub max min relu neg abs identity clip
# div transpose reshape concat slice matmul, none of which multiplies on
# x86-avx2 (the control below checks it), and one `mul` half way through.
cat >"$tmp/gen.py" <<'PY'
import random, sys
n_nodes, planted = int(sys.argv[1]), sys.argv[2]
rng = random.Random(11)
pick = lambda k: int(rng.random() * k)
lines = ["graph planted {"]
lines += ["  input x%d : f32[4, 8]" % i for i in range(3)]
lines.append("  const w : f32[8, 8] = random(seed=3, low=-0.6, high=0.6)")
lines.append("  const two : f32[4, 8] = fill(2.0)")
pool, count, k, done = ["x0", "x1", "x2", "x0"], 2, 0, False
def node(text):
    global k, count
    k += 1
    count += 1
    lines.append("  v%d = %s" % (k, text))
    return "v%d" % k
while count < n_nodes:
    a, b = pick(4), pick(4)
    x, y = pool[a], pool[b]
    if not done and count >= n_nodes // 2:
        done = True
        pool[a] = node("%s(%s, %s)" % (planted, x, y))
        continue
    r = rng.random()
    if r < 0.35:
        v = node("%s(%s, %s)" % (["add", "sub", "max", "min"][pick(4)], x, y))
    elif r < 0.6:
        v = node("%s(%s)" % (["relu", "neg", "abs", "identity"][pick(4)], x))
    elif r < 0.65:
        v = node("clip(%s, min=-4.0, max=4.0)" % x)
    elif r < 0.7:
        v = node("div(%s, two)" % x)
    elif r < 0.77:
        v = node("transpose(%s)" % node("neg(%s)" % node("transpose(%s, perm=[1, 0])" % x)))
    elif r < 0.84:
        v = node("reshape(%s, shape=[4, 8])" % node("abs(%s)" % node("reshape(%s, shape=[32])" % x)))
    elif r < 0.95:
        v = node("slice(%s, starts=[2], ends=[6], axes=[0])" % node("concat(%s, %s, axis=0)" % (x, y)))
    else:
        v = node("matmul(%s, w)" % x)
    pool[a] = v
lines.append("  output " + ", ".join(dict.fromkeys(p for p in pool if p.startswith("v"))))
lines.append("}")
print("\n".join(lines))
PY
"$PY" "$tmp/gen.py" 300 mul >"$tmp/m.ir" && "$PY" "$tmp/gen.py" 300 add >"$tmp/control.ir" || bad "the generator failed"
n=$(nodes "$tmp/m.ir")
[ "$n" -ge 300 ] && ok || bad "the generated model has $n nodes, not 300"
[ "$(grep -c ' = mul(' "$tmp/m.ir")" -eq 1 ] && ok || bad "the generated model does not multiply exactly once"
"$GDCC_TOY" run "$tmp/m.ir" -t x86-avx2-wrong --check >"$tmp/out" 2>"$tmp/err"
st=$?
[ $st -eq 4 ] && ok || { bad "the planted model: exit $st on x86-avx2-wrong, expected 4 (a mismatch)"; show "$tmp/err"; }
"$GDCC_TOY" run "$tmp/m.ir" -t x86-avx2 --check >"$tmp/out" 2>"$tmp/err" && ok || { bad "the planted model mismatches on x86-avx2 too"; show "$tmp/out"; show "$tmp/err"; }
# the control: the same model with its mul an add runs right on the wrong target
"$GDCC_TOY" run "$tmp/control.ir" -t x86-avx2-wrong --check >"$tmp/out" 2>"$tmp/err" && ok || { bad "the control model mismatches on x86-avx2-wrong: another op multiplies"; show "$tmp/out"; show "$tmp/err"; }

start=$(date +%s.%N)
"$GDCC_TOY" reduce "$tmp/m.ir" --mismatch=x86-avx2-wrong -o "$tmp/r.ir" >"$tmp/out" 2>"$tmp/reduce.err"
st=$?
end=$(date +%s.%N)
[ $st -eq 0 ] && ok || { bad "reduce --mismatch: exit $st"; show "$tmp/reduce.err"; }
if [ -f "$tmp/r.ir" ]; then
	n=$(nodes "$tmp/r.ir")
	[ "$n" -le 3 ] && ok || { bad "the planted mismatch reduced to $n nodes, more than 3"; show "$tmp/r.ir"; }
	grep -q ' = mul(' "$tmp/r.ir" && ok || { bad "the reduced model lost the mul"; show "$tmp/r.ir"; }
	"$GDCC_TOY" "$tmp/r.ir" 2>"$tmp/err" && ok || { bad "the reduced model does not verify"; show "$tmp/err"; }
	"$GDCC_TOY" run "$tmp/r.ir" -t x86-avx2-wrong --check >"$tmp/out" 2>&1
	st=$?
	[ $st -eq 4 ] && ok || { bad "the reduced model: exit $st on x86-avx2-wrong, expected 4"; show "$tmp/out"; }
	"$GDCC_TOY" run "$tmp/r.ir" -t x86-avx2 --check >"$tmp/out" 2>&1 && ok || { bad "the reduced model mismatches on x86-avx2"; show "$tmp/out"; }
	reproduce "$tmp/r.ir"
	st=$?
	[ $st -eq 4 ] && ok || { bad "the reproduce command: exit $st, expected 4"; head -3 "$tmp/r.ir"; show "$tmp/rep.err"; }
	grep -q '^# expect: exit status 4' "$tmp/r.ir" && ok || bad "no '# expect: exit status 4' line"
	grep -q "^gdcc reduce: .*m.ir: 30[0-9] -> $n nodes" "$tmp/reduce.err" && ok || { bad "no summary on stderr"; show "$tmp/reduce.err"; }
	echo "reduce: 300-node planted mismatch -> $n nodes in $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s:"
	sed 's/^/  /' "$tmp/reduce.err"
	sed 's/^/  /' "$tmp/r.ir"
else
	bad "reduce --mismatch wrote no $tmp/r.ir"
fi

# ---- the other conditions, on a small model ---------------------------------------
cat >"$tmp/s.ir" <<'IR'
graph s {
  input x : f32[2, 3, 8]
  input y : f32[2, 3, 8]
  const c : f32[8] = [1, 2, 3, 4, 5, 6, 7, 8]
  a = add(x, c)
  b = relu(a)
  t = transpose(b, perm=[2, 1, 0])
  q = sqrt(y)
  m = max(b, q)
  r = reshape(m, shape=[6, 8])
  z = softmax(r, axis=-1)
  output z, t
}
IR
# reduce_ok NAME MAX OP REDUCE-ARGS...: reduces s.ir to $tmp/NAME.ir, at most
# MAX nodes (the op and its constant operands) with OP (an ERE) among them
reduce_ok() {
	name=$1 max=$2 op=$3
	shift 3
	rm -f "$tmp/$name.ir"
	"$GDCC_TOY" reduce "$tmp/s.ir" -o "$tmp/$name.ir" "$@" >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [ $st -ne 0 ] || [ ! -f "$tmp/$name.ir" ]; then
		bad "$name: exit $st"
		show "$tmp/err"
		return 1
	fi
	n=$(nodes "$tmp/$name.ir")
	[ "$n" -le "$max" ] && grep -qE " = $op\(" "$tmp/$name.ir" && ok || { bad "$name: not reduced to one $op"; show "$tmp/$name.ir"; }
	"$GDCC_TOY" "$tmp/$name.ir" 2>"$tmp/err" && ok || { bad "$name: the result does not verify"; show "$tmp/err"; }
}
# --error with the default command (gdcc -S -t toy {}): sqrt, transpose and
# softmax are unsupported on toy
if reduce_ok error-default 2 "(sqrt|transpose|softmax)" --error="is unsupported on toy" -t toy; then
	reproduce "$tmp/error-default.ir"
	[ $? -eq 1 ] && grep -q "is unsupported on toy" "$tmp/rep.err" && ok || { bad "error-default: the reproduce command"; show "$tmp/rep.err"; }
	grep -q '^# reproduce: .* -S -t toy .*error-default.ir >/dev/null$' "$tmp/error-default.ir" && ok || { bad "error-default: reproduce line"; head -3 "$tmp/error-default.ir"; }
fi
# a crash: killed by a signal (the command after --, {} the candidate's path)
if reduce_ok crash 2 sqrt --crash -- sh -c 'grep -q sqrt "$1" && kill -SEGV $$; exit 0' sh {}; then
	reproduce "$tmp/crash.ir"
	[ $? -eq 139 ] && ok || bad "crash: the reproduce command does not crash"
fi
# a crash: a sanitizer report (with exit status 1)
reduce_ok sanitizer 2 softmax --crash -- sh -c 'grep -q softmax "$1" && echo "==1==ERROR: AddressSanitizer: heap-buffer-overflow" >&2; exit 1' sh {}
# --exit: a signal counts as 128 + its number
reduce_ok exit139 2 transpose --exit=139 -- sh -c 'grep -q transpose "$1" && kill -SEGV $$; exit 0' sh {}
if reduce_ok exit3 3 max --exit=3 -- sh -c 'if grep -q " = max(" "$1"; then exit 3; fi' sh {}; then
	reproduce "$tmp/exit3.ir"
	[ $? -eq 3 ] && ok || bad "exit3: the reproduce command"
fi
# --error with a command: stderr only
reduce_ok error-cmd 3 add --error="an add" -- sh -c 'grep -q " = add(" "$1" && echo "an add" >&2; exit 0' sh {}
rm -f "$tmp/e.ir"
"$GDCC_TOY" reduce "$tmp/s.ir" -o "$tmp/e.ir" --error="an add" -- sh -c 'grep -q " = add(" "$1" && echo "an add"; exit 0' sh {} >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && [ ! -e "$tmp/e.ir" ] && grep -q 'does not fail' "$tmp/err" && ok || { bad "--error looked at stdout"; show "$tmp/err"; }
# --hang: past --timeout
start=$(date +%s)
reduce_ok hang 2 relu --hang --timeout=0.2 -- sh -c 'grep -q relu "$1" && sleep 20; exit 0' sh {}
[ $(($(date +%s) - start)) -lt 15 ] && ok || bad "hang: a hanging test was not stopped at --timeout"

# ---- npy constants: kept relative beside the model, absolute elsewhere ------------------
mkdir -p "$tmp/np/sub"
printf 'graph g {\n  const w : f32[2, 8] = fill(0.5)\n  y = identity(w)\n  output y\n}\n' >"$tmp/np/g.ir"
"$GDCC_TOY" run "$tmp/np/g.ir" --output y="$tmp/np/w.npy" >/dev/null 2>"$tmp/err" || { bad "writing w.npy"; show "$tmp/err"; }
cat >"$tmp/np/n.ir" <<'IR'
graph n {
  input x : f32[2, 8]
  const w : f32[2, 8] = npy("w.npy")
  a = add(x, w)
  b = relu(a)
  c = neg(b)
  output c
}
IR
for out in "$tmp/np/n.reduced.ir" "$tmp/np/sub/n.ir"; do
	"$GDCC_TOY" reduce "$tmp/np/n.ir" -o "$out" --error=npy -- sh -c 'grep -q npy "$1" && echo npy >&2; exit 0' sh {} >"$tmp/out" 2>"$tmp/err"
	st=$?
	[ $st -eq 0 ] && ok || { bad "npy: exit $st"; show "$tmp/err"; }
	case $out in
	*/sub/*) want="npy(\"$(cd "$tmp/np" && pwd -P)/w.npy\")" ;;
	*) want='npy("w.npy")' ;;
	esac
	grep -qF "$want" "$out" && ok || { bad "npy: no $want in"; show "$out"; }
	"$GDCC_TOY" "$out" 2>"$tmp/err" && ok || { bad "npy: $out does not verify"; show "$tmp/err"; }
done

# ---- the default output name; a model that does not fail; bad input -----------------------
cp "$tmp/s.ir" "$tmp/d.ir"
(cd "$tmp" && "$GDCC_TOY" reduce d.ir --exit=1 -t toy >out 2>err)
[ $? -eq 0 ] && [ -f "$tmp/d.reduced.ir" ] && ok || { bad "the default output name d.reduced.ir"; show "$tmp/err"; }
grep -q '^# reproduce: .* -S -t toy d.reduced.ir >/dev/null$' "$tmp/d.reduced.ir" && ok || { bad "reproduce line of d.reduced.ir"; head -3 "$tmp/d.reduced.ir"; }

# expect_error STATUS TEXT ARGS...: reduce fails with STATUS and TEXT, writing no file
expect_error() {
	want=$1 text=$2
	shift 2
	rm -f "$tmp/no.ir"
	"$GDCC_TOY" reduce "$@" >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [ $st -eq "$want" ] && grep -qF -- "$text" "$tmp/err"; then ok; else bad "reduce $*: exit $st (expected $want with '$text')"; show "$tmp/err"; fi
	if [ -e "$tmp/no.ir" ] || ls "$tmp"/*.tmp* >/dev/null 2>&1; then bad "reduce $*: left a file behind"; else ok; fi
}
expect_error 1 "does not fail" "$tmp/control.ir" --mismatch=x86-avx2-wrong -o "$tmp/no.ir"
expect_error 1 "exited with status 0 (wanted: exit status 4" "$tmp/control.ir" --mismatch=x86-avx2-wrong -o "$tmp/no.ir"
expect_error 1 "does not fail" "$tmp/s.ir" --crash -o "$tmp/no.ir" -- true {}
printf 'graph b {\n  input x : f32[4]\n  y = relu(x, alpha=1)\n  output y\n}\n' >"$tmp/bad.ir"
expect_error 1 "unknown attribute 'alpha'" "$tmp/bad.ir" --exit=1 -t toy -o "$tmp/no.ir"
expect_error 1 "cannot read model" "$tmp/none.ir" --exit=1 -t toy -o "$tmp/no.ir"
expect_error 2 "no model given" --exit=1 -t toy
expect_error 2 "no condition given" "$tmp/s.ir" -t toy -o "$tmp/no.ir"
expect_error 2 "more than one condition" "$tmp/s.ir" --crash --exit=1 -t toy -o "$tmp/no.ir"
expect_error 2 "more than one model" "$tmp/s.ir" "$tmp/d.ir" --crash -t toy -o "$tmp/no.ir"
expect_error 2 "unknown target 'nope'" "$tmp/s.ir" --mismatch=nope -o "$tmp/no.ir"
expect_error 2 "unknown target 'nope'" "$tmp/s.ir" --crash -t nope -o "$tmp/no.ir"
expect_error 2 "give no command after '--'" "$tmp/s.ir" --mismatch=x86-avx2 -o "$tmp/no.ir" -- true {}
expect_error 2 "has no {}" "$tmp/s.ir" --crash -o "$tmp/no.ir" -- true
expect_error 2 "no command after '--'" "$tmp/s.ir" --crash -o "$tmp/no.ir" --
expect_error 2 "or -t TARGET" "$tmp/s.ir" --crash -o "$tmp/no.ir"
expect_error 2 "--timeout needs a positive number" "$tmp/s.ir" --hang --timeout=0 -t toy -o "$tmp/no.ir"
expect_error 2 "--exit needs an exit status" "$tmp/s.ir" --exit=256 -t toy -o "$tmp/no.ir"
expect_error 2 "--vlen applies to --mismatch" "$tmp/s.ir" --crash --vlen=256 -t toy -o "$tmp/no.ir"
expect_error 2 "--vlen needs a power of two" "$tmp/s.ir" --mismatch=riscv-rvv --vlen=100 -o "$tmp/no.ir"
expect_error 2 "unknown option '--bogus'" "$tmp/s.ir" --crash --bogus -t toy -o "$tmp/no.ir"
expect_error 2 "name different targets" "$tmp/s.ir" --mismatch=x86-avx2 -t toy -o "$tmp/no.ir"
expect_error 2 "is the model itself" "$tmp/s.ir" --crash -t toy -o "$tmp/s.ir"
expect_error 2 "is an ONNX model" "$tmp/m.onnx" --crash -t toy -o "$tmp/no.ir"
expect_error 3 "cannot write '$tmp/nodir/no.ir'" "$tmp/s.ir" --crash -t toy -o "$tmp/nodir/no.ir"
# SIGTERM: the running test is killed, no output, no temporary files left
mkdir -p "$tmp/td"
TMPDIR="$tmp/td" "$GDCC_TOY" reduce "$tmp/s.ir" -o "$tmp/no.ir" --hang --timeout=60 -- sh -c 'sleep 60' sh {} >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
st=$?
[ $st -eq 143 ] && [ ! -e "$tmp/no.ir" ] && [ -z "$(ls "$tmp/td")" ] && ok || { bad "SIGTERM: exit $st, $(ls "$tmp/td" | wc -l) temporary folders left"; show "$tmp/err"; }
# --vlen and --seed go to gdcc run (the message quotes the command)
expect_error 1 "--check --vlen 256 --seed 7'" "$tmp/control.ir" --mismatch=riscv-rvv --vlen 256 --seed=7 -o "$tmp/no.ir"
"$GDCC_TOY" reduce --help >"$tmp/out" 2>&1 && grep -q -- '--mismatch=TARGET' "$tmp/out" && ok || bad "reduce --help"

echo "reduce: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
