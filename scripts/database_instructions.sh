#!/usr/bin/env bash
# Instructions per seek + whole pose for a clip of a streaming database, counted by
# valgrind (callgrind), against the same clip compressed on its own: with no tier
# resident (the clip alone, lowest fidelity), the medium tier, and both (highest), and
# the database clip sampled without its tiers (the normal path over its key frames).
# Same protocol as scripts/instructions.sh: forward over 100 evenly spaced times.
# Each clip is measured in a database of all the clips given, those after `--` too
# (measured or not), so that clips of one skeleton share a pose (give one clip for a
# database without one).
#
# usage: scripts/database_instructions.sh CLIP.acl.sjson… [-- OTHER.acl.sjson…]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
cargo build --quiet --release -p ossa-encoder --example stream_loop
bin=${CARGO_TARGET_DIR:-target}/release/examples/stream_loop
poses=2000
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
count() { # $1 clip, $2 function; prints instructions of that loop
  valgrind --tool=callgrind --callgrind-out-file="$T/cg" --collect-atstart=no --toggle-collect="$2" \
    "$bin" "$1" "$poses" "${all[@]}" >/dev/null 2>&1
  python3 -c 'import sys; print(int(open(sys.argv[1]).read().split("summary:")[1].split()[0]))' "$T/cg"
}
measured=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do measured+=("$1"); shift; done
[ $# -gt 0 ] && shift
all=("${measured[@]}" "$@")
for clip in "${measured[@]}"; do
  plain=$(count "$clip" 'stream_loop::plain_poses')
  holes=$(count "$clip" 'stream_loop::holes_poses')
  lowest=$(count "$clip" 'stream_loop::lowest_poses')
  medium=$(count "$clip" 'stream_loop::medium_poses')
  highest=$(count "$clip" 'stream_loop::highest_poses')
  frames=$("$bin" "$clip" 1 "${all[@]}")
  python3 - "$clip" "$plain" "$holes" "$lowest" "$medium" "$highest" "$poses" "$frames" <<'PY'
import os, sys
clip, *counts, n, frames = sys.argv[1:]
plain, holes, lowest, medium, highest = (int(c) / int(n) for c in counts)
print(f"{os.path.basename(clip)} ({frames})\n  instructions per seek + pose: clip compressed alone {plain:.0f}; "
      f"database clip without its tiers {holes:.0f} ({holes - plain:+.0f}); with its database: "
      f"no tier resident {lowest:.0f} ({lowest - plain:+.0f}, {lowest - holes:+.0f} over the same clip without it), "
      f"medium tier {medium:.0f} ({medium - plain:+.0f}), both tiers {highest:.0f} ({highest - plain:+.0f})")
PY
done
