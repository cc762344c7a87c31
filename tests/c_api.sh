#!/bin/sh
# The C interface (docs/c-api.md): gdcc -c and --header for examples/mlp.ir
# on x86-avx2, examples/c-api/main.c compiled against the header and linked
# with the object, run, its outputs compared with the reference
# interpreter's on the same input (and, as a control, found to differ from
# those of another input); the same with gdcc -S and its weights file,
# assembled from another folder; the header's identifiers for awkward value
# names; and bad uses of -c and --header: a precise error, a nonzero exit,
# no file left behind.  Run by `make check` with GDCC and SRCDIR set.
set -u
GDCC=${GDCC:-./gdcc}
SRCDIR=${SRCDIR:-.}
CC=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# gdcc -c's temporary folders go here, which must be empty at the end
mkdir "$tmp/t"
TMPDIR=$tmp/t
export TMPDIR
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# run DESCRIPTION COMMAND...: expect exit 0
run() {
	what=$1
	shift
	if "$@" >"$tmp/out" 2>"$tmp/err"; then ok; else bad "$what: exit $?"; sed 's/^/  | /' "$tmp/out" "$tmp/err"; fi
}
# expect_fail STATUS TEXT DESCRIPTION COMMAND...: that exit status, TEXT on stderr
expect_fail() {
	want=$1 text=$2 what=$3
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -ne "$want" ]; then bad "$what: exit $got, expected $want"; sed 's/^/  | /' "$tmp/err"; return; fi
	if grep -qF -- "$text" "$tmp/err"; then ok; else bad "$what: no '$text' in:"; sed 's/^/  | /' "$tmp/err"; fi
}
# no_files DESCRIPTION DIR: DIR holds nothing (no output, no temporary)
no_files() {
	left=$(ls -A "$2")
	if [ -z "$left" ]; then ok; else bad "$1: left behind: $left"; fi
}

mlp=$SRCDIR/examples/mlp.ir
main=$(cd "$SRCDIR" && pwd)/examples/c-api/main.c

# ---- gdcc -c, the header, a C program ------------------------------------------
mkdir "$tmp/c"
run "gdcc -c" "$GDCC" -c "$mlp" -t x86-avx2 -o "$tmp/c/mlp.o" --header="$tmp/c/mlp.h"
[ -s "$tmp/c/mlp.o" ] && [ -s "$tmp/c/mlp.h" ] && ok || bad "gdcc -c wrote no object or no header"
ls "$tmp/c" | grep -qv '^mlp\.[oh]$' && bad "gdcc -c left other files: $(ls "$tmp/c")" || ok
run "cc main.c mlp.o" "$CC" -std=c17 -Wall -Wextra -Werror -I"$tmp/c" "$main" "$tmp/c/mlp.o" -lm -o "$tmp/c/demo"
run "demo write-input" "$tmp/c/demo" write-input "$tmp/x.npy"
run "gdcc run (reference)" "$GDCC" run "$mlp" --input x="$tmp/x.npy" --output logits="$tmp/logits.npy" \
	--output probs="$tmp/probs.npy"
run "demo check against the reference" "$tmp/c/demo" check "$tmp/logits.npy" "$tmp/probs.npy"
grep -q '^probs: .*: ok$' "$tmp/out" && grep -q '^logits: .*: ok$' "$tmp/out" && ok || bad "demo check: $(cat "$tmp/out")"
# the control: the reference on another input must not match
run "gdcc run (another input)" "$GDCC" run "$mlp" --seed 5 --output logits="$tmp/l5.npy" --output probs="$tmp/p5.npy"
"$tmp/c/demo" check "$tmp/l5.npy" "$tmp/p5.npy" >"$tmp/out" 2>&1
st=$?
[ "$st" -eq 1 ] && grep -q MISMATCH "$tmp/out" && ok || bad "demo check passed against another input's outputs (exit $st)"
# the symbols: the entry point defined, the data local
nm "$tmp/c/mlp.o" | grep -q ' T gdcc_entry$' && ok || bad "mlp.o does not define gdcc_entry"
nm "$tmp/c/mlp.o" | grep -q ' [A-Z] gdcc_data' && bad "mlp.o exports its data symbols" || ok
# --entry: two models in one program
run "gdcc -c --entry" "$GDCC" -c "$mlp" -t x86-avx2 -o "$tmp/c/other.o" --entry=other_entry --header="$tmp/c/other.h"
nm "$tmp/c/other.o" | grep -q ' T other_entry$' && ok || bad "--entry: no other_entry in the object"
grep -q 'int other_entry(void \*\*args);' "$tmp/c/other.h" && grep -q 'static inline int other_run(' "$tmp/c/other.h" \
	&& ok || bad "--entry/--header: other.h declares no other_entry / other_run"

