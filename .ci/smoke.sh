#!/usr/bin/env bash
# Real-window smoke test: run drape under Xvfb with Mesa's software Vulkan, let it save a screenshot through
# Bevy's screenshot API, and fail unless the picture shows the cloth (cloth-red pixels in a plausible band).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${SMOKE_OUT:-target/smoke}
mkdir -p "$out"
export WGPU_BACKEND=vulkan VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
bin=target/release/drape
[[ -x $bin ]] || cargo build --release --locked

shot() { # preset file frames
  rm -f "$2"
  timeout 300 xvfb-run -a -s "-screen 0 1280x720x24" "$bin" --preset "$1" --screenshot "$2" --frames "$3" \
    >"$2.log" 2>&1 || { echo "drape exited with an error:"; tail -n 30 "$2.log"; return 1; }
  [[ -s $2 ]] || { echo "no screenshot written"; tail -n 30 "$2.log"; return 1; }
}

check_cloth() { # file min% max%
  python3 .ci/cloth_pixels.py "$1" "$2" "$3"
}

shot hanging_sheet "$out/hanging_sheet.png" 90
check_cloth "$out/hanging_sheet.png" 1.0 40.0
shot sphere_drape "$out/sphere_drape.png" 90
check_cloth "$out/sphere_drape.png" 1.0 40.0
echo "smoke test passed"
