#!/usr/bin/env bash
# Renders the HTML report of `ossa stats --report` in headless Chromium and checks the
# screenshot: the page loads, the plots draw (SVG) and the skeletons play on the
# canvases (coloured pixels in both views). Writes target/report.html and
# target/report.png (look at it).
#
# usage: scripts/report_screenshot.sh [CLIPS_OR_FOLDER…]   (default: ../shared/clips when
#        present, else examples/); installs Debian's chromium when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null; then
  echo "report_screenshot: installing chromium" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null
fi
inputs=("$@")
if [ ${#inputs[@]} -eq 0 ]; then
  if [ -d ../shared/clips ]; then inputs=(../shared/clips/[0-9]*.acl.sjson); else inputs=(examples); fi
fi
cargo build --quiet --release -p ossa-cli
ossa=${CARGO_TARGET_DIR:-target}/release/ossa
mkdir -p target
"$ossa" stats "${inputs[@]}" --report target/report.html >/dev/null || true
[ -s target/report.html ] || { echo "report_screenshot: no report written" >&2; exit 1; }
profile=$(mktemp -d); trap 'rm -rf "$profile"' EXIT
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$profile" \
  --hide-scrollbars --window-size=1280,2200 --virtual-time-budget=3000 \
  --screenshot="$PWD/target/report.png" "file://$PWD/target/report.html" >/dev/null 2>&1
python3 - target/report.png <<'PY'
import struct, sys, zlib
# A PNG's pixels, decoded with the standard library alone (8-bit RGB or RGBA).
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
at, idat, width, height, channels = 8, b'', 0, 0, 0
while at < len(data):
    n, kind = struct.unpack('>I4s', data[at:at + 8]); body = data[at + 8:at + 8 + n]; at += 12 + n
    if kind == b'IHDR':
        width, height, depth, colour = struct.unpack('>IIBB', body[:10]); channels = {2: 3, 6: 4}[colour]
    elif kind == b'IDAT':
        idat += body
raw = zlib.decompress(idat); stride = width * channels; rows = []; prev = bytearray(stride)
for y in range(height):
    f = raw[y * (stride + 1)]; line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - channels] if i >= channels else 0; b = prev[i]; c = prev[i - channels] if i >= channels else 0
        p = a + b - c; pr = a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else (b if abs(p - b) <= abs(p - c) else c)
        line[i] = (line[i] + [0, a, b, (a + b) // 2, pr][f]) & 255
    rows.append(line); prev = line
def count(x0, y0, x1, y1, test):
    return sum(1 for y in range(y0, y1) for x in range(x0, x1) if test(rows[y][x * channels:x * channels + 3]))
blue = lambda p: p[2] > 140 and p[0] < 110
greenish = lambda p: p[1] > 120 and p[2] < 90
source, decoded = count(30, 210, 560, 680, blue), count(580, 210, 1110, 680, greenish)
plots = count(0, 700, width, min(height, 1500), lambda p: p != bytearray(b'\xff\xff\xff') and p != bytearray(b'\xfa\xfa\xfa'))
print(f'report.png {width}x{height}: source skeleton {source} px, decoded skeleton {decoded} px, plots {plots} px')
assert source > 200 and decoded > 200, 'a skeleton is missing from the canvases'
assert plots > 20000, 'the plots did not draw'
PY
echo "report_screenshot: target/report.png"