# ---- gdcc -S, its weights file, assembled from another folder --------------------
mkdir "$tmp/s" "$tmp/elsewhere"
run "gdcc -S" "$GDCC" -S "$mlp" -t x86-avx2 -o "$tmp/s/mlp.s" --header="$tmp/s/mlp.h"
[ -s "$tmp/s/mlp.weights.bin" ] && ok || bad "gdcc -S wrote no mlp.weights.bin"
grep -q '^	\.incbin "'"$tmp"'/s/mlp\.weights\.bin", 0, ' "$tmp/s/mlp.s" && ok || bad "mlp.s has no .incbin of its weights file"
grep -q '^	\.long' "$tmp/s/mlp.s" && bad "mlp.s still has the weights as .long text" || ok
grep -q '"weights": {"file": "'"$tmp"'/s/mlp.weights.bin", "offset": 0, "bytes": ' "$tmp/s/mlp.s.json" && ok \
	|| bad "the manifest names no weights file"
(cd "$tmp/elsewhere" && "$CC" -std=c17 -I../s "$main" ../s/mlp.s -lm -o demo) >"$tmp/err" 2>&1 && ok \
	|| { bad "cc main.c mlp.s from another folder"; sed 's/^/  | /' "$tmp/err"; }
run "demo (from -S) check" "$tmp/elsewhere/demo" check "$tmp/logits.npy" "$tmp/probs.npy"
# --weights=inline: one self-contained file, the same code
run "gdcc -S --weights=inline" "$GDCC" -S "$mlp" -t x86-avx2 -o "$tmp/s/inline.s" --weights=inline
[ -e "$tmp/s/inline.weights.bin" ] && bad "--weights=inline wrote a weights file" || ok
grep -q '^	\.long 0x' "$tmp/s/inline.s" && ! grep -q incbin "$tmp/s/inline.s" && ok || bad "--weights=inline: no .long data"
"$CC" -c -o "$tmp/s/inline.o" "$tmp/s/inline.s" && "$CC" -c -o "$tmp/s/bin.o" "$tmp/s/mlp.s" && ok || bad "assembling"
if command -v objcopy >/dev/null; then
	objcopy -O binary -j .rodata "$tmp/s/inline.o" "$tmp/s/inline.rodata" &&
		objcopy -O binary -j .rodata "$tmp/s/bin.o" "$tmp/s/bin.rodata" &&
		cmp -s "$tmp/s/inline.rodata" "$tmp/s/bin.rodata" && ok || bad "inline and .incbin data differ in .rodata"
fi
# --weights=FILE, and standard output (the data inline: nowhere to put a file)
run "gdcc -S --weights=FILE" "$GDCC" -S "$mlp" -t x86-avx2 -o "$tmp/s/named.s" --weights="$tmp/s/w.bin"
[ -s "$tmp/s/w.bin" ] && grep -q "incbin \"$tmp/s/w.bin\"" "$tmp/s/named.s" && ok || bad "--weights=FILE"
"$GDCC" -S "$mlp" -t x86-avx2 >"$tmp/s/stdout.s" 2>"$tmp/err" && grep -q '^	\.long 0x' "$tmp/s/stdout.s" && ok \
	|| bad "-S to standard output: data not inline"
# a model without constant data writes no weights file (and removes a stale one)
printf 'graph nodata {\n  input x : f32[4]\n  y = add(x, x)\n  output y\n}\n' >"$tmp/nodata.ir"
echo stale >"$tmp/s/nodata.weights.bin"
run "gdcc -S, no data" "$GDCC" -S "$tmp/nodata.ir" -t x86-avx2 -o "$tmp/s/nodata.s"
[ -e "$tmp/s/nodata.weights.bin" ] && bad "a stale nodata.weights.bin was left" || ok
# riscv-rvv: the object through its .md's assembler
if command -v riscv64-linux-gnu-gcc >/dev/null; then
	run "gdcc -c riscv-rvv" "$GDCC" -c "$mlp" -t riscv-rvv -o "$tmp/c/rv.o"
	case $(od -An -tx1 -j18 -N2 "$tmp/c/rv.o" | tr -d ' ') in
	f300) ok ;;
	*) bad "riscv-rvv: rv.o is not a RISC-V object" ;;
	esac
fi

