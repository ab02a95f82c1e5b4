#!/usr/bin/env bash
# Installs what JobDesk needs to build, run and test on Debian/Ubuntu: a C compiler and the
# X11/OpenGL headers (Fyne uses cgo), Japanese fonts, and Xvfb for tests that need a display.
# Usage: scripts/deps.sh [extra Debian packages...]
set -euo pipefail

pkgs=(gcc pkg-config libgl1-mesa-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev
      libxxf86vm-dev libx11-dev fonts-noto-cjk xvfb "$@")

if ! command -v go >/dev/null 2>&1; then
  for d in /usr/local/go/bin "$HOME/go/bin"; do [ -x "$d/go" ] && export PATH="$d:$PATH"; done
fi
if ! command -v go >/dev/null 2>&1; then
  echo "JobDesk needs Go 1.26 or newer: install it from https://go.dev/dl/ and put 'go' on PATH." >&2
  exit 1
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "Not a Debian system: install a C compiler, the X11/OpenGL development headers and a CJK font yourself." >&2
  exit 0
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

# One install at a time: CI builds for Windows while the tests run, and both may install.
if command -v flock >/dev/null 2>&1; then
  exec 9>"${TMPDIR:-/tmp}/jobdesk-deps.lock"
  flock 9
  left=()
  for p in "${missing[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || left+=("$p")
  done
  [ ${#left[@]} -eq 0 ] && exit 0
  missing=("${left[@]}")
fi

echo "Installing: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || true
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo apt-get update -qq || true
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "These Debian packages are missing: ${missing[*]}" >&2
  echo "Run as root, or: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
