#!/bin/sh
# Differential testing (docs/testing.md): for each seed, tests/diff/gengraph
# writes a random valid graph over the whole op table; every target compiles
# it, runs it and compares with the reference interpreter by the driver's own
# checker (`gdcc run MODEL -t TARGET --check`, exit 4 on a mismatch).
#
#   SEEDS     the seeds: numbers and ranges, "1 2 3" or "1-500" (default 1-100)
#   MODELS    instead of seeds: model files to run (e.g. tests/diff/found/*.ir),
#             with inputs from --seed ${MODEL_SEED:-0}
#   NODES     ops per graph (default 8)
#   GENFLAGS  more gengraph options (e.g. "--op conv --op gather": graphs with those)
#   TARGETS   the targets, TARGET or TARGET:VLEN (default: x86-avx2,
#             riscv-rvv at VLEN 128, 256 and 512, npu-systolic)
#   LEVELS    optimization options to run each target at, e.g. "-O0 -O1 -O2"
#             (default empty: the driver's default only)
#   JOBS      seeds run in parallel (default 1)
#   GDCC      the gdcc binary (default ./gdcc)
#   GENGRAPH  the generator (default: tests/diff/gengraph beside gdcc)
#   EVIDENCE  JSON Lines evidence, one record per seed and target
#             (default tests/diff-results.jsonl under the current folder)
#   DIFF_OUT  where failing models, their outputs and reduced cases go
#             (default tests/diff-failures under the current folder)
#   DIFF_TIMEOUT         seconds one run may take (default 60)
#   DIFF_REDUCE          0: do not call `gdcc reduce` on a failure (default 1)
#   DIFF_REDUCE_TIMEOUT  seconds one reduction may take (gdcc reduce --max-time;
#                        default 300)
#   DIFF_VERBOSE         1: print a line for every passing case too
#
# Each case is passed, failed (a mismatch, a crash, a timeout, an error on a
# valid model, a run failure, or a generator that fails its self-check),
# unsupported (the driver rejects an op on that target with the legality
# table's reason: printed, never counted as passed) or skipped (riscv-rvv
# without qemu-riscv64 and the cross compiler).  Every failure prints its
# seed, target and the command that reproduces it, is reduced with
# `gdcc reduce` when that is there, and is recorded in the evidence.
# The last line is "diff: N passed, N failed".  Exit status: 0 no failure,
# 1 a failure, 99 a setup error.
# (Lists in variables, $MODELS, $SEEDS, commands, are split on purpose.)
# shellcheck disable=SC2086
set -u

abspath() { # an absolute path for $1 (its folder must exist)
	(cd "$(dirname "$1")" 2>/dev/null && printf '%s/%s\n' "$(pwd)" "$(basename "$1")") || printf '%s\n' "$1"
}
GDCC=$(abspath "${GDCC:-./gdcc}")
GENGRAPH=$(abspath "${GENGRAPH:-$(dirname "$GDCC")/tests/diff/gengraph}")
NODES=${NODES:-8}
GENFLAGS=${GENFLAGS:-}
TARGETS=${TARGETS:-x86-avx2 riscv-rvv:128 riscv-rvv:256 riscv-rvv:512 npu-systolic}
LEVELS=${LEVELS:-}
JOBS=${JOBS:-1}
DIFF_TIMEOUT=${DIFF_TIMEOUT:-60}
DIFF_REDUCE=${DIFF_REDUCE:-1}
DIFF_REDUCE_TIMEOUT=${DIFF_REDUCE_TIMEOUT:-300}
DIFF_VERBOSE=${DIFF_VERBOSE:-0}
MODELS=${MODELS:-}
MODEL_SEED=${MODEL_SEED:-0}
# The driver's messages for an op a target declares it cannot run (as
# tests/conformance/suite.py counts them).
UNSUPPORTED_RE='is unsupported on|the backend does not lower this op|cannot run on|the backend does not copy it yet'
# A sanitizer's report (an ASan+UBSan build exits 1 with one).
SANITIZER_RE='ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error: '

