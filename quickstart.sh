#!/usr/bin/env bash
# quickstart.sh — on a fresh Debian 12 machine: install what ocx needs (when missing), build it, and
# run the main job on the default device (the first GPU, else PoCL on the CPU):
#   ocx-info (the devices and their capabilities), then ocx-bench --quick (a kernel run through the
#   library and checked against the host, then short benchmarks beside CLBlast).
# Environment: OCX_DEVICE picks another device; SKIP_APT=1 never calls apt-get.
set -euo pipefail
cd "$(dirname "$0")"

packages=(build-essential autoconf automake autoconf-archive libtool pkg-config
          ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo
          check libsubunit-dev oclgrind libjansson-dev libxxhash-dev libclblast-dev libopenblas-dev
          libcairo2-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] && [ "${SKIP_APT:-0}" != 1 ]; then
  echo "quickstart: installing ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
    echo "quickstart: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ -x configure ] && [ configure -nt configure.ac ] && [ configure -nt Makefile.am ] || autoreconf -fi
[ -f Makefile ] || ./configure  # (make itself reconfigures, with the options given, when Makefile.am changes)
make -j"$(nproc)"

# The profiles shipped in profiles/ (made by ocx-tune), read as if installed, unless the caller set
# OCX_PROFILE_DIR: ocx-info names the one for this device, if any, and ocx-bench runs with it.
export OCX_PROFILE_DIR=${OCX_PROFILE_DIR:-$PWD/profiles}
echo
./tools/ocx-info
./tools/ocx-bench --quick
