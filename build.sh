#!/bin/sh
# One entry point for people and CI (see README.md).
#   ./build.sh          install missing Debian packages, build, run the examples
#   ./build.sh check    the whole test suite: a normal build and an ASan+UBSan build
#                       (with CI=true, also a 20-second fuzz pass per fuzz target)
#   ./build.sh deps     only install the missing Debian packages (.ci/packages)
# Builds happen out of tree, in build/ and build-san/.
set -eu
top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
jobs=$(nproc 2>/dev/null || echo 2)

deps() {
	missing=
	for p in $(cat .ci/packages); do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "build.sh: installing Debian packages:$missing"
	sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
}

configure() { # DIR [configure options]
	dir=$1
	shift
	[ -x configure ] || autoreconf -fi
	mkdir -p "$dir"
	# Reconfigure when configure is newer than the build's config.status.
	# (and when the options differ from the ones it was configured with)
	if [ ! -f "$dir/config.status" ] || [ configure -nt "$dir/config.status" ] ||
	   [ "$(cat "$dir/.build-options" 2>/dev/null)" != "$*" ]; then
		# (autoconf's probes try `rm -f core`, which names our core/ folder:
		# drop that one harmless line, keep every other message.)
		st=0
		(cd "$dir" && ../configure -q "$@") 2>"$dir/configure.err" || st=$?
		grep -v "^rm: cannot remove 'core'" "$dir/configure.err" >&2 || true
		[ "$st" -eq 0 ] || { echo "build.sh: configure failed in $dir (see $dir/config.log)" >&2; exit "$st"; }
		echo "$*" >"$dir/.build-options"
	fi
}

case ${1:-all} in
deps)
	deps
	;;
all)
	deps
	configure build --enable-checking
	make -s -C build -j"$jobs"
	make -s -C build demo
	;;
check)
	deps
	passed=0 failed=0
	for variant in build build-san; do
		if [ $variant = build ]; then configure build --enable-checking; else configure build-san --enable-sanitizers --enable-checking; fi
		st=0
		make -s -C $variant -j"$jobs" check || st=$?
		# Count the cases each test program ran (Criterion's synthesis line
		# and the shell tests' "N passed, N failed" lines).
		for log in $variant/tests/*.log; do
			[ -f "$log" ] || continue
			line=$(grep -E '^\[====\] Synthesis: Tested:|^[a-z]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
			p=$(echo "$line" | sed -nE 's/.*Passing: ([0-9]+).*/\1/p; s/.*: ([0-9]+) passed.*/\1/p')
			f=$(echo "$line" | sed -nE 's/.*Failing: ([0-9]+) \| Crashing: ([0-9]+).*/\1 \2/p; s/.* ([0-9]+) failed.*/\1/p')
			for n in ${p:-0}; do passed=$((passed + n)); done
			for n in ${f:-0}; do failed=$((failed + n)); done
		done
		if [ "$st" -ne 0 ]; then
			cat $variant/test-suite.log >&2 || true
			echo "tests: $passed passed, $failed failed"
			exit "$st"
		fi
	done
	# CI: a short coverage-guided fuzz pass too (tests/fuzz/README.md), 20 s
	# per target with clang's libFuzzer; locally `make -C build fuzz`.
	if [ "${CI:-}" = true ]; then
		if command -v clang >/dev/null 2>&1; then
			make -s -C build fuzz FUZZ_SECONDS=20
		else
			echo "build.sh: no clang: the fuzz pass is skipped"
		fi
	fi
	echo "build.sh: all tests passed (normal and ASan+UBSan builds)"
	echo "tests: $passed passed, $failed failed"
	;;
*)
	echo "usage: ./build.sh [all|check|deps]" >&2
	exit 2
	;;
esac
