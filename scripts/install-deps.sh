#!/usr/bin/env bash
# Installs what AttnFuse needs from Debian's packages, and only what is
# missing (a warm machine skips apt entirely). Run as root or with sudo.
set -euo pipefail

packages=(
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools clang-22
  libclang-rt-22-dev  # ASan, UBSan, libFuzzer: scripts/test-sanitize.sh, scripts/fuzz.sh
  libomp-22-dev ninja-build lld cmake g++ python3
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
