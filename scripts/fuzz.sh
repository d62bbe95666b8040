#!/usr/bin/env bash
# Fuzzing for zeroclaw (cargo-fuzz + libFuzzer, on the stable toolchain).
#
#   scripts/fuzz.sh list                      the targets
#   scripts/fuzz.sh run TARGET [SECONDS]      fuzz one target (default 600 s), ASan, release
#   scripts/fuzz.sh replay [TARGET...]        run every committed corpus input once (CI)
#   scripts/fuzz.sh replay-plain [TARGET...]  the same without cargo-fuzz or RUSTC_BOOTSTRAP
#   scripts/fuzz.sh build                     build the long-run (ASan, release) binaries
#
# The toolchain is stable; cargo-fuzz needs nightly-only flags (-Zsanitizer, sancov passes),
# so its builds run with RUSTC_BOOTSTRAP=1. Nothing else in the project uses that.
#
# `run` reads the committed seeds in fuzz/corpus/TARGET/ but writes what it discovers to
# fuzz/work/TARGET/ (git-ignored), and crashes to fuzz/artifacts/TARGET/. A crash found by
# a long run belongs, minimised (`cargo fuzz tmin`), in fuzz/corpus/TARGET/ next to its fix,
# so `replay` keeps checking it.
#
# `replay` builds unoptimised without a sanitizer (the fast build: a CI step, not a hunt)
# and passes each corpus file to the target once; any panic, assertion or timeout makes it
# exit non-zero. `replay-plain` builds the same targets with a plain `cargo build` (libFuzzer
# still links and runs the files; there is just no coverage instrumentation), for a machine
# where cargo-fuzz cannot be installed.
#
# Environment: FUZZ_SANITIZER (run/build; default address, or none), CARGO_TARGET_DIR
# (reuse a warm target dir between CI runs), FUZZ_JOBS (run: parallel libFuzzer jobs).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FUZZ="$ROOT/fuzz"
TARGETS=(codec_chunking envelope_classify params_decode gateway_rest_body gateway_ws_frames)
CARGO_FUZZ_VERSION="0.13.2"
TRIPLE="$(rustc -vV | sed -n 's/^host: //p')"
TARGET_DIR="${CARGO_TARGET_DIR:-$FUZZ/target}"

die() { echo "fuzz.sh: $*" >&2; exit 2; }

known_target() {
    local t
    for t in "${TARGETS[@]}"; do [[ "$t" == "$1" ]] && return 0; done
    return 1
}

ensure_cargo_fuzz() {
    if ! cargo fuzz --version >/dev/null 2>&1; then
        echo "fuzz.sh: installing cargo-fuzz $CARGO_FUZZ_VERSION" >&2
        cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION"
    fi
}

# cargo_fuzz SUBCOMMAND ARGS...: the target dir goes right after the subcommand, never
# after a `--` (that part is libFuzzer's, which would read it as a corpus directory).
cargo_fuzz() {
    local sub="$1"
    shift
    (cd "$FUZZ" && RUSTC_BOOTSTRAP=1 cargo fuzz "$sub" --target-dir "$TARGET_DIR" "$@")
}

# Runs each file of the committed corpus once through the binary; fails on the first crash.
replay_with() {
    local bindir="$1"; shift
    local failed=0 t files
    for t in "$@"; do
        known_target "$t" || die "unknown target $t (see: scripts/fuzz.sh list)"
        shopt -s nullglob
        files=("$FUZZ/corpus/$t"/*)
        shopt -u nullglob
        [[ ${#files[@]} -gt 0 ]] || die "no corpus in fuzz/corpus/$t"
        echo "== $t: replaying ${#files[@]} inputs" >&2
        local start=$SECONDS
        if "$bindir/$t" -timeout=30 -rss_limit_mb=2048 "${files[@]}" >"$FUZZ/replay-$t.log" 2>&1; then
            echo "   ok ($((SECONDS - start)) s)" >&2
            rm -f "$FUZZ/replay-$t.log"
        else
            echo "   FAILED; log follows (also in fuzz/replay-$t.log)" >&2
            tail -n 60 "$FUZZ/replay-$t.log" >&2
            failed=1
        fi
    done
    return "$failed"
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
    list)
        printf '%s\n' "${TARGETS[@]}"
        ;;
    build)
        ensure_cargo_fuzz
        cargo_fuzz build -O --sanitizer "${FUZZ_SANITIZER:-address}"
        ;;
    run)
        [[ $# -ge 1 ]] || die "usage: scripts/fuzz.sh run TARGET [SECONDS]"
        target="$1"
        seconds="${2:-600}"
        known_target "$target" || die "unknown target $target (see: scripts/fuzz.sh list)"
        [[ "$seconds" =~ ^[0-9]+$ ]] || die "SECONDS must be a whole number"
        ensure_cargo_fuzz
        mkdir -p "$FUZZ/work/$target" "$FUZZ/artifacts/$target"
        extra=()
        [[ -n "${FUZZ_JOBS:-}" ]] && extra+=("-jobs=$FUZZ_JOBS" "-workers=$FUZZ_JOBS")
        # libFuzzer's exit status is the verdict: non-zero on a crash, leak or timeout.
        cargo_fuzz run -O --sanitizer "${FUZZ_SANITIZER:-address}" "$target" \
            "$FUZZ/work/$target" "$FUZZ/corpus/$target" -- \
            -max_total_time="$seconds" -print_final_stats=1 -timeout=30 "${extra[@]}"
        ;;
    replay)
        [[ $# -gt 0 ]] || set -- "${TARGETS[@]}"
        ensure_cargo_fuzz
        if [[ " $* " == *" params_decode "* ]]; then
            cargo_fuzz build --dev --sanitizer none
        else
            # Without params_decode the daemon is not needed: a much smaller build.
            # The gateway targets need only the gateway crate (feature `gateway`).
            for t in "$@"; do
                if [[ "$t" == gateway_* ]]; then
                    cargo_fuzz build --dev --sanitizer none --no-default-features --features gateway "$t"
                else
                    cargo_fuzz build --dev --sanitizer none --no-default-features "$t"
                fi
            done
        fi
        replay_with "$TARGET_DIR/$TRIPLE/debug" "$@"
        ;;
    replay-plain)
        [[ $# -gt 0 ]] || set -- "${TARGETS[@]}"
        features=()
        if [[ " $* " != *" params_decode "* ]]; then
            features=(--no-default-features)
            [[ " $* " == *" gateway_"* ]] && features+=(--features gateway)
        fi
        (cd "$FUZZ" && cargo build --bins --target-dir "$TARGET_DIR/plain" "${features[@]}")
        replay_with "$TARGET_DIR/plain/debug" "$@"
        ;;
    *)
        sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2
        exit 2
        ;;
esac
