#!/usr/bin/env bash
# Instructions of a whole `ossa compress` run (process start to exit, every thread),
# counted by valgrind (callgrind) with one worker thread: deterministic, so two
# versions of the compressor compare exactly on a noisy machine. Times, which also
# depend on the two cores sharing the work, come from running the command itself
# beside `../shared/tools/acl-reference.sh compress CLIP` (ACL's compression time).
#
# usage: scripts/compress_instructions.sh CLIP.acl.sjson [more clips…]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
cargo build --quiet --release -p ossa-cli --bin ossa
bin=${CARGO_TARGET_DIR:-target}/release/ossa
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
for clip in "$@"; do
  RAYON_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$T/cg" \
    "$bin" compress "$clip" -o "$T/out.ossa" >/dev/null 2>&1
  python3 - "$clip" "$T/cg" <<'PY'
import os, sys
total = int(open(sys.argv[2]).read().split("summary:")[1].split()[0])
print(f"{os.path.basename(sys.argv[1])}: {total:,} instructions for the whole ossa compress (one worker thread)")
PY
done
