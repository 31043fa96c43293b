#!/bin/sh
# Runs the README's example program (tests/readme_example, built from README.md's first C block)
# and checks what it prints: y = 2x + y with x[i] = i and y[i] = 1 gives y[999] = 1999.
out=$(./tests/readme_example) || { echo "readme_example failed (exit $?): $out"; exit 1; }
echo "$out"
test "$out" = "y[999] = 1999" || { echo "expected: y[999] = 1999"; exit 1; }
