#!/bin/sh
# `make fuzz` (tests/fuzz/README.md): build every fuzz target with clang and
# libFuzzer (ASan + UBSan) in a clang build under BUILDDIR/fuzz-build, then
# run each for FUZZ_SECONDS with its dictionary, from a work corpus in
# BUILDDIR/fuzz-out/NAME/corpus seeded from tests/fuzz/corpus/NAME and the
# repository's inputs of its kind.  Fails when any target found a crash, a
# hang (-timeout), too much memory (-rss_limit_mb), a leak or a sanitizer
# report; the inputs are in BUILDDIR/fuzz-out/NAME/artifacts/.
#
# Environment (set by the Makefile rule): SRCDIR, BUILDDIR, MAKE,
# FUZZ_NAMES (every target), FUZZ_TARGETS (those to run), FUZZ_SECONDS,
# FUZZ_CC; optionally FUZZ_FLAGS (more libFuzzer options).
set -u
: "${SRCDIR:?}" "${BUILDDIR:?}"
MAKE=${MAKE:-make}
FUZZ_CC=${FUZZ_CC:-clang}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_NAMES=${FUZZ_NAMES:-}
FUZZ_TARGETS=${FUZZ_TARGETS:-$FUZZ_NAMES}
FUZZ_FLAGS=${FUZZ_FLAGS:-}
sub=$BUILDDIR/fuzz-build
out=$BUILDDIR/fuzz-out

case $FUZZ_SECONDS in '' | *[!0-9]*) echo "fuzz: FUZZ_SECONDS='$FUZZ_SECONDS' is not a number of seconds" >&2; exit 2 ;; esac
for t in $FUZZ_TARGETS; do
	case " $FUZZ_NAMES " in *" $t "*) ;; *) echo "fuzz: unknown target '$t' (known: $FUZZ_NAMES)" >&2; exit 2 ;; esac
done

# ---- clang with libFuzzer? ----------------------------------------------------
mkdir -p "$out"
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$out/probe.c"
if ! "$FUZZ_CC" -fsanitize=fuzzer,address,undefined -o "$out/probe" "$out/probe.c" >"$out/probe.log" 2>&1; then
	echo "fuzz: $FUZZ_CC cannot build libFuzzer programs (Debian packages clang and libclang-rt-14-dev; FUZZ_CC= names another clang):" >&2
	sed 's/^/  | /' "$out/probe.log" >&2
	exit 2
fi
rm -f "$out/probe" "$out/probe.c" "$out/probe.log"

# ---- the clang build -------------------------------------------------------------
cflags='-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all'
mkdir -p "$sub"
if [ ! -f "$sub/config.status" ] || [ "$SRCDIR/configure" -nt "$sub/config.status" ]; then
	echo "fuzz: configuring the clang build in $sub"
	(cd "$sub" && "$SRCDIR/configure" -q CC="$FUZZ_CC" CFLAGS="$cflags") >"$sub/configure.out" 2>&1 || {
		grep -v "^rm: cannot remove 'core'" "$sub/configure.out" >&2
		echo "fuzz: configure failed in $sub (see $sub/config.log)" >&2
		exit 2
	}
fi
progs=
for t in $FUZZ_TARGETS; do progs="$progs tests/fuzz/fuzz-$t"; done
echo "fuzz: building$progs"
# (all first: the generated headers; ASan's leak check at exit would fail
# the build's own tools for nothing)
# (without the outer make's MAKEFLAGS: `make fuzz CFLAGS=...` must not reach
# the clang build)
submake() { env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES ASAN_OPTIONS=detect_leaks=0 $MAKE -s -j"$(nproc 2>/dev/null || echo 2)" -C "$sub" "$@"; }
submake all && submake $progs || { echo "fuzz: the clang build failed" >&2; exit 2; }

# ---- seeds -------------------------------------------------------------------------
# the files that seed target NAME: the inputs tests/fuzz_corpus.sh runs
. "$SRCDIR/tests/fuzz/inputs.sh"
seeds() { fuzz_inputs "$1"; }

dict_of() {
	case $1 in compile-*) d=ir ;; *) d=$1 ;; esac
	[ "$d" = tensorproto ] && [ ! -f "$SRCDIR/tests/fuzz/$d.dict" ] && d=onnx
	[ -f "$SRCDIR/tests/fuzz/$d.dict" ] && echo "$SRCDIR/tests/fuzz/$d.dict"
}

# ---- runs --------------------------------------------------------------------------
failed= summary=
for t in $FUZZ_TARGETS; do
	w=$out/$t
	mkdir -p "$w/corpus" "$w/artifacts"
	seeds "$t" | while IFS= read -r f; do
		rel=${f#"$SRCDIR"/}
		cp "$f" "$w/corpus/$(echo "$rel" | tr '/' '_')"
	done
	ls "$w/artifacts" >"$w/artifacts.before"
	dict=$(dict_of "$t")
	echo "fuzz: $t for ${FUZZ_SECONDS}s$([ -n "$dict" ] && echo ", dictionary ${dict#"$SRCDIR"/}"), log in ${w#"$BUILDDIR"/}/fuzz.log"
	# (run from an empty folder beside npy/, the .npy seeds: the model seeds'
	# npy("../npy/...") paths resolve as from tests/fuzz/corpus/ir)
	mkdir -p "$w/cwd"
	[ -d "$SRCDIR/tests/fuzz/corpus/npy" ] && ln -sfn "$SRCDIR/tests/fuzz/corpus/npy" "$w/npy"
	(cd "$w/cwd" && exec timeout $((FUZZ_SECONDS + 300)) "$sub/tests/fuzz/fuzz-$t" \
		-max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		${dict:+-dict="$dict"} -artifact_prefix="$w/artifacts/" $FUZZ_FLAGS "$w/corpus") \
		>"$w/fuzz.log" 2>&1 </dev/null
	st=$?
	ls "$w/artifacts" | comm -13 "$w/artifacts.before" - >"$w/artifacts.new"
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$w/fuzz.log" | tail -1)
	last=$(grep -E '^#[0-9]+' "$w/fuzz.log" | tail -1)
	# (-fork=N prints no stat:: lines: its last "#N:" counts the executions)
	[ -n "$execs" ] || execs=$(echo "$last" | sed -n 's/^#\([0-9]*\).*/\1/p')
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
	line="$t: ${execs:-?} executions, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}"
	if [ "$st" -ne 0 ] || [ -s "$w/artifacts.new" ]; then
		failed="$failed $t"
		line="$line, FAILED (exit $st)"
		echo "fuzz: $t FAILED (exit $st); the report:" >&2
		grep -E -A30 '^==[0-9]+==|runtime error|^fuzz: oracle|ALARM|out-of-memory|Test unit written' "$w/fuzz.log" | head -60 | sed 's/^/  | /' >&2
		sed "s|^|  input: $w/artifacts/|" "$w/artifacts.new" >&2
	fi
	echo "fuzz: $line"
	summary="$summary
  $line"
done
echo "fuzz: summary (${FUZZ_SECONDS}s each):$summary"
if [ -n "$failed" ]; then
	echo "fuzz: FAILED:$failed" >&2
	exit 1
fi
echo "fuzz: no crash, hang, leak or sanitizer report"
