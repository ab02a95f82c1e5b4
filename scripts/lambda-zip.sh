#!/usr/bin/env bash
# Builds the cloud worker's Lambda zips: dist/lambda-arm64.zip and dist/lambda-amd64.zip, each
# holding one static `bootstrap` (app/lambda; CGO_ENABLED=0, -tags lambda.norpc) at its root, for
# the provided.al2023 runtime. Installs Debian's zip when it is missing.
# Usage: scripts/lambda-zip.sh [ARCH…]   (default: arm64 amd64)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v go >/dev/null 2>&1; then export PATH="/usr/local/go/bin:$PATH"; fi
if ! command -v zip >/dev/null 2>&1; then
  echo "Installing zip…"
  if [ "$(id -u)" -eq 0 ]; then apt-get install -y -q zip >/dev/null; else sudo apt-get install -y -q zip >/dev/null; fi
fi
mkdir -p dist
for arch in "${@:-arm64 amd64}"; do
  for a in $arch; do
    tmp="$(mktemp -d)"
    CGO_ENABLED=0 GOOS=linux GOARCH="$a" go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o "$tmp/bootstrap" ./app/lambda
    rm -f "dist/lambda-$a.zip"
    (cd "$tmp" && zip -q -9 -X "lambda-$a.zip" bootstrap)
    mv "$tmp/lambda-$a.zip" "dist/lambda-$a.zip"
    rm -rf "$tmp"
    ls -l "dist/lambda-$a.zip"
  done
done
