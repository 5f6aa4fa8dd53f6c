#!/usr/bin/env bash
# Whole-process compression time of `ossa compress CLIP -o OUT` beside ACL's
# `acl_compressor -acl=CLIP` (both parse the same text), run alternately so that both
# see the same machine: the median of each and their ratio. The machines are noisy
# (ACL's own median moves by a third between runs): use 21 rounds or more and quote
# the ratio from one run.
#
# usage: scripts/compress_time.sh [ROUNDS] CLIP.acl.sjson [more clips…]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${EPOCHREALTIME:-}" ] || { echo "needs bash 5 or later (its EPOCHREALTIME clock)" >&2; exit 1; }
rounds=21
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then rounds=$1; shift; fi
[ $# -gt 0 ] || { echo "usage: scripts/compress_time.sh [ROUNDS] CLIP.acl.sjson…" >&2; exit 2; }
acl=../shared/acl/bin/acl_compressor
[ -x "$acl" ] || { echo "ACL's compressor is not at $acl (../shared/ is missing)" >&2; exit 1; }
cargo build --quiet --release -p ossa-cli --bin ossa
bin=${CARGO_TARGET_DIR:-target}/release/ossa
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
ms() { # command… → microseconds it took, as a whole process
  # Bash's own clock: `$(date +%s%N)` would put a `date` process (about 1 ms to
  # start and end) inside every timed window, the same for both, which pulls the
  # ratio towards 1.
  local start end
  start=${EPOCHREALTIME/[.,]/}
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
  end=${EPOCHREALTIME/[.,]/}
  echo $((end - start))
}
median() { sort -n | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.1f", m/1000}'; }
# What else the host ran meanwhile: ossa uses every core and ACL's compressor one,
# so time taken by other guests (steal) or processes moves the ratio (0.49 against
# 0.55 on the same build). Linux's first line of /proc/stat: user nice system idle
# iowait irq softirq steal.
host_ticks() { [ -r /proc/stat ] && awk '/^cpu / {print $2+$3+$4+$5+$6+$7+$8+$9, $9}' /proc/stat; }
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?")
before=$(host_ticks || true)
for clip in "$@"; do
  : >"$T/ossa"; : >"$T/acl"
  for _ in $(seq "$rounds"); do
    ms "$bin" compress "$clip" -o "$T/out.ossa" >>"$T/ossa"
    ms "$acl" -acl="$clip" >>"$T/acl"
  done
  o=$(median <"$T/ossa"); a=$(median <"$T/acl")
  awk -v c="$(basename "$clip")" -v o="$o" -v a="$a" -v n="$rounds" \
    'BEGIN {printf "%s: ossa compress %.1f ms, acl_compressor %.1f ms (medians of %d): %.2f x ACL\n", c, o, a, n, o/a}'
done
after=$(host_ticks || true)
if [ -n "$before" ] && [ -n "$after" ]; then
  # shellcheck disable=SC2086
  set -- $before $after
  awk -v load="$load" -v t=$(($3 - $1)) -v steal=$(($4 - $2)) 'BEGIN {
    if (t > 0) printf "host: load average %s before the runs; %.1f %% of the CPU time during them taken by other guests (steal)\n", load, 100 * steal / t }'
fi
