#!/bin/sh
# The checker as a kernel author meets it: every damage tests/perturb.c makes must be reported with
# its diagnosis, a float64 output is compared with out64.*, precision names are case-insensitive, and
# bad usage exits 2 (under valgrind in CI: the error paths leak nothing).
# Usage: tests/checker.sh BUILD_DIR [RUN-PREFIX...]
set -eu
B=$1; shift
RUNP="$*"
CHK="$RUNP ./$B/lattn-check"
CASE=reference_outputs/linear_attn/linear_attn_small.safetensors
$CHK run $CASE chunk $B/out.safetensors >/dev/null
expect() {   # mode, tensor, exit status, text the report must contain
    $RUNP ./$B/perturb $B/out.safetensors $B/bad.safetensors $1 $2
    set +e; $CHK check $CASE $B/bad.safetensors > $B/bad.log; rc=$?; set -e
    [ $rc = $3 ] || { echo "checker: $1 $2: exit $rc, expected $3"; cat $B/bad.log; exit 1; }
    grep -q "$4" $B/bad.log || { echo "checker: $1 $2: no '$4' in the report"; cat $B/bad.log; exit 1; }
}
expect one       out.o  1 "FAIL out.o"
expect transpose out.ht 1 "a transposed reading passes"
expect flat      out.ht 1 "FAILS ON SHAPE: the output \[1536\], the case \[2,2,16,24\]"
expect from16    out.o  1 "per t: first over tol at t = 16"
expect from16    out.o  1 "first element off by more than tol x RMS(ref): \[b=0, t=16,"
expect nan       out.o  1 "FAILS ON 1 NaN/Inf mismatches (first at \[b="
expect drop      out.ht 1 "out.ht     missing from the output (the case expects shape \[2,2,16,24\])"
expect f64       out.o  0 "float64 output against out64"
$CHK check $CASE $B/out.safetensors TF32 | grep -q "tol 5e-03 tf32" || { echo "checker: TF32 not accepted"; exit 1; }
for args in "check $CASE" "check $CASE $B/out.safetensors fp16" "check $CASE tests" "run $CASE nosuchform $B/x" \
            "run tests chunk $B/x" "manifest tests" "external tests" "check $CASE /nonexistent"; do
    set +e; $CHK $args >/dev/null 2>&1; rc=$?; set -e
    [ $rc = 2 ] || { echo "checker: lattn-check $args: exit $rc, expected 2"; exit 1; }
done
echo "checker: 8 damages diagnosed, float64 outputs against out64, 8 bad invocations exit 2"