# ---- the header's identifiers --------------------------------------------------
cat >"$tmp/names.ir" <<'IR'
graph names {
  input in.1 : f32[2, 3]
  input In_1 : f32[2, 3]
  input int : f32[2, 3]
  input workspace : f32[2, 3]
  input _2x : i64[2]
  a = add(in.1, In_1)
  b = add(a, int)
  c = add(b, workspace)
  output c
  output a
}
IR
run "gdcc -c names" "$GDCC" -c "$tmp/names.ir" -t x86-avx2 -o "$tmp/c/names.o" --header="$tmp/c/9-names.h"
for want in 'static inline int v9_names_run(const float \*in_1, const float \*In_1_2, const float \*int_, const float \*workspace_, const int64_t \*v2x, float \*c, float \*a, void \*workspace)' \
	'#define V9_NAMES_IN_1_2_NAME "In_1"' '#define V9_NAMES_INT__BYTES ((size_t)24u)' '#define V9_NAMES_V2X_TYPE int64_t' \
	'#ifndef GDCC_V9_NAMES_H'; do
	grep -q "$want" "$tmp/c/9-names.h" && ok || { bad "names: no '$want'"; shown=1; }
done
[ -n "${shown:-}" ] && sed 's/^/  | /' "$tmp/c/9-names.h"
printf '#include "9-names.h"\nint main(void) { return 0; }\n' >"$tmp/c/names.c"
run "the names header compiles" "$CC" -std=c17 -Wall -Wextra -Werror -pedantic -I"$tmp/c" -c -o "$tmp/c/names-main.o" "$tmp/c/names.c"
if command -v c++ >/dev/null; then
	run "the header compiles as C++" c++ -Wall -Wextra -Werror -I"$tmp/c" -x c++ -c -o "$tmp/c/names-cxx.o" "$tmp/c/names.c"
fi

# ---- bad uses: a precise error, nothing left behind ------------------------------
mkdir "$tmp/bad"
expect_fail 2 "-c: target 'npu-systolic' has no object files" "-c on npu-systolic" \
	"$GDCC" -c "$mlp" -t npu-systolic -o "$tmp/bad/m.o"
no_files "-c on npu-systolic" "$tmp/bad"
expect_fail 3 "cannot create '$tmp/bad/none/m.o': No such file or directory" "-c into a missing folder" \
	"$GDCC" -c "$mlp" -t x86-avx2 -o "$tmp/bad/none/m.o"
no_files "-c into a missing folder" "$tmp/bad"
touch "$tmp/bad/file"
expect_fail 3 "cannot create '$tmp/bad/file/m.o': Not a directory" "-c under a file" \
	"$GDCC" -c "$mlp" -t x86-avx2 -o "$tmp/bad/file/m.o"
rm "$tmp/bad/file"
expect_fail 3 "cannot create '$tmp/bad/none/m.h'" "--header into a missing folder" \
	"$GDCC" -c "$mlp" -t x86-avx2 -o "$tmp/bad/m.o" --header="$tmp/bad/none/m.h"
no_files "--header into a missing folder: no object either" "$tmp/bad"
expect_fail 3 "cannot create '$tmp/bad/none/w.bin'" "--weights into a missing folder" \
	"$GDCC" -S "$mlp" -t x86-avx2 -o "$tmp/bad/m.s" --weights="$tmp/bad/none/w.bin"
no_files "--weights into a missing folder: no assembly either" "$tmp/bad"
expect_fail 3 "x86-avx2: assembling failed (false" "-c, the assembler fails" \
	"$GDCC" -c "$mlp" -t x86-avx2 -o "$tmp/bad/m.o" --param assemble=false
no_files "-c, the assembler fails" "$tmp/bad"
expect_fail 2 "-c writes an object file, not to standard output" "-c -o -" "$GDCC" -c "$mlp" -t x86-avx2 -o -
expect_fail 2 "this output needs a target" "-c without -t" "$GDCC" -c "$mlp" -o "$tmp/bad/m.o"
expect_fail 2 "-S and -c: choose one" "-S -c" "$GDCC" -S -c "$mlp" -t x86-avx2 -o "$tmp/bad/m.o"
expect_fail 2 "--header writes the C header of a compilation" "--header without -S/-c" "$GDCC" "$mlp" --header="$tmp/bad/m.h"
expect_fail 2 "--weights applies to -S" "-c --weights" "$GDCC" -c "$mlp" -t x86-avx2 -o "$tmp/bad/m.o" --weights=inline
expect_fail 2 "the entry function's name must be a C identifier" "--entry=1x" "$GDCC" -S "$mlp" -t x86-avx2 --entry=1x
no_files "bad command lines" "$tmp/bad"
# -c's default output: MODEL's name with .o, in the working folder
(cd "$tmp/bad" && "$GDCC" -c "$tmp/nodata.ir" -t x86-avx2) && [ -s "$tmp/bad/nodata.o" ] && ok || bad "-c without -o: no nodata.o"

no_files "gdcc -c's temporary folders (\$TMPDIR)" "$tmp/t"

echo "c_api: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
