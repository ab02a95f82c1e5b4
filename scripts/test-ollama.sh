#!/usr/bin/env bash
# Runs one job of each AI type against a real Ollama server (v0.11.4, built from the Go module
# proxy) serving the random-weight model ../shared/models/llama-2-tiny-random.gguf. The model's
# text is nonsense: the point is the real OpenAI-compatible server and the JSON-schema
# response_format path. A job passes when it SUCCEEDED or ended PARTIAL, or FAILED with E008
# (the nonsense did not fit the schema twice, which the schema path must report); CAPTION must
# fail with "cannot read images", since the model has no vision.
# Usage: scripts/test-ollama.sh   (from the repository root; about 5 minutes the first time)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export PATH="$PATH:/usr/local/go/bin"
MODEL_FILE="$ROOT/../shared/models/llama-2-tiny-random.gguf"
[ -f "$MODEL_FILE" ] || { echo "missing $MODEL_FILE" >&2; exit 1; }

WORK=$(mktemp -d)
trap 'kill "${OLLAMA_PID:-0}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/jobdesk/ollama-v0.11.4"
OLLAMA="$CACHE/ollama"
if [ ! -x "$OLLAMA" ]; then
  echo "building Ollama v0.11.4 (CPU) ..."
  SRC=$(go mod download -json github.com/ollama/ollama@v0.11.4 | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  mkdir -p "$CACHE"
  cp -r "$SRC" "$WORK/ollama-src" && chmod -R u+w "$WORK/ollama-src"
  (cd "$WORK/ollama-src" && go build -o "$OLLAMA" .)
fi

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export OLLAMA_HOST="127.0.0.1:$PORT" OLLAMA_MODELS="$WORK/models"
"$OLLAMA" serve >"$WORK/ollama.log" 2>&1 &
OLLAMA_PID=$!
for _ in $(seq 1 100); do curl -fsS "http://$OLLAMA_HOST/api/version" >/dev/null 2>&1 && break; sleep 0.2; done
printf 'FROM %s\n' "$MODEL_FILE" >"$WORK/Modelfile"
"$OLLAMA" create tiny -f "$WORK/Modelfile" >/dev/null

go build -o "$WORK/jobdesk" .
J() { "$WORK/jobdesk" --data-dir "$WORK/data" "$@" --ai-endpoint "http://$OLLAMA_HOST/v1" --ai-model tiny --wait --json; }
fail=0
check() { # name, json line
  local status code
  status=$(printf '%s' "$2" | python3 -c 'import json,sys; j=json.loads(sys.stdin.readline()); print(j["status"])')
  code=$(printf '%s' "$2" | python3 -c 'import json,sys; j=json.loads(sys.stdin.readline()); print((j.get("error") or {}).get("code",""))')
  case "$status/$code" in
    SUCCEEDED/*|PARTIAL/*|FAILED/E008) echo "ok   $1: $status $code" ;;
    *) echo "FAIL $1: $status $code"; printf '%s\n' "$2"; fail=1 ;;
  esac
}
out=$(J generate subgoals --title "英語で商談できるようになる" --deadline 2027-03-31 || true); check SUBGOAL_GENERATION "$out"
goal=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["input"]["goal_id"])')
out=$(J generate actions --goal "$goal" || true); check ACTION_GENERATION "$out"
out=$(J generate tasks --goal "$goal" || true); check TASK_GENERATION "$out"
printf '# 公募要領\n## 補助対象者の要件\n- 県内の中小企業であること\n' >"$WORK/guide.md"
out=$(J extract-eligibility "$WORK/guide.md" || true); check ELIGIBILITY_EXTRACT "$out"
python3 -c 'import base64,sys; sys.stdout.buffer.write(base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="))' >"$WORK/dot.png"
out=$(J caption "$WORK/dot.png" || true)
if printf '%s' "$out" | grep -q "cannot read images"; then echo "ok   CAPTION_GENERATION: this model cannot read images"
elif printf '%s' "$out" | grep -q '"status":"SUCCEEDED"'; then echo "ok   CAPTION_GENERATION: SUCCEEDED"
else echo "FAIL CAPTION_GENERATION"; printf '%s\n' "$out"; fail=1; fi
"$WORK/jobdesk" --data-dir "$WORK/data" goals show "$goal" >"$WORK/chart.txt" && head -25 "$WORK/chart.txt"
exit $fail
