#!/usr/bin/env bash
# The real window's figures under Xvfb: cold start to the first frame (launch → the window
# mapped and drawn, median of 5), and with 10,000 jobs in the data folder: the start, the
# resident memory (VmRSS, and its peak VmHWM) after scrolling the list from top to bottom with
# the mouse wheel, and again half a minute later. Targets: first frame ≤ 1 s, RSS ≤ 150 MB.
#
# Usage: scripts/window-bench.sh [BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-bin/jobdesk}
work=/tmp/jobdesk-window-bench
rm -rf "$work"
mkdir -p "$work/home" "$work/files"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

disp=95
while [ -e /tmp/.X11-unix/X$disp ] || [ -e /tmp/.X$disp-lock ]; do disp=$((disp + 1)); done
Xvfb ":$disp" -screen 0 1280x800x24 -nolisten tcp -noreset >/dev/null 2>&1 &
pids+=($!)
export DISPLAY=":$disp"
for _ in $(seq 50); do xdotool getmouselocation >/dev/null 2>&1 && break; sleep 0.1; done

ms() { echo $(( $(date +%s%N) / 1000000 )); }

# start DATA: launches JobDesk and sets took to the milliseconds until its window is mapped and
# has drawn (the screen is no longer all black).
start() {
  local t0 win
  t0=$(ms)
  HOME="$work/home" LANG=ja_JP.UTF-8 "$bin" --data-dir "$1" >"$work/log" 2>&1 &
  app=$!
  pids+=($app)
  win=$(xdotool search --sync --onlyvisible --name '^JobDesk$' | head -1)
  until [ "$(convert x:root -resize 1x1\! -format '%[fx:int(255*mean)]' info: 2>/dev/null || echo 0)" -gt 0 ]; do sleep 0.01; done
  took=$(( $(ms) - t0 ))
}
stop() { kill "$app" 2>/dev/null || true; wait "$app" 2>/dev/null || true; }

times=()
for i in 1 2 3 4 5; do
  rm -rf "$work/empty"
  start "$work/empty"
  times+=("$took")
  stop
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
echo "window-bench: cold start to first frame: median ${sorted[2]} ms (${times[*]}); target ≤ 1000 ms"

# 10,000 finished jobs (checksums of one small file, run again with --force).
printf 'x\n' >"$work/files/請求書.bin"
args=()
for i in $(seq 10000); do args+=("$work/files/請求書.bin"); done
"$bin" --data-dir "$work/big" run --type checksum --force --wait "${args[@]}" >/dev/null 2>&1
start "$work/big"
echo "window-bench: start with 10,000 jobs: $took ms"
sleep 2
xdotool mousemove 300 450
for i in $(seq 400); do xdotool click 5; done # the wheel, to the end of the list (pages load)
sleep 2
for i in $(seq 400); do xdotool click 4; done
sleep 1
rss=$(awk '/VmRSS/ {print int($2/1024)}' /proc/$app/status)
hwm=$(awk '/VmHWM/ {print int($2/1024)}' /proc/$app/status)
echo "window-bench: 10,000 jobs after scrolling: RSS $rss MB (peak $hwm MB); target ≤ 150 MB"
sleep 35 # the window gives free heap back every half minute (ui/memory.go)
rss=$(awk '/VmRSS/ {print int($2/1024)}' /proc/$app/status)
echo "window-bench: 10,000 jobs, half a minute later: RSS $rss MB"
stop

# The toolkit's floor: the smallest window showing Japanese text (bench/windowfloor), measured
# the same way, for comparison.
go build -o "$work/windowfloor" ./bench/windowfloor
HOME="$work/home" LANG=ja_JP.UTF-8 "$work/windowfloor" >"$work/log" 2>&1 &
app=$!
pids+=($app)
xdotool search --sync --onlyvisible --name '^JobDesk$' >/dev/null
sleep 3
rss=$(awk '/VmRSS/ {print int($2/1024)}' /proc/$app/status)
echo "window-bench: the toolkit's floor (one Japanese label and a button): RSS $rss MB"
stop
