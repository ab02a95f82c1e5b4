#!/usr/bin/env bash
# The real-window check: the built binary under Xvfb, driven with xdotool; a screenshot of each
# main screen (the window in Japanese and English, keys and the goal dialog, settings, metrics)
# is compared with its reference in ui/testdata/window/ at half scale (ImageMagick `compare -metric AE -fuzz`), so a
# layout break fails the build. The data folder, HOME (Fyne's preferences) and the screen size
# are fixed; fonts come from fonts-noto-cjk.
#
# Usage: scripts/window-check.sh [--update] [BINARY]   (--update rewrites the references)
set -euo pipefail
cd "$(dirname "$0")/.."

update=0
if [ "${1:-}" = "--update" ]; then update=1; shift; fi
bin=${1:-bin/jobdesk}
refs=ui/testdata/window
# Pixels (of 640×400) allowed to differ by more than FUZZ: the clock-dependent hour labels of
# the metrics chart and anti-aliasing; a moved or missing widget differs by far more.
FUZZ=${FUZZ:-12%}
LIMIT=${LIMIT:-1500}

for tool in Xvfb xdotool import compare fc-list; do
  command -v "$tool" >/dev/null || { echo "window-check: $tool is missing (scripts/deps.sh xvfb xdotool imagemagick)" >&2; exit 1; }
done
fonts=$(fc-list : family); [[ "$fonts" == *"Noto Sans CJK"* ]] || { echo "window-check: fonts-noto-cjk is missing" >&2; exit 1; }
[ -x "$bin" ] || { echo "window-check: $bin is missing (make build)" >&2; exit 1; }

# A fixed folder: the settings page shows the data folder's path.
work=/tmp/jobdesk-window-check
rm -rf "$work"
mkdir -p "$work"
out=${WINDOW_CHECK_OUT:-$work/shots}
mkdir -p "$out"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work/home" "$work/data"
}
trap cleanup EXIT

# A free display number.
disp=90
while [ -e /tmp/.X11-unix/X$disp ] || [ -e /tmp/.X$disp-lock ]; do disp=$((disp + 1)); done
Xvfb ":$disp" -screen 0 1280x800x24 -nolisten tcp -noreset >/dev/null 2>&1 &
pids+=($!)
export DISPLAY=":$disp"
for _ in $(seq 50); do xdotool getmouselocation >/dev/null 2>&1 && break; sleep 0.1; done

fail=0
# shot NAME: a screenshot of the whole screen, compared with (or written as) its reference.
shot() {
  local name=$1
  sleep 1.5
  import -window root "$out/$name-full.png"
  convert "$out/$name-full.png" -resize 50% -strip "$out/$name.png"
  if [ $update -eq 1 ]; then
    cp "$out/$name.png" "$refs/$name.png"
    echo "window-check: updated $refs/$name.png"
    return
  fi
  if [ ! -f "$refs/$name.png" ]; then
    echo "window-check: no reference $refs/$name.png (run with --update)" >&2
    fail=1
    return
  fi
  local ae
  ae=$(compare -metric AE -fuzz "$FUZZ" "$refs/$name.png" "$out/$name.png" "$out/$name-diff.png" 2>&1 >/dev/null || true)
  ae=${ae%% *}
  if [[ ! "$ae" =~ ^[0-9.e+]+$ ]] || [ "$(printf '%.0f' "$ae")" -gt "$LIMIT" ]; then
    echo "window-check: $name differs from its reference in $ae pixels (limit $LIMIT); see $out/$name-diff.png" >&2
    fail=1
  else
    echo "window-check: $name ok ($ae pixels differ)"
  fi
}

# run LANG: starts JobDesk on a fresh data folder and waits for its window.
run() {
  rm -rf "$work/home" "$work/data"
  mkdir -p "$work/home" "$work/data"
  seed
  xdotool mousemove 950 600 # over the detail pane: a row under the pointer shows a hint
  HOME="$work/home" LANG=$1 LC_ALL=$1 "$bin" --data-dir "$work/data" >"$work/log" 2>&1 &
  app=$!
  pids+=($app)
  for _ in $(seq 100); do
    win=$(xdotool search --name '^JobDesk$' 2>/dev/null | head -1 || true)
    [ -n "$win" ] && break
    sleep 0.1
  done
  [ -n "$win" ] || { echo "window-check: the window did not open"; cat "$work/log"; exit 1; }
  xdotool windowmove "$win" 0 0 windowsize "$win" 1180 760
}

stop() {
  kill "$app" 2>/dev/null || true
  wait "$app" 2>/dev/null || true
}

# A few finished jobs, so that the list shows rows: checksums of fixed files (names in Japanese
# and English), run to the end by the command line before the window opens.
seed() {
  mkdir -p "$work/files"
  for f in 売上データ_2026年4月.bin invoice-may.bin 会議資料.bin; do
    printf '%s\n' "$f" >"$work/files/$f"
  done
  "$bin" --data-dir "$work/data" run --type checksum --wait "$work/files"/* >/dev/null
}

for lang in ja_JP.UTF-8 en_US.UTF-8; do
  l=${lang%%_*}
  run "$lang"
  sleep 1 # the first page of jobs is read after the window opens
  shot "main-$l"
  # The keyboard on a real window: a click on the first row, then ↓ selects the second (its
  # detail shows); the goal dialog takes typed text in its title field; Esc closes it.
  xdotool mousemove 250 250 click 1
  sleep 0.5
  xdotool key Down
  xdotool mousemove 950 600
  shot "keys-$l"
  xdotool mousemove 1105 93 click 1
  sleep 0.8
  xdotool type "Q3 report"
  shot "goal-$l"
  xdotool key Escape
  sleep 0.5
  xdotool key ctrl+comma
  shot "settings-$l"
  xdotool key Escape
  sleep 0.5
  xdotool key ctrl+m
  shot "metrics-$l"
  xdotool key Escape
  sleep 0.5
  xdotool key ctrl+f type "invoice"
  shot "search-$l"
  stop
done
[ $fail -eq 0 ] && echo "window-check: every screen matches its reference"
exit $fail
