#!/usr/bin/env bash
# Proves the Windows build on this Linux machine, under Wine (headless, a fresh prefix):
#   1. JobDesk.exe runs the same jobs as the Linux build on the same files — a Shift_JIS CSV with
#      a Japanese name, a PDF, a DOCX, a ZIP, a DOCX under a path over 260 characters — with the
#      same summaries and Markdown (paths, ids and times normalised);
#   2. the default data folder is %LocalAppData%\JobDesk, and an old %AppData%\JobDesk is moved
#      there once;
#   3. a file another program holds open fails as retryable E014 (blob's test, run as a Windows
#      test binary);
#   4. the window opens (Xvfb; a screenshot is kept in bin/windows/test/window.png) and is an OLE
#      drop target; the drop target (ui/internal/oledrop, a Windows test binary) takes what
#      Outlook gives for dragged attachments and what Explorer gives for files;
#   5. the signed installer verifies (osslsigncode, throwaway certificate), installs silently
#      with the program, the Start-menu entry and the uninstall entry, and uninstalls keeping
#      the data folder.
# Every wait is bounded. Usage: scripts/test-windows.sh (after scripts/windows-build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
scripts/deps.sh wine64 xvfb imagemagick osslsigncode nsis x11-utils
exe=$PWD/bin/windows/JobDesk.exe
[ -f "$exe" ] || scripts/windows-build.sh "$exe"
WINE=${WINE:-$(command -v wine64 || echo /usr/lib/wine/wine64)}

