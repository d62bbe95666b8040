/*
 * A stand-in for Windows' bcryptprimitives.dll, for running our Windows test binaries under
 * Wine 8, which lacks it. Rust's std (1.78 and later) imports ProcessPrng from it for its
 * random numbers (HashMap keys); without the DLL every exe exits with status 53 and no
 * message. This one export forwards to RtlGenRandom (advapi32's SystemFunction036), which
 * Wine has. Test use only: scripts/windows-tests.sh builds it with mingw and copies it into
 * the Wine prefix's system32. Never shipped, never needed on real Windows.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    /* RtlGenRandom takes a ULONG length: feed it in chunks. Like the real ProcessPrng,
       it always returns TRUE; a failure here is fatal rather than silent. */
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            ExitProcess(0xC0000001);
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
    (void)instance;
    (void)reason;
    (void)reserved;
    return TRUE;
}
