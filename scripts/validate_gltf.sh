#!/usr/bin/env bash
# The glTF files `ossa decompress -o OUT.gltf` writes, checked by the Khronos glTF
# validator (npm package gltf-validator, installed into target/ on first use): a
# clip from BVH, the examples (among them skinned.gltf, whose joints come back in
# their own order under the armature's placement), and each shared glTF model's
# animations round-tripped (imported, compressed, exported). The source models are
# validated too, so that a test input is known to be valid glTF. Fails on any error or warning the validator reports.
#
# usage: scripts/validate_gltf.sh        (needs node and npm; run from anywhere)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v node >/dev/null && command -v npm >/dev/null || { echo "validate_gltf: node and npm are needed" >&2; exit 1; }
tool=target/gltf-validator
if [ ! -d "$tool/node_modules/gltf-validator" ]; then
  mkdir -p "$tool"
  (cd "$tool" && npm init -y >/dev/null 2>&1 && npm install --no-audit --no-fund gltf-validator@2.0.0-dev.3.10 >/dev/null 2>&1)
fi
cat >"$tool/validate.js" <<'JS'
const validator = require('gltf-validator');
const fs = require('fs');
(async () => {
  let bad = 0;
  for (const file of process.argv.slice(2)) {
    const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(file)));
    const { numErrors, numWarnings } = report.issues;
    console.log(`${file}: ${numErrors} errors, ${numWarnings} warnings`);
    for (const m of report.issues.messages.filter((m) => m.severity <= 1)) console.log(`  ${m.code}: ${m.message} ${m.pointer || ''}`);
    if (numErrors + numWarnings > 0) bad++;
  }
  process.exit(bad ? 1 : 0);
})();
JS
cargo build --quiet --release -p ossa-cli
ossa=${CARGO_TARGET_DIR:-target}/release/ossa
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
inputs=(examples/walk.bvh examples/wave.acl.sjson examples/stride.acl.sjson examples/skinned.gltf)
[ -d ../shared/gltf ] && inputs+=(../shared/gltf/cesium_man.gltf ../shared/gltf/rigged_simple.gltf ../shared/gltf/interpolation_test.gltf)
"$ossa" compress "${inputs[@]}" -o "$out/ossa" --precision 0.0001 >/dev/null 2>&1
files=()
for clip in "$out"/ossa/*.ossa; do
  gltf="$out/$(basename "$clip" .ossa).gltf"
  "$ossa" decompress "$clip" -o "$gltf" >/dev/null
  files+=("$gltf")
done
node "$tool/validate.js" examples/skinned.gltf "${files[@]}"