# ---- one case, run by a worker: `run.sh --case ID` -------------------------
json_str() { # a JSON string of $1 (control characters dropped)
	printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\010\013-\037' | tr '\t\n' '  ' |
		sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')"
}
json_or_null() { if [ -n "$1" ]; then json_str "$1"; else printf null; fi; }

# The first error message of a stderr file, without its location.
first_error() {
	awk '{ i = index($0, "error: "); if (i) { print substr($0, i + 7); exit } }' "$1" | cut -c 1-300
}

# run_case ID: ID is a seed, or m:N for model N of MODELS.  Writes
# $WORK/ID.log (what to print), $WORK/ID.res (one status per line) and
# $WORK/ID.jsonl (the evidence).
run_case() {
	id=$1
	log=$WORK/$id.log res=$WORK/$id.res ev=$WORK/$id.jsonl
	: >"$log"
	: >"$res"
	: >"$ev"
	case $id in
	m:*)
		k=${id#m:}
		model=$(printf '%s\n' $MODELS | sed -n "${k}p")
		seed=$MODEL_SEED
		label="model $model"
		gen_cmd=
		;;
	*)
		seed=$id
		model=$WORK/diff-$seed.ir
		label="seed $seed"
		gen_cmd="$GENGRAPH $seed -n $NODES${GENFLAGS:+ $GENFLAGS}"
		if ! $gen_cmd >"$model" 2>"$WORK/$id.gen.err"; then
			mkdir -p "$DIFF_OUT"
			cp "$WORK/$id.gen.err" "$DIFF_OUT/seed$seed.gengraph.err"
			echo "FAIL: $label: gengraph fails its self-check: $(head -n 1 "$WORK/$id.gen.err")" >>"$log"
			echo "  reproduce: $gen_cmd" >>"$log"
			echo fail gengraph >>"$res"
			{
				printf '{"schema": "gdcc.diff", "schema_version": 1, "seed": %s, "nodes": %s, ' "$seed" "$NODES"
				printf '"target": "gengraph", "status": "fail", "reason": %s, "command": %s, ' \
					"$(json_str "generator self-check: $(head -n 1 "$WORK/$id.gen.err")")" "$(json_str "$gen_cmd")"
				printf '"model": null, "reduced": null, "gdcc_version": %s}\n' "$(json_str "$VERSION")"
			} >>"$ev"
			return
		fi
		;;
	esac
	for spec in $TARGETS; do
		target=${spec%%:*}
		vlen=
		[ "$spec" != "$target" ] && vlen=${spec#*:}
		for level in ${LEVELS:-_}; do
			[ "$level" = _ ] && level=
			name=$target${vlen:+@vlen$vlen}${level:+ $level}
			opts="-t $target${vlen:+ --vlen $vlen}${level:+ $level}"
			if [ -n "$gen_cmd" ]; then
				cmd="$gen_cmd > diff-$seed.ir && $GDCC run diff-$seed.ir $opts --check --seed $seed"
			else
				cmd="$GDCC run $model $opts --check --seed $seed"
			fi
			reason='' status='' reduced='' saved='' san=''
			if [ "$target" = riscv-rvv ] && [ -n "$RISCV_SKIP" ]; then
				status=skip reason=$RISCV_SKIP
			else
				base=$WORK/$id.$(printf '%s' "$name" | tr ' /:@' '____')
				# shellcheck disable=SC2086
				$TIMEOUT "$GDCC" run "$model" $opts --check --seed "$seed" >"$base.out" 2>"$base.err" </dev/null
				rc=$?
				san=$(grep -E -m 1 "$SANITIZER_RE" "$base.err" | sed 's/^==[0-9]*==//' | cut -c 1-300)
				if [ -n "$san" ]; then
					status=fail reason="sanitizer: $san"
				elif [ $rc -eq 0 ] && grep -q ': ok$' "$base.out" && ! grep -q 'MISMATCH' "$base.out"; then
					status=pass
				elif [ $rc -eq 1 ] && grep -Eq "$UNSUPPORTED_RE" "$base.err"; then
					status=unsupported reason=$(first_error "$base.err")
				else
					status=fail
					case $rc in
					4) reason="mismatch: $(sed -n 's/^\([^:]*\): max abs error \([^,]*\), max rel error [^,]*, \([0-9]* of [0-9]*\) outside.*MISMATCH$/\1 (\3 outside the tolerance, max abs error \2)/p' "$base.out" |
						tr '\n' ';' | sed 's/;$//; s/;/; /g')" ;;
					124 | 137) reason="timeout after ${DIFF_TIMEOUT}s" ;;
					0) reason="exit 0 without a passing comparison" ;;
					*)
						if [ $rc -gt 128 ]; then
							reason="crash: signal $((rc - 128))"
						else
							reason="exit $rc: $(first_error "$base.err")"
						fi
						;;
					esac
				fi
			fi
			case $status in
			pass)
				[ "$DIFF_VERBOSE" = 1 ] && echo "PASS: $label $name" >>"$log"
				;;
			unsupported) echo "UNSUPPORTED: $label $name: $reason" >>"$log" ;;
			fail)
				mkdir -p "$DIFF_OUT"
				stem=$(basename "$model" .ir)
				saved=$DIFF_OUT/$stem.ir
				cp "$model" "$saved"
				tag=$(printf '%s' "$name" | tr ' /:@' '____')
				cp "$base.out" "$DIFF_OUT/$stem.$tag.out"
				cp "$base.err" "$DIFF_OUT/$stem.$tag.err"
				{
					echo "FAIL: $label $name: $reason"
					echo "  reproduce: $cmd"
					echo "  model: $saved"
				} >>"$log"
				reduce_case
				;;
			esac
			echo "$status $name" >>"$res"
			{
				printf '{"schema": "gdcc.diff", "schema_version": 1, "seed": %s, ' "$seed"
				[ -n "$gen_cmd" ] && printf '"nodes": %s, ' "$NODES"
				[ -z "$gen_cmd" ] && printf '"model_file": %s, ' "$(json_str "$model")"
				printf '"target": %s, "vlen": %s, "level": %s, "status": "%s", "reason": %s, ' \
					"$(json_str "$target")" "${vlen:-null}" "$(json_or_null "$level")" "$status" "$(json_or_null "$reason")"
				printf '"command": %s, "model": %s, "reduced": %s, "gdcc_version": %s}\n' \
					"$(json_str "$cmd")" "$(json_or_null "$saved")" \
					"$(json_or_null "$reduced")" "$(json_str "$VERSION")"
			} >>"$ev"
		done
	done
}

