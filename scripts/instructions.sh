#!/usr/bin/env bash
# Instructions per seek + whole pose (fresh, and kept between calls with its plan and
# without), and per pose
# decoded bone by bone, counted by
# valgrind (callgrind): deterministic, so two versions compare exactly on a noisy
# machine. Same protocol as ../shared/tools/acl-reference.sh instructions: forward over
# 100 evenly spaced times, interpolating.
#
# usage: scripts/instructions.sh CLIP.acl.sjson [more clips…]
# Extra RUSTFLAGS (e.g. "-C target-cpu=x86-64-v3") select the AVX2 build.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
cargo build --quiet --release -p ossa-encoder --example decode_loop
bin=${CARGO_TARGET_DIR:-target}/release/examples/decode_loop
poses=2000
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
count() { # $1 clip, $2 function; prints instructions per call
  valgrind --tool=callgrind --callgrind-out-file="$T/cg" --collect-atstart=no --toggle-collect="$2" \
    "$bin" "$1" "$poses" >/dev/null 2>&1
  python3 -c 'import sys; print(int(open(sys.argv[1]).read().split("summary:")[1].split()[0]))' "$T/cg"
}
for clip in "$@"; do
  # Each loop of decode_loop is its own function; counting one counts that loop alone
  # (compressing the clip first also decodes it, which must not be counted).
  seek=$(count "$clip" 'decode_loop::seeks')
  pose=$(count "$clip" 'decode_loop::whole_poses')
  plain=$(count "$clip" 'decode_loop::whole_poses_without_static_pose')
  kept=$(count "$clip" 'decode_loop::kept_poses')
  unplanned=$(count "$clip" 'decode_loop::kept_poses_without_plan')
  bone=$(count "$clip" 'decode_loop::bone_poses')
  subset=$(count "$clip" 'decode_loop::subset_poses')
  python3 - "$clip" "$seek" "$pose" "$kept" "$bone" "$subset" "$plain" "$unplanned" "$poses" <<'PY'
import os, sys
clip, seek, pose, kept, bone, subset, plain, unplanned, n = sys.argv[1], *map(int, sys.argv[2:])
name = os.path.basename(clip)
print(f"{name}: {pose / n:.0f} instructions per seek + pose "
      f"(seek {seek / n:.0f}); pose bone by bone (seek + every bone) {bone / n:.0f}; "
      f"seek + 4 bones {subset / n:.0f} ({subset / pose:.3f} of a pose)")
print(f"{name}: {kept / n:.0f} instructions per seek + kept pose ({kept / pose:.2f} of a pose)")
print(f"{name}: {unplanned / n:.0f} instructions per seek + kept pose without a plan")
print(f"{name}: {plain / n:.0f} instructions per seek + pose of the clip without a static pose")
PY
done
