; JobDesk's Windows installer (NSIS), built by scripts/windows-package.sh:
;   makensis -DVERSION=0.1.0 -DVERSION4=0.1.0.3 -DEXE=path\JobDesk.exe -DOUTFILE=dist\... [-DSIGN="cmd %1"] installer.nsi
; Per-user: no administrator rights, the program in %LocalAppData%\Programs\JobDesk, a Start-menu
; entry and an uninstall entry for this user only, no file associations (JobDesk opens files by
; drop and dialog). Installing over an earlier version replaces the program and keeps the data
; folder (%LocalAppData%\JobDesk), which the uninstaller leaves too.
Target amd64-unicode ; JobDesk is 64-bit only; a 64-bit installer also runs under wine64 alone
ManifestDPIAware true
RequestExecutionLevel user
SetCompressor /SOLID lzma

!define UNINSTKEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\JobDesk"
!ifdef SIGN
  !uninstfinalize '${SIGN}'
!endif

Name "JobDesk"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\JobDesk"
InstallDirRegKey HKCU "${UNINSTKEY}" "InstallLocation"
BrandingText "JobDesk ${VERSION}"
VIProductVersion "${VERSION4}"
VIAddVersionKey /LANG=0 "ProductName" "JobDesk"
VIAddVersionKey /LANG=0 "FileDescription" "JobDesk ${VERSION} Setup"
VIAddVersionKey /LANG=0 "FileVersion" "${VERSION4}"
VIAddVersionKey /LANG=0 "ProductVersion" "${VERSION}"
VIAddVersionKey /LANG=0 "LegalCopyright" "JobDesk"

!include "MUI2.nsh"
!define MUI_ICON "${ICON}"
!define MUI_UNICON "${ICON}"
!define MUI_FINISHPAGE_RUN "$INSTDIR\JobDesk.exe"
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "Japanese"
!insertmacro MUI_LANGUAGE "English"

Section "JobDesk"
  SetOutPath "$INSTDIR"
  ; A running JobDesk holds JobDesk.exe: NSIS then offers Retry after it is closed.
  File "/oname=JobDesk.exe" "${EXE}"
  WriteUninstaller "$INSTDIR\Uninstall.exe"
  CreateShortcut "$SMPROGRAMS\JobDesk.lnk" "$INSTDIR\JobDesk.exe" "" "$INSTDIR\JobDesk.exe" 0
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayName" "JobDesk"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTKEY}" "Publisher" "JobDesk"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayIcon" "$INSTDIR\JobDesk.exe,0"
  WriteRegStr HKCU "${UNINSTKEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTKEY}" "UninstallString" '"$INSTDIR\Uninstall.exe"'
  WriteRegStr HKCU "${UNINSTKEY}" "QuietUninstallString" '"$INSTDIR\Uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTKEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTKEY}" "NoRepair" 1
  WriteRegDWORD HKCU "${UNINSTKEY}" "EstimatedSize" ${SIZEKB}
SectionEnd

Section "Uninstall"
  ; The data folder (%LocalAppData%\JobDesk: database and results) stays.
  Delete "$INSTDIR\JobDesk.exe"
  Delete "$INSTDIR\Uninstall.exe"
  RMDir "$INSTDIR"
  Delete "$SMPROGRAMS\JobDesk.lnk"
  DeleteRegKey HKCU "${UNINSTKEY}"
SectionEnd