# Reduce the failing case of run_case (status, rc, opts, saved, base):
# sets reduced to the reduced model's path when that worked.
reduce_case() {
	if [ "$DIFF_REDUCE" != 1 ]; then
		return
	fi
	if [ -z "$HAVE_REDUCE" ]; then
		echo "  not reduced: this gdcc has no 'gdcc reduce' ('gdcc reduce --help' does not describe it)" >>"$log"
		return
	fi
	out=$DIFF_OUT/$stem.$tag.reduced.ir
	rlog=$DIFF_OUT/$stem.$tag.reduce.log
	runcmd="$GDCC run {} $opts --check --seed $seed"
	case $rc in
	124 | 137)
		set -- --hang --timeout="$DIFF_TIMEOUT" -- $runcmd
		;;
	4)
		if [ -z "$level" ]; then
			set -- --mismatch="$target" --seed="$seed" ${vlen:+--vlen="$vlen"}
		else
			set -- --exit=4 -- $runcmd
		fi
		;;
	*)
		if [ -n "$san" ] || [ "$rc" -gt 128 ]; then
			set -- --crash -- $runcmd # (a sanitizer's report counts)
		elif [ "$rc" -eq 1 ] && text=$(first_error "$base.err" | sed "s/[[('0-9].*//" | sed 's/[ :]*$//') &&
			[ -n "$text" ]; then
			# (the message's stable part: up to the first shape, name or number)
			set -- --error="$text" -- $runcmd
		else
			set -- --exit="$rc" -- $runcmd
		fi
		;;
	esac
	cond=$1
	shift
	if $RTIMEOUT "$GDCC" reduce "$saved" "$cond" -o "$out" --max-time="$DIFF_REDUCE_TIMEOUT" "$@" >"$rlog" 2>&1 </dev/null; then
		reduced=$out
	elif [ "$rc" -eq 4 ] && [ -z "$level" ] &&
		$RTIMEOUT "$GDCC" reduce "$saved" --exit=4 -o "$out" --max-time="$DIFF_REDUCE_TIMEOUT" -- $runcmd >>"$rlog" 2>&1 </dev/null; then
		# (--mismatch did not see it: the same run, as a command)
		reduced=$out
	fi
	if [ -n "$reduced" ]; then
		echo "  reduced: $reduced ($(grep -c ' = ' "$reduced") statements: gdcc reduce $saved $cond${*:+ $*})" >>"$log"
	else
		echo "  not reduced: gdcc reduce failed (see $rlog)" >>"$log"
	fi
}

