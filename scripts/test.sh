#!/usr/bin/env bash
# Installs what is missing, then runs every check and test of goodput, in order,
# stopping at the first failure with a non-zero exit status.
#
#   setup          scripts/setup.sh (tools, skipped when present)
#   fmt            cargo fmt --all --check
#   clippy         native crates (engine, core, cli and the app), then the app for wasm32
#   test           native cargo test --workspace
#   wasm-test      wasm-bindgen-test in headless Chromium: the app and the core
#   trunk          trunk build --release --offline  -> dist/
#   cli            cargo build --release -p goodput-cli  -> GOODPUT_CLI
#   e2e            node --test tests/e2e/*.test.mjs  (dist/ in headless Chromium)
#
# A stage that finds nothing to run (no wasm tests, no e2e files) fails too.
# Set CI=1 (most CI systems do) to turn off incremental compilation and colour.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"

if [ -n "${CI:-}" ]; then
    # A CI build starts from scratch: incremental artifacts only cost time and disk.
    export CARGO_INCREMENTAL=0
    # CI logs are plain files: no colour codes unless asked for.
    export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
fi

T0=$SECONDS
STAGE=""
STAGE_T0=$SECONDS
SUMMARY=()

fmt_secs() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

finish() {
    local status=$?
    if [ -n "$STAGE" ]; then
        SUMMARY+=("$(printf '%-10s %8s  FAILED' "$STAGE" "$(fmt_secs $((SECONDS - STAGE_T0)))")")
    fi
    echo
    echo "==================== summary ===================="
    printf '%s\n' "${SUMMARY[@]}"
    echo "total      $(fmt_secs $((SECONDS - T0)))"
    if [ "$status" -eq 0 ]; then
        echo "ALL CHECKS PASSED"
    else
        echo "FAILED in stage '${STAGE:-?}' (exit status $status)" >&2
    fi
    exit "$status"
}
trap finish EXIT

begin() {
    STAGE="$1"
    STAGE_T0=$SECONDS
    echo
    echo "==================== $1: $2 ===================="
}

end() {
    local took=$((SECONDS - STAGE_T0))
    SUMMARY+=("$(printf '%-10s %8s  ok' "$STAGE" "$(fmt_secs "$took")")")
    echo "---- $STAGE ok in $(fmt_secs "$took")"
    STAGE=""
}

# Runs one wasm-bindgen-test binary in headless Chromium; fails when it ran no test.
wasm_test() {
    local package="$1" target="$2" log
    log="$(mktemp)"
    cargo test --target wasm32-unknown-unknown -p "$package" --test "$target" 2>&1 | tee "$log"
    if grep -q "no tests to run" "$log" || ! grep -Eq "test result: ok\. [1-9][0-9]* passed" "$log"; then
        rm -f "$log"
        echo "wasm tests of $package ($target) ran no test" >&2
        return 1
    fi
    rm -f "$log"
}

begin setup "install missing tools"
bash scripts/setup.sh
end

begin fmt "cargo fmt --all --check"
cargo fmt --all --check
end

begin clippy "cargo clippy, native and wasm32, -D warnings"
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p goodput-app --all-targets -- -D warnings
end

begin test "cargo test --workspace (native)"
cargo test --workspace
end

begin wasm-test "wasm-bindgen-test in headless Chromium"
CHROMEDRIVER="$(command -v chromedriver)"
export CHROMEDRIVER
export WASM_BINDGEN_TEST_WEBDRIVER_JSON="$ROOT/webdriver.json"
export WASM_BINDGEN_USE_BROWSER=1
wasm_test goodput-app web
wasm_test goodput-core wasm
end

begin trunk "trunk build --release --offline"
trunk build --release --offline
shopt -s nullglob
wasm_files=(dist/*.wasm)
shopt -u nullglob
[ "${#wasm_files[@]}" -gt 0 ] || {
    echo "trunk produced no .wasm in dist/" >&2
    exit 1
}
for wasm_file in "${wasm_files[@]}"; do
    echo "wasm payload ${wasm_file}: $(wc -c <"$wasm_file") bytes, $(gzip -9c "$wasm_file" | wc -c) bytes gzipped"
done
end

begin cli "cargo build --release -p goodput-cli"
cargo build --release -p goodput-cli
target_dir="$(cargo metadata --format-version 1 --no-deps |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')"
export GOODPUT_CLI="$target_dir/release/goodput"
[ -x "$GOODPUT_CLI" ] || {
    echo "$GOODPUT_CLI was not built" >&2
    exit 1
}
echo "GOODPUT_CLI=$GOODPUT_CLI"
end

begin e2e "node --test tests/e2e/*.test.mjs"
export GOODPUT_DIST="$ROOT/dist"
CHROMIUM="$(command -v chromium)"
export CHROMIUM
shopt -s nullglob
e2e_files=(tests/e2e/*.test.mjs)
shopt -u nullglob
[ "${#e2e_files[@]}" -gt 0 ] || {
    echo "no tests/e2e/*.test.mjs files" >&2
    exit 1
}
node --test --test-timeout=600000 "${e2e_files[@]}"
end
