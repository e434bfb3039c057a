#!/usr/bin/env bash
# Prints a 12-character content hash of the code a bench result depends on (src, include, bench,
# CMake files) in the tree at $1 (default: this checkout). The device copy's git metadata can lag
# the tree it runs, so the bench's git_revision alone may name an older commit; device_round.sh
# adds this hash to it. To find which commit a result came from, run this script in a checkout
# of each candidate commit (git worktree add /tmp/c REV && scripts/source_hash.sh /tmp/c).
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
find src include bench -type f \( -name '*.cu' -o -name '*.cuh' -o -name '*.h' -o -name '*.cpp' \
  -o -name 'CMakeLists.txt' -o -name '*.cmake' \) -print0 | LC_ALL=C sort -z |
  xargs -0 sha1sum | sha1sum | cut -c1-12
