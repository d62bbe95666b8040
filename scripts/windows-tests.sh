#!/usr/bin/env bash
# Runs the workspace's tests as Windows binaries under Wine (x86_64-pc-windows-gnu).
#
#   scripts/windows-tests.sh                       # every test binary of the workspace
#   scripts/windows-tests.sh -p zeroclaw-ipc       # arguments go to `cargo test`
#   scripts/windows-tests.sh -p zeroclaw --test wire -- some_test_name
#
# Needs: wine64 (Debian: apt-get install wine64; Wine 8), mingw (gcc-mingw-w64-x86-64) and
# the Rust target (rustup target add x86_64-pc-windows-gnu). `.ci/run` installs them.
#
# What it does, and why:
# - a Wine prefix of its own ($ZC_WINEPREFIX, default ~/.cache/zeroclaw/wine), initialised
#   once with `wineboot -i`;
# - scripts/windows/bcryptprimitives.c built with mingw and copied into the prefix's
#   system32: Rust's std imports ProcessPrng from bcryptprimitives.dll, which Wine 8 lacks,
#   and without it every exe exits with status 53 and no message (system32 rather than
#   beside each exe, since doctests run from elsewhere);
# - `wineserver -p` kept running for the whole run (one server start instead of one per
#   test binary), `wineserver -k` at the end, even on failure;
# - cargo runs each test binary through /usr/lib/wine/wine64, the whole run bounded by
#   $ZC_WINDOWS_TESTS_TIMEOUT seconds (default 1800): a synchronous pipe handle has no read
#   timeout, so the harness's per-read hang guard does not exist on Windows.
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-pc-windows-gnu
wine=${ZC_WINE:-/usr/lib/wine/wine64}
[ -x "$wine" ] || wine=$(command -v wine64 || true)
missing=()
[ -n "$wine" ] && [ -x "$wine" ] || missing+=("wine64 (apt-get install wine64)")
command -v wineserver >/dev/null 2>&1 || [ -x /usr/lib/wine/wineserver ] || missing+=("wineserver (apt-get install wine64)")
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing+=("x86_64-w64-mingw32-gcc (apt-get install gcc-mingw-w64-x86-64)")
rustup target list --installed 2>/dev/null | grep -qx "$target" || missing+=("the Rust target (rustup target add $target)")
if [ ${#missing[@]} -gt 0 ]; then
  printf 'windows-tests: missing %s\n' "${missing[@]}" >&2
  exit 2
fi
wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver)

export WINEPREFIX=${ZC_WINEPREFIX:-$HOME/.cache/zeroclaw/wine}
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml=" # no Mono/Gecko install prompts
unset DISPLAY

started=$(date +%s)
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  echo "windows-tests: creating the Wine prefix $WINEPREFIX (once)"
  mkdir -p "$WINEPREFIX"
  "$wine" wineboot -i >/dev/null 2>&1
  "$wineserver" -w
fi

shim_dir=target/windows-shim
mkdir -p "$shim_dir"
x86_64-w64-mingw32-gcc -shared -O2 -Wall -Werror -o "$shim_dir/bcryptprimitives.dll" \
  scripts/windows/bcryptprimitives.c -ladvapi32
cp "$shim_dir/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"

"$wineserver" -p
trap '"$wineserver" -k >/dev/null 2>&1 || true' EXIT

export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=$wine
status=0
timeout --foreground "${ZC_WINDOWS_TESTS_TIMEOUT:-1800}" \
  cargo test --target "$target" --locked "${@:---workspace}" || status=$?
[ "$status" -eq 124 ] && echo "windows-tests: TIMED OUT after ${ZC_WINDOWS_TESTS_TIMEOUT:-1800} s" >&2
echo "windows-tests: $(( $(date +%s) - started )) s, exit status $status"
exit $status
