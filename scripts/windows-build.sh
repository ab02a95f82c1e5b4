#!/usr/bin/env bash
# Cross-compiles JobDesk.exe for windows/amd64 on Debian: cgo through MinGW-w64 (Fyne needs it),
# a GUI-subsystem executable (no console window flashing up on a double-click) carrying the icon,
# version information and the application manifest as Windows resources. The resources come from
# FyneApp.toml and assets/windows/app.manifest.in: a .rc file compiled by MinGW's windres into
# rsrc_windows_amd64.syso beside main.go, which the Go linker picks up for Windows builds only
# (the file is generated, and git ignores it).
# Usage: scripts/windows-build.sh [OUT.exe]   (default bin/windows/JobDesk.exe)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bin/windows/JobDesk.exe}
scripts/deps.sh gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64 imagemagick
export PATH="$PATH:/usr/local/go/bin"

field() { sed -n "s/^$1 *= *\"\{0,1\}\([^\"]*\)\"\{0,1\} *$/\1/p" FyneApp.toml | head -1; }
name=$(field Name); id=$(field ID); version=$(field Version); build=$(field Build)
IFS=. read -r v1 v2 v3 <<<"$version"
v4="${v1:-0}.${v2:-0}.${v3:-0}.${build:-0}"
comma=${v4//./,}
year=$(date -u +%Y)

work=bin/windows/res
mkdir -p "$work" "$(dirname "$out")"
# The icon: the sizes Explorer, the taskbar and the Start menu ask for.
convert assets/icon.png -background none -define icon:auto-resize=256,64,48,32,24,16 "$work/JobDesk.ico"
sed -e "s/@ID@/$id/" -e "s/@VERSION4@/$v4/" -e "s/@NAME@/$name/" assets/windows/app.manifest.in >"$work/app.manifest"
cat >"$work/app.rc" <<RC
#pragma code_page(65001)
#include <winver.h>
1 ICON "JobDesk.ico"
1 24 "app.manifest"
VS_VERSION_INFO VERSIONINFO
FILEVERSION $comma
PRODUCTVERSION $comma
FILEFLAGSMASK 0x3fL
FILEFLAGS 0x0L
FILEOS VOS_NT_WINDOWS32
FILETYPE VFT_APP
FILESUBTYPE 0x0L
BEGIN
  BLOCK "StringFileInfo"
  BEGIN
    BLOCK "040904b0"
    BEGIN
      VALUE "CompanyName", "$name"
      VALUE "FileDescription", "$name — local job runner"
      VALUE "FileVersion", "$v4"
      VALUE "InternalName", "$name"
      VALUE "LegalCopyright", "© $year $name"
      VALUE "OriginalFilename", "$name.exe"
      VALUE "ProductName", "$name"
      VALUE "ProductVersion", "$version"
    END
  END
  BLOCK "VarFileInfo"
  BEGIN
    VALUE "Translation", 0x409, 1200
  END
END
RC
x86_64-w64-mingw32-windres --input-format=rc --output-format=coff -I "$work" -i "$work/app.rc" -o rsrc_windows_amd64.syso

start=$(date +%s)
CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=x86_64-w64-mingw32-gcc CXX=x86_64-w64-mingw32-g++ \
  go build -trimpath -ldflags "-H=windowsgui -s -w" -o "$out" .
echo "built $out ($(stat -c %s "$out") bytes, version $v4) in $(( $(date +%s) - start ))s"