# Compiled programs start with their workspace and outputs filled with 0xff,
# not zeros (runtime/harness.c, npusim): a read of a byte nothing wrote, or
# of a value whose bytes a plan gave to another, shows as a mismatch.
GDCC_RUN_FILL=${GDCC_RUN_FILL:-0xff}
export_settings() {
	export GDCC_RUN_FILL GDCC GENGRAPH GENFLAGS NODES TARGETS LEVELS DIFF_TIMEOUT DIFF_REDUCE DIFF_REDUCE_TIMEOUT DIFF_VERBOSE MODELS \
		MODEL_SEED WORK DIFF_OUT VERSION TIMEOUT RTIMEOUT RISCV_SKIP HAVE_REDUCE
}

if [ "${1:-}" = --case ]; then
	run_case "$2"
	cat "$WORK/$2.log"
	exit 0
fi

# ---- setup -------------------------------------------------------------------
if [ ! -x "$GDCC" ]; then
	echo "diff: error: no gdcc at $GDCC (set GDCC)" >&2
	exit 99
fi
if [ -z "$MODELS" ] && [ ! -x "$GENGRAPH" ]; then
	echo "diff: error: no gengraph at $GENGRAPH (set GENGRAPH; make tests/diff/gengraph)" >&2
	exit 99
fi
VERSION=$("$GDCC" --version | sed -n '1s/^gdcc //p')
if command -v timeout >/dev/null 2>&1; then
	# (reduce stops itself after --max-time; this is a backstop)
	TIMEOUT="timeout $DIFF_TIMEOUT" RTIMEOUT="timeout $((DIFF_REDUCE_TIMEOUT + 120))"
else
	TIMEOUT='' RTIMEOUT=''
fi
RISCV_SKIP=
# (where the driver finds its run harness: GDCC_RUNTIME_DIR, else its build's
# runtime/; a gdcc in tests/ is tests/gdcc_toy)
rtdir=${GDCC_RUNTIME_DIR:-$(dirname "$GDCC")/runtime}
[ -d "$rtdir" ] || [ -n "${GDCC_RUNTIME_DIR:-}" ] || rtdir=$(dirname "$(dirname "$GDCC")")/runtime
if ! command -v qemu-riscv64 >/dev/null 2>&1; then
	RISCV_SKIP="qemu-riscv64 is not installed (Debian qemu-user)"
elif ! command -v riscv64-linux-gnu-gcc >/dev/null 2>&1; then
	RISCV_SKIP="riscv64-linux-gnu-gcc is not installed (Debian gcc-riscv64-linux-gnu)"
elif [ ! -f "$rtdir/harness-riscv64.o" ]; then
	RISCV_SKIP="no RISC-V run harness ($rtdir/harness-riscv64.o: configure found no cross compiler)"
fi
HAVE_REDUCE=
if "$GDCC" reduce --help 2>&1 | grep -q -e '--mismatch'; then
	HAVE_REDUCE=1
fi
if [ -z "${EVIDENCE:-}" ]; then
	mkdir -p tests || exit 99
	EVIDENCE=$(pwd)/tests/diff-results.jsonl
