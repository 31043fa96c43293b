#!/usr/bin/env bash
# device-check.sh BUILD_DIR [OUT_DIR] — on a machine with a real GPU: run the Check suites on it,
# time the first result of a fresh process with a cold and a warm binary cache, and run ocx-bench.
# OCX_DEVICE chooses the device (default: the first GPU). Logs go to OUT_DIR (default: .).
# On NVIDIA the suites must find the tensor-core GEMM (OCX_EXPECT_TENSOR_CORES=1; set it to 0 for
# GPUs below compute capability 8.0), and the GEMM suite runs a second time with
# OCX_VENDOR_PATHS=0, on the portable kernels, and a third (its core case) with wgmma's sm_90a build
# refused (OCX_TEST_NO_SM90A=1), where the tensor cores must stay on through mma.sync.
# A build for a GPU machine without cairo or OpenBLAS (the device kit carries neither): configure
# --disable-shared --without-cairo --without-openblas in an ignored folder; else ocx-bench cannot
# start there and the suites that run it fail with status 127.
set -u
build=$(cd "${1:?usage: device-check.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-.}
mkdir -p "$out"
export OCX_DEVICE=${OCX_DEVICE:-gpu}
export OCX_TEST_TOOLS="$build/tools" CK_DEFAULT_TIMEOUT=600
export OCX_TEST_SRCDIR=${OCX_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)} # the shipped profiles' check
"$build/tools/ocx-info" | tee "$out/info.txt"
if grep -A1 '^\*' "$out/info.txt" | grep -q 'vendor *NVIDIA'; then
  export OCX_EXPECT_TENSOR_CORES=${OCX_EXPECT_TENSOR_CORES:-1}
fi

echo "== Check suites on $OCX_DEVICE"
fails=0
for t in "$build"/tests/check_*; do
  case $(basename "$t") in *.*) continue ;; esac; [ -x "$t" ] || continue
  name=$(basename "$t")
  export OCX_CACHE_DIR=$(mktemp -d)
  if timeout 900 "$t" > "$out/$name.log" 2>&1; then r=PASS; else r=FAIL; fails=$((fails + 1)); fi
  echo "$r: $name $(grep -o '[0-9]*%: Checks.*' "$out/$name.log")"
  [ $r = FAIL ] && grep -E ':[EF]:' "$out/$name.log" | head -5
  rm -rf "$OCX_CACHE_DIR"
done
if [ "${OCX_EXPECT_TENSOR_CORES:-0}" = 1 ]; then
  export OCX_CACHE_DIR=$(mktemp -d)
  if OCX_VENDOR_PATHS=0 OCX_EXPECT_TENSOR_CORES=0 timeout 900 "$build/tests/check_gemm" > "$out/check_gemm_portable.log" 2>&1
  then r=PASS; else r=FAIL; fails=$((fails + 1)); fi
  echo "$r: check_gemm with OCX_VENDOR_PATHS=0 $(grep -o '[0-9]*%: Checks.*' "$out/check_gemm_portable.log")"
  rm -rf "$OCX_CACHE_DIR"
  # wgmma's sm_90a build refused (compute capability 9.0): the probe must fall back to mma.sync
  export OCX_CACHE_DIR=$(mktemp -d)
  if OCX_TEST_NO_SM90A=1 CK_RUN_CASE=core timeout 900 "$build/tests/check_gemm" > "$out/check_gemm_no_sm90a.log" 2>&1
  then r=PASS; else r=FAIL; fails=$((fails + 1)); fi
  echo "$r: check_gemm core with OCX_TEST_NO_SM90A=1 $(grep -o '[0-9]*%: Checks.*' "$out/check_gemm_no_sm90a.log")"
  rm -rf "$OCX_CACHE_DIR"
fi

echo "== first result of a fresh process: cold vs warm binary cache"
export OCX_CACHE_DIR=$(mktemp -d)
for run in cold warm warm; do
  echo -n "$run: "; "$build/tools/ocx-bench" demo | grep "first result"
done
rm -rf "$OCX_CACHE_DIR"
unset OCX_CACHE_DIR
echo "== ocx-bench ${BENCH_PARTS:-all}"
"$build/tools/ocx-bench" ${BENCH_PARTS:-all} | tee "$out/bench.txt"
echo "== $fails suite(s) failed"
exit $((fails > 0))
