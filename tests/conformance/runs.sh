# Sourced by the per-target conformance wrappers (conformance-rvv.sh,
# conformance-npu.sh): conf_run VAR=VALUE... runs tests/conformance.sh with
# those settings, prints its non-PASS lines and adds its counts to the
# totals; conf_done prints them and exits 1 if any run failed.
conf_status=0 conf_passed=0 conf_failed=0
conf_run() {
	out=$(env "$@" sh "$SRCDIR/tests/conformance.sh")
	st=$?
	printf '%s\n' "$out" | grep -v '^PASS: '
	p=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
	f=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
	conf_passed=$((conf_passed + ${p:-0}))
	conf_failed=$((conf_failed + ${f:-0}))
	[ $st -eq 0 ] || conf_status=1
}
conf_done() {
	echo "$conf_passed passed, $conf_failed failed"
	exit $conf_status
}