fi
case $EVIDENCE in /*) ;; *) EVIDENCE=$(pwd)/$EVIDENCE ;; esac
DIFF_OUT=${DIFF_OUT:-$(pwd)/tests/diff-failures}
case $DIFF_OUT in /*) ;; *) DIFF_OUT=$(pwd)/$DIFF_OUT ;; esac

# The case list: seeds (ranges expanded) or models.
if [ -n "$MODELS" ]; then
	ids=$(printf '%s\n' $MODELS | awk '{print "m:" NR}')
else
	ids=$(printf '%s\n' ${SEEDS:-1-100} | awk -F- '
		/^[0-9]+$/ { print; next }
		/^[0-9]+-[0-9]+$/ { for (i = $1; i <= $2; i++) print i; next }
		{ print "bad:" $0 }')
	if printf '%s\n' "$ids" | grep -q '^bad:'; then
		echo "diff: error: SEEDS takes numbers and ranges like 1-500, got '$(printf '%s\n' "$ids" | sed -n 's/^bad://p' | head -n 1)'" >&2
		exit 99
	fi
fi
ncases=$(printf '%s\n' $ids | wc -l | tr -d ' ')

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gdcc-diff.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
trap 'rm -rf "$WORK"; exit 130' INT TERM
export_settings

if [ -n "$MODELS" ]; then what="$ncases models"; else what="$ncases seeds, $NODES ops each"; fi
echo "diff: $what, targets: $TARGETS${LEVELS:+, levels: $LEVELS}, $JOBS at a time"
case " $TARGETS" in *" riscv-rvv"*) [ -n "$RISCV_SKIP" ] && echo "diff: riscv-rvv cases skipped: $RISCV_SKIP" ;; esac
[ -z "$HAVE_REDUCE" ] && [ "$DIFF_REDUCE" = 1 ] && echo "diff: failures are not reduced: this gdcc has no 'gdcc reduce'"

# Every gengraph op must be in the op table and every op in it generated
# (but the collectives, which only the sharding pass inserts: no target
# compiles them outside a program per device).
passed=0 failed=0 unsupported=0 skipped=0
if [ -z "$MODELS" ]; then
	"$GDCC" --list-ops | awk '/^[a-z]/ && !/\[collective: / {print $1}' | sort >"$WORK/ops.table"
	"$GENGRAPH" --ops | sort >"$WORK/ops.gen"
	if cmp -s "$WORK/ops.table" "$WORK/ops.gen"; then
		passed=$((passed + 1))
		echo "PASS: coverage: gengraph generates all $(wc -l <"$WORK/ops.table" | tr -d ' ') ops of 'gdcc --list-ops'"
	else
		failed=$((failed + 1))
		echo "FAIL: coverage: 'gengraph --ops' and 'gdcc --list-ops' differ (< only in the op table, > only in gengraph):"
		diff "$WORK/ops.table" "$WORK/ops.gen" | grep '^[<>]' | sed 's/^/  /'
	fi
fi

printf '%s\n' $ids | xargs -P "$JOBS" -n 1 sh "$0" --case

: >"$EVIDENCE"
for id in $ids; do
	cat "$WORK/$id.jsonl" >>"$EVIDENCE" 2>/dev/null
	if [ ! -f "$WORK/$id.res" ]; then
		echo "FAIL: case $id: the worker did not finish"
		failed=$((failed + 1))
		continue
	fi
	while read -r st _; do
		case $st in
		pass) passed=$((passed + 1)) ;;
		fail) failed=$((failed + 1)) ;;
		unsupported) unsupported=$((unsupported + 1)) ;;
		skip) skipped=$((skipped + 1)) ;;
		esac
	done <"$WORK/$id.res"
done
# per target
cat "$WORK"/*.res 2>/dev/null | awk '
	{ t = $2; for (i = 3; i <= NF; i++) t = t " " $i; n[t]++; c[t, $1]++; if (!(t in seen)) { seen[t] = 1; order[++k] = t } }
	END { for (i = 1; i <= k; i++) { t = order[i]; printf "diff: %-22s %4d passed, %d failed, %d unsupported, %d skipped\n", t, c[t, "pass"], c[t, "fail"], c[t, "unsupported"], c[t, "skip"] } }'
echo "diff: evidence in $EVIDENCE${HAVE_REDUCE:+}"
[ $failed -gt 0 ] && echo "diff: failing models, outputs and reduced cases in $DIFF_OUT"
echo "diff: $unsupported unsupported (with the target's reason, not counted as passed), $skipped skipped"
echo "diff: $passed passed, $failed failed"
[ $failed -eq 0 ]
