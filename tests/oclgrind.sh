#!/bin/sh
# Runs the "sim" case of check_vector, check_reduce and check_gemm (the kernels at small sizes, on
# parameter sets that take each of their paths) under Oclgrind (Debian package oclgrind): a
# simulated OpenCL 1.2 GPU, so the GPU defaults run, that reports data races between work-items,
# reads and writes out of bounds, barriers that not every work-item of a group reaches, and OpenCL
# API errors (--check-api). PoCL runs a work-group's items one after another between barriers, so
# many a missing barrier gives the right result there, and a wrong one on a GPU. Any report fails
# this test, as does a wrong result. The GEMM suite's device reports 64 compute units, so that
# test_split_k's one-tile product splits K, and 256 KiB of local memory, which the tensor-core
# kernel's emulated cases take (NVIDIA's driver builds kernels that declare up to 227 KiB).
# Skipped (77) without oclgrind, and for sanitizer builds, whose runtime must come before the
# library oclgrind preloads.
if ! command -v oclgrind >/dev/null 2>&1; then
  echo "oclgrind is not installed (apt-get install oclgrind): skipped"
  exit 77
fi
if ldd ./tests/check_vector 2>/dev/null | grep -qE 'lib(a|t|ub)san'; then
  echo "a sanitizer build: skipped"
  exit 77
fi
status=0
for suite in vector reduce gemm; do
  log=tests/oclgrind-$suite.tmp
  rm -f "$log"
  device="--compute-units 1"
  test "$suite" = gemm && device="--compute-units 64 --local-mem-size 262144"
  echo "== check_$suite, case sim, under oclgrind"
  out=tests/oclgrind-$suite.out.tmp
  rc=0
  CK_RUN_CASE=sim CK_FORK=no oclgrind --data-races --check-api $device --log "$log" \
    "./tests/check_$suite" > "$out" 2>&1 || rc=$?
  cat "$out"
  if test $rc -ne 0; then
    echo "check_$suite failed under oclgrind"
    status=1
  fi
  # a case that ran nothing (renamed, or no longer added) passes vacuously: a failure here
  if ! grep -q 'Checks: [1-9]' "$out"; then
    echo "check_$suite ran no sim case under oclgrind"
    status=1
  fi
  if test -s "$log"; then
    echo "oclgrind reported (check_$suite):"
    head -c 20000 "$log"
    status=1
  fi
done
exit $status
