#!/usr/bin/env bash
# Makes dist/JobDesk-Setup-VERSION.exe, JobDesk's per-user Windows installer (NSIS,
# assets/windows/installer.nsi), around a JobDesk.exe built by scripts/windows-build.sh.
# When JOBDESK_SIGN_CERT and JOBDESK_SIGN_KEY name a PEM certificate (chain) and its key
# (JOBDESK_SIGN_PASS: the key's password, if any), the executable, the uninstaller and the
# installer are Authenticode-signed with osslsigncode (JOBDESK_SIGN_TIMESTAMP: a timestamp
# server's URL, if any); otherwise they are left unsigned.
# JOBDESK_DIST: the output folder (default dist).
# Usage: scripts/windows-package.sh [JobDesk.exe]
set -euo pipefail
cd "$(dirname "$0")/.."
# sign FILE: Authenticode-sign FILE in place (nothing when no certificate is configured).
sign() {
  [ -n "${JOBDESK_SIGN_CERT:-}" ] && [ -n "${JOBDESK_SIGN_KEY:-}" ] || return 0
  local args=(sign -certs "$JOBDESK_SIGN_CERT" -key "$JOBDESK_SIGN_KEY" -h sha256 -n JobDesk)
  [ -n "${JOBDESK_SIGN_PASS:-}" ] && args+=(-pass "$JOBDESK_SIGN_PASS")
  [ -n "${JOBDESK_SIGN_TIMESTAMP:-}" ] && args+=(-ts "$JOBDESK_SIGN_TIMESTAMP")
  osslsigncode "${args[@]}" -in "$1" -out "$1.signed" >/dev/null
  mv -f "$1.signed" "$1"
}
# The uninstaller exists only inside makensis's run: it calls this script back to sign it.
if [ "${1:-}" = "--sign" ]; then sign "$2"; exit 0; fi

exe=${1:-bin/windows/JobDesk.exe}
[ -f "$exe" ] || { echo "no $exe: run 'make windows' first" >&2; exit 1; }
scripts/deps.sh nsis osslsigncode

field() { sed -n "s/^$1 *= *\"\{0,1\}\([^\"]*\)\"\{0,1\} *$/\1/p" FyneApp.toml | head -1; }
version=$(field Version); build=$(field Build)
IFS=. read -r v1 v2 v3 <<<"$version"
v4="${v1:-0}.${v2:-0}.${v3:-0}.${build:-0}"

dist=${JOBDESK_DIST:-dist}
work=bin/windows/package
rm -rf "$work" && mkdir -p "$work" "$dist"
cp "$exe" "$work/JobDesk.exe"
sign "$work/JobDesk.exe"
[ -f bin/windows/res/JobDesk.ico ] || convert assets/icon.png -background none -define icon:auto-resize=256,64,48,32,16 bin/windows/res/JobDesk.ico
out="$dist/JobDesk-Setup-$version.exe"
defs=(-DVERSION="$version" -DVERSION4="$v4" -DEXE="$work/JobDesk.exe" -DOUTFILE="$out"
      -DICON="bin/windows/res/JobDesk.ico" -DSIZEKB=$(( $(stat -c %s "$work/JobDesk.exe") / 1024 )))
if [ -n "${JOBDESK_SIGN_CERT:-}" ] && [ -n "${JOBDESK_SIGN_KEY:-}" ]; then
  defs+=(-DSIGN="$PWD/scripts/windows-package.sh --sign %1")
fi
makensis -V2 -NOCD "${defs[@]}" assets/windows/installer.nsi
sign "$out"
cp "$work/JobDesk.exe" "$dist/JobDesk.exe"
ls -l "$out" "$dist/JobDesk.exe"
