#!/usr/bin/env bash
# Stages every build and test dependency into .deps/ so that the tree builds on a GPU host with no
# network (copy the tree there with .deps/ carried, then configure with -DSAILFISH_DEPS_DIR=.deps).
# Every dependency comes from a package registry at a pinned version:
#   PyPI:   nvidia-cutlass (CUTLASS/CuTe headers), onnxruntime + onnx + numpy (test oracle),
#           nvidia-cuda-cuobjdump + nvidia-cuda-nvdisasm (the SASS checks; the CUDA toolkit here
#           ships without them),
#           matplotlib (bench plots, optional)
#   Debian: googletest (sources), nlohmann-json3-dev (JSON), libcli11-dev (command line parsing)
# Idempotent: a stage that is already complete is skipped (stamp files).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/.deps"
mkdir -p "$deps"

CUTLASS_VERSION=4.2.0.0
GTEST_DEB_VERSION=1.12.1-0.2
JSON_DEB_VERSION=3.11.2-2
CLI11_DEB_VERSION=2.1.2+ds-1
ONNXRUNTIME_VERSION=1.23.2
ONNX_VERSION=1.19.1
NUMPY_VERSION=2.2.6
CUOBJDUMP_VERSION=13.5.37

log() { printf '[stage_deps] %s\n' "$*"; }

stage_cutlass() {
  local stamp="$deps/cutlass/.stamp-$CUTLASS_VERSION"
  [ -f "$stamp" ] && return 0
  log "CUTLASS $CUTLASS_VERSION headers from PyPI"
  local tmp; tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps -d "$tmp" "nvidia-cutlass==$CUTLASS_VERSION"
  python3 - "$tmp" <<'PY'
import sys, zipfile, glob
whl = glob.glob(sys.argv[1] + "/nvidia_cutlass-*.whl")[0]
with zipfile.ZipFile(whl) as z:
    prefix = "cutlass_library/source/include/"
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            z.extract(name, sys.argv[1] + "/x")
PY
  rm -rf "$deps/cutlass"; mkdir -p "$deps/cutlass"
  mv "$tmp/x/cutlass_library/source/include" "$deps/cutlass/include"
  rm -rf "$tmp"
  touch "$stamp"
}

# Debian packages: downloaded as .deb (no root needed) and unpacked into .deps, so the same files
# travel to the GPU host.
stage_deb() {  # name version dest-subdir
  local name=$1 version=$2 dest=$3
  local stamp="$deps/$dest/.stamp-$version"
  [ -f "$stamp" ] && return 0
  log "$name $version from Debian"
  local tmp; tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download -q "$name=$version" >/dev/null 2>&1) || {
    apt-get update -q >/dev/null
    (cd "$tmp" && apt-get download -q "$name=$version")
  }
  rm -rf "$deps/$dest"; mkdir -p "$deps/$dest"
  dpkg-deb -x "$tmp"/*.deb "$deps/$dest"
  rm -rf "$tmp"
  touch "$stamp"
}

# Python packages for the ORT oracle test, the SASS checks and the plotting script, in a venv of
# their own.
stage_python() {
  local stamp="$deps/venv/.stamp-$ONNXRUNTIME_VERSION-$ONNX_VERSION-$NUMPY_VERSION-$CUOBJDUMP_VERSION"
  [ -f "$stamp" ] && return 0
  log "Python venv: onnxruntime $ONNXRUNTIME_VERSION, onnx $ONNX_VERSION, numpy $NUMPY_VERSION," \
    "nvidia-cuda-cuobjdump and nvdisasm $CUOBJDUMP_VERSION"
  rm -rf "$deps/venv"
  python3 -m venv "$deps/venv"
  "$deps/venv/bin/python" -m pip install -q --disable-pip-version-check \
    "onnxruntime==$ONNXRUNTIME_VERSION" "onnx==$ONNX_VERSION" "numpy==$NUMPY_VERSION" \
    "nvidia-cuda-cuobjdump==$CUOBJDUMP_VERSION" "nvidia-cuda-nvdisasm==$CUOBJDUMP_VERSION"
  touch "$stamp"
}

want=${1:-all}
case "$want" in
  build|all)
    stage_cutlass
    stage_deb googletest "$GTEST_DEB_VERSION" googletest
    stage_deb nlohmann-json3-dev "$JSON_DEB_VERSION" nlohmann_json
    stage_deb libcli11-dev "$CLI11_DEB_VERSION" cli11
    ;;&
  python|all)
    [ "$want" = build ] || stage_python
    ;;
  build) ;;
  *) echo "usage: $0 [all|build|python]" >&2; exit 2 ;;
esac
log "done ($deps)"