tmp=$(mktemp -d)
out=$PWD/bin/windows/test
rm -rf "$out" && mkdir -p "$out"
export WINEPREFIX=$tmp/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" LANG=C.UTF-8 LC_ALL=C.UTF-8
unset JOBDESK_DATA_DIR DISPLAY
cleanup() { timeout 20 wineserver -k 2>/dev/null || true; timeout 20 wineserver -w 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "test-windows: FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }
wine() { timeout "${T:-120}" "$WINE" "$@"; }

step "Wine prefix"
start=$(date +%s.%N)
wine wineboot -i >/dev/null 2>&1 || true
# Wine 8.0 has no bcryptprimitives.dll, which every Go 1.24+ program loads (see the source).
sys32=$WINEPREFIX/drive_c/windows/system32
[ -f "$sys32/bcryptprimitives.dll" ] || x86_64-w64-mingw32-gcc -shared -O2 -s -o "$sys32/bcryptprimitives.dll" \
  assets/windows/wine/bcryptprimitives.c -ladvapi32
# A Japanese font where Windows keeps them (a Japanese Windows has Yu Gothic and Meiryo there):
# the window's fallback font for Japanese text.
for f in /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc; do [ -f "$f" ] && cp "$f" "$WINEPREFIX/drive_c/windows/Fonts/"; done
echo "prefix ready in $(echo "$(date +%s.%N) - $start" | bc)s"
user=$(whoami)
roaming=$WINEPREFIX/drive_c/users/$user/AppData/Roaming
local=$WINEPREFIX/drive_c/users/$user/AppData/Local

step "inputs"
in=$tmp/in; mkdir -p "$in"
csv="$in/売上データ_2026年.csv"
printf 'ユーザーID,ログイン回数,投稿回数\r\nU00001,3,5\r\nU00002,10,0\r\nU00001,2,1\r\n' | iconv -f utf-8 -t cp932 >"$csv"
cp engine/docjob/testdata/report.pdf engine/docjob/testdata/report.docx "$in/"
( cd "$in" && python3 -c "import zipfile
with zipfile.ZipFile('資料一式.zip','w') as z:
    z.write('report.docx','報告書.docx'); z.write('report.pdf','報告書.pdf')" )
long="$in"; for i in 1 2 3 4 5; do long="$long/長いフォルダー名_$(printf 'あ%.0s' $(seq 1 40))_$i"; done
mkdir -p "$long" && cp "$in/report.docx" "$long/長い名前の報告書.docx"
winpath() { echo "Z:${1//\//\\}"; }
[ ${#long} -gt 260 ] || fail "long path is only ${#long} characters"

step "Linux build and its results"
go build -o "$tmp/jobdesk-linux" .  # the flags of `make build`: Go's cache has it
lin() { timeout 120 "$tmp/jobdesk-linux" --data-dir "$tmp/linux-data" "$@"; }
mkdir -p "$out/linux" "$out/windows"
lin run --type csv --wait --json "$csv" >"$out/linux/csv.json" 2>/dev/null || fail "linux csv run"
lin convert --json "$in/report.pdf" "$in/report.docx" "$in/資料一式.zip" "$long/長い名前の報告書.docx" >"$out/linux/convert.json" 2>/dev/null || fail "linux convert"
lin ls --json >"$out/linux/ls.json"

step "an old %AppData%\\JobDesk (one job in it) is moved to %LocalAppData%\\JobDesk"
"$tmp/jobdesk-linux" --data-dir "$roaming/JobDesk" run --type csv --wait --json "$csv" >/dev/null 2>&1 || fail "seeding the old data folder"
wine "$exe" ls --json >"$out/windows/ls-migrated.json" 2>"$out/windows/ls-migrated.err" || fail "windows ls after the move: $(cat "$out/windows/ls-migrated.err")"
[ -f "$local/JobDesk/jobdesk.db" ] || fail "no database in %LocalAppData%\\JobDesk"
[ -f "$roaming/JobDesk/MOVED-TO.txt" ] || fail "no MOVED-TO.txt in the old folder"
grep -q '"id":1' "$out/windows/ls-migrated.json" || fail "the moved job is not listed"
rm -rf "$local/JobDesk"   # from here the Windows build starts empty, like the Linux one

step "Windows build: the same jobs"
start=$(date +%s.%N)
wine "$exe" run --type csv --wait --json "$(winpath "$csv")" >"$out/windows/csv.json" 2>"$out/windows/csv.err" || fail "windows csv run: $(cat "$out/windows/csv.err")"
echo "csv job under Wine: $(echo "$(date +%s.%N) - $start" | bc)s"
wine "$exe" convert --json "$(winpath "$in/report.pdf")" "$(winpath "$in/report.docx")" "$(winpath "$in/資料一式.zip")" \
  "$(winpath "$long/長い名前の報告書.docx")" >"$out/windows/convert.json" 2>"$out/windows/convert.err" || fail "windows convert: $(cat "$out/windows/convert.err")"
wine "$exe" ls --json >"$out/windows/ls.json" || fail "windows ls"
[ -f "$local/JobDesk/jobdesk.db" ] || fail "the Windows build did not use %LocalAppData%\\JobDesk"
python3 scripts/test-windows-compare.py "$out/linux" "$out/windows" "$WINEPREFIX" || fail "Linux and Windows results differ"

step "a file open in another program: retryable E014 (blob test under Wine)"
CGO_ENABLED=0 GOOS=windows GOARCH=amd64 go test -trimpath -c -o "$tmp/blob.test.exe" ./engine/blob
wine "$tmp/blob.test.exe" -test.run 'InUse|Locked' -test.v >"$out/windows/blob-test.txt" 2>&1 || { cat "$out/windows/blob-test.txt"; fail "blob test under Wine"; }
grep -q -- "--- PASS: TestLockedFileIsInUse" "$out/windows/blob-test.txt" || fail "TestLockedFileIsInUse did not pass"

step "the window, on Xvfb, and dropping Outlook attachments and Explorer files"
CGO_ENABLED=0 GOOS=windows GOARCH=amd64 go test -trimpath -c -o "$tmp/oledrop.test.exe" ./ui/internal/oledrop
Xvfb :97 -screen 0 1280x800x24 >/dev/null 2>&1 & xvfb=$!
sleep 1
DISPLAY=:97 wine "$tmp/oledrop.test.exe" -test.v >"$out/windows/oledrop-test.txt" 2>&1 || { cat "$out/windows/oledrop-test.txt"; fail "oledrop test under Wine"; }
for t in TestOutlookAttachmentsBecomeFiles TestExplorerFilesArePassedAsTheyAre TestRegisterOnAWindow; do
  grep -q -- "--- PASS: $t" "$out/windows/oledrop-test.txt" || fail "$t did not pass"
done
start=$(date +%s.%N)
DISPLAY=:97 timeout 90 "$WINE" "$exe" >"$out/windows/window.log" 2>&1 & win=$!
shown=""
for _ in $(seq 1 120); do
  if DISPLAY=:97 xwininfo -root -tree 2>/dev/null | grep -q '"JobDesk"'; then shown=$(echo "$(date +%s.%N) - $start" | bc); break; fi
  sleep 0.5
done
# From another process, as a drag source sees it: the window registered its drop target.
[ -z "$shown" ] || DISPLAY=:97 OLEDROP_WINDOW=JobDesk wine "$tmp/oledrop.test.exe" -test.run WindowIsDropTarget -test.v \
  >"$out/windows/drop-target.txt" 2>&1 && grep -q -- "--- PASS: TestWindowIsDropTarget" "$out/windows/drop-target.txt" \
  || { cat "$out/windows/drop-target.txt"; fail "the window is not an OLE drop target"; }
sleep 5
DISPLAY=:97 import -window root "$out/window.png" || true
kill "$win" 2>/dev/null || true; wait "$win" 2>/dev/null || true
timeout 20 wineserver -k 2>/dev/null || true
kill "$xvfb" 2>/dev/null || true; wait "$xvfb" 2>/dev/null || true
[ -n "$shown" ] || fail "no JobDesk window within 60s (log: $out/windows/window.log)"
echo "cold start to first window: ${shown}s; screenshot: $out/window.png"

step "signed installer: verify, install, uninstall"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/key.pem" -out "$tmp/cert.pem" -days 2 \
  -subj "/CN=JobDesk test signing" -addext "extendedKeyUsage=codeSigning" 2>/dev/null
JOBDESK_DIST=$tmp/dist JOBDESK_SIGN_CERT=$tmp/cert.pem JOBDESK_SIGN_KEY=$tmp/key.pem scripts/windows-package.sh "$exe" >/dev/null
setup=$(ls "$tmp"/dist/JobDesk-Setup-*.exe)
for f in "$setup" "$tmp/dist/JobDesk.exe"; do
  osslsigncode verify -CAfile "$tmp/cert.pem" -in "$f" >"$tmp/verify.txt" 2>&1 || { cat "$tmp/verify.txt"; fail "signature of $(basename "$f")"; }
done
echo "signatures verify (installer and JobDesk.exe)"
wine "$setup" /S || fail "silent install"
prog=$local/Programs/JobDesk
[ -f "$prog/JobDesk.exe" ] && [ -f "$prog/Uninstall.exe" ] || fail "program not installed in %LocalAppData%\\Programs\\JobDesk"
osslsigncode verify -CAfile "$tmp/cert.pem" -in "$prog/Uninstall.exe" >/dev/null 2>&1 || fail "the uninstaller is not signed"
lnk=$(find "$roaming/Microsoft/Windows/Start Menu/Programs" -name 'JobDesk.lnk' | head -1)
[ -n "$lnk" ] || fail "no Start-menu entry"
key='HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\JobDesk'
wine reg query "$key" >"$out/windows/uninstall-key.txt" 2>&1 || fail "no uninstall key"
grep -q UninstallString "$out/windows/uninstall-key.txt" || fail "uninstall key without UninstallString"
grep -q DisplayVersion "$out/windows/uninstall-key.txt" || fail "uninstall key without DisplayVersion"
echo "installed: $prog, Start menu: ${lnk#"$WINEPREFIX"/}, $key"
wine "$setup" /S || fail "install over the installed version"
[ -f "$local/JobDesk/jobdesk.db" ] || fail "upgrade lost the data folder"
wine "$prog/Uninstall.exe" /S _?="C:\\users\\$user\\AppData\\Local\\Programs\\JobDesk" || fail "silent uninstall"
[ ! -f "$prog/JobDesk.exe" ] || fail "uninstall left JobDesk.exe"
! wine reg query "$key" >/dev/null 2>&1 || fail "uninstall left the uninstall key"
[ -f "$local/JobDesk/jobdesk.db" ] || fail "uninstall removed the data folder"
echo "uninstalled; the data folder stays"
ls -l "$exe" "$setup" | awk '{print $5, $NF}'
echo "test-windows: OK"
