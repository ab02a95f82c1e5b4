#!/usr/bin/env bash
# Installs the independent servers the sync/ tests run against on 127.0.0.1, when missing:
# versitygw (an S3 gateway) and the Lambda Runtime Interface Emulator built with `go install`
# into $(go env GOPATH)/bin, and local-aws-sqs (npm ci from its committed lock). Idempotent: an
# installed server of the right version is left alone. The AWS CLI the tests cross-check with is
# Debian's awscli package, installed by scripts/deps.sh from the Makefile's TEST_PKGS.
# Usage: scripts/test-servers.sh
set -euo pipefail

VERSITYGW_VERSION=v1.8.0

if ! command -v go >/dev/null 2>&1; then
  for d in /usr/local/go/bin "$HOME/go/bin"; do [ -x "$d/go" ] && export PATH="$d:$PATH"; done
fi
bin="$(go env GOPATH | cut -d: -f1)/bin"

installed_version() { # prints the version a Go binary was built from, or nothing
  [ -x "$1" ] && go version -m "$1" 2>/dev/null | awk '$1 == "mod" { print $3; exit }'
}

vgw="$(command -v versitygw || true)"
[ -n "$vgw" ] || vgw="$bin/versitygw"
if [ "$(installed_version "$vgw")" != "$VERSITYGW_VERSION" ]; then
  echo "Installing versitygw $VERSITYGW_VERSION into $bin (about a minute)…"
  go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
fi

# The Lambda Runtime Interface Emulator, to run the cloud worker's bootstrap (sync/cloudworker
# tests). Its module has no release tags: the pseudo-version @latest resolved to, pinned.
RIE_VERSION=v0.0.0-20261030222936-bef5c4ba774d
rie="$(command -v aws-lambda-rie || true)"
[ -n "$rie" ] || rie="$bin/aws-lambda-rie"
if [ "$(installed_version "$rie")" != "$RIE_VERSION" ]; then
  echo "Installing aws-lambda-rie $RIE_VERSION into $bin…"
  go install "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$RIE_VERSION"
fi

# local-aws-sqs (npm, pinned in its package-lock.json) for awstest.StartSQS.
sqsdir="$(cd "$(dirname "$0")/.." && pwd)/sync/internal/awstest/sqsserver"
if [ ! -d "$sqsdir/node_modules/local-aws-sqs" ] || [ "$sqsdir/package-lock.json" -nt "$sqsdir/node_modules/.package-lock.json" ]; then
  echo "Installing local-aws-sqs (npm ci in $sqsdir)…"
  (cd "$sqsdir" && npm ci --no-audit --no-fund)
fi
