#!/usr/bin/env bash
# Installs the build into a temporary prefix, then configures, builds and runs a consumer project
# that uses find_package(sailfish). Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Each step prints its log when it fails (the logs die with the temporary folder).
run() { local log=$1; shift; "$@" > "$log" 2>&1 || { cat "$log"; exit 1; }; }
run "$work/install.log" cmake --install "$build" --prefix "$work/prefix"
run "$work/configure.log" cmake -S "$source/tests/install/consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix"
run "$work/build.log" cmake --build "$work/consumer"
"$work/consumer/consumer"
