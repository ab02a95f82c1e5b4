/* Test-only stand-in for Windows' bcryptprimitives.dll, which Wine 8.0 (Debian 12's wine64)
 * lacks. Go 1.24 and later load it at start for ProcessPrng, the system's random source; without
 * it every Go program dies under that Wine with "bcryptprimitives.dll not found".
 * scripts/test-windows.sh compiles this with MinGW-w64 into the Wine prefix's system32. Windows
 * 10 and 11 have the real DLL: this file never ships. */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!RtlGenRandom(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
