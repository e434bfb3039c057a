#!/usr/bin/env bash
# Installs the build into a temporary prefix, then configures, builds and runs a consumer project
# that uses find_package(sailfish). Usage: check_install.sh BUILD_DIR SOURCE_DIR [CXX_FLAGS]
# CXX_FLAGS: the build's own CMAKE_CXX_FLAGS, used to compile and link the consumer too (a
# sanitized build's static library needs the sanitizer runtime at the consumer's link).
set -euo pipefail
build=$1
source=$2
cxx_flags=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Each step prints its log when it fails (the logs die with the temporary folder).
run() { local log=$1; shift; "$@" > "$log" 2>&1 || { cat "$log"; exit 1; }; }
run "$work/install.log" cmake --install "$build" --prefix "$work/prefix"
run "$work/configure.log" cmake -S "$source/tests/install/consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_FLAGS="$cxx_flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$cxx_flags"
run "$work/build.log" cmake --build "$work/consumer"
"$work/consumer/consumer"
