#!/usr/bin/env bash
# Runs every package's tests once (`make test`, after `go vet`). The packages whose tests mostly
# wait on their servers and timers (the cloud's fault and kill runs, SQS's redelivery) run in a
# second `go test` beside the rest instead of last, two at a time: on two cores that takes
# minutes off the whole run. Both outputs are printed; it fails when either fails.
# Usage: scripts/go-test.sh [go test flags...]
set -uo pipefail
cd "$(dirname "$0")/.."
waiting=(./sync/cloudjobs ./sync/sqsqueue ./sync/dispatch)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
go test -vet=off "$@" "${waiting[@]}" >"$log" 2>&1 &
bg=$!
mapfile -t rest < <(go list ./... | grep -v -x -F -f <(printf '%s\n' "${waiting[@]/#./$(go list -m)}"))
go test -vet=off "$@" "${rest[@]}"
rc=$?
wait "$bg"
rc2=$?
cat "$log"
[ "$rc" -eq 0 ] && [ "$rc2" -eq 0 ]
