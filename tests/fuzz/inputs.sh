# Sourced by tests/fuzz/fuzz.sh (`make fuzz`: the seeds) and
# tests/fuzz_corpus.sh (`make check`: what each target runs on).
# fuzz_inputs NAME: the files of target NAME's kind, one per line: its corpus
# (tests/fuzz/corpus/NAME; the compile targets share ir's) and the
# repository's files of that kind under examples/, md/ and tests/ (the
# regression inputs: tests/bad-inputs, tests/errors, tests/md-errors,
# tests/onnx-bad, ...), tests/fuzz itself left out.  Needs SRCDIR.
fuzz_inputs() {
	corpus=$SRCDIR/tests/fuzz/corpus/$1
	case $1 in
	ir | compile-*) corpus=$SRCDIR/tests/fuzz/corpus/ir pat='*.ir' where="examples tests" ;;
	npy) pat='*.npy' where="examples tests" ;;
	md) pat='*.md' where="md tests" ;;
	onnx) pat='*.onnx' where="examples tests" ;;
	tensorproto) pat='*.pb' where="examples tests" ;;
	*) pat= where= ;;
	esac
	[ -d "$corpus" ] && find "$corpus" -type f ! -name '.*'
	for w in $where; do
		[ -d "$SRCDIR/$w" ] && find "$SRCDIR/$w" -path "$SRCDIR/tests/fuzz" -prune -o -type f -name "$pat" -print
	done
}
