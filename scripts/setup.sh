#!/usr/bin/env bash
# Installs whatever goodput's build and tests need and is not there yet.
#
# Safe to run again and again: every tool is checked first (name and exact
# version) and skipped when present, so a second run takes seconds.
#
#   rust toolchain + wasm32 target   from rust-toolchain.toml (rustup)
#   trunk 0.21.14                    cargo install (about 15 min on 2 cores, once)
#   wasm-bindgen-cli                 the exact version in Cargo.lock (about 4 min, once)
#   wasm-opt 132                     npm package binaryen@132
#   chromium + chromedriver          Debian packages chromium, chromium-driver
#   end-to-end test packages         npm ci in tests/e2e
#
# Needs: Debian 12 (or similar) with rustup, a C toolchain, Node.js >= 20 with npm,
# and root or sudo for apt-get and `npm install -g`.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

TRUNK_VERSION="0.21.14"
BINARYEN_VERSION="132"

say() { printf '[setup] %s\n' "$*"; }
die() {
    printf '[setup] ERROR: %s\n' "$*" >&2
    exit 1
}

# Runs a command as root, through sudo when we are not root already.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root (or sudo) to run: $*"
    fi
}

apt_updated=0
apt_install() {
    command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install these packages by hand: $*"
    if [ "$apt_updated" -eq 0 ]; then
        say "apt-get update"
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
        apt_updated=1
    fi
    say "apt-get install $*"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

# Prints the version of a package recorded in Cargo.lock.
lock_version() {
    awk -v name="$1" '
        $0 == "name = \"" name "\"" { found = 1; next }
        found && /^version = / { gsub(/"/, "", $3); print $3; exit }
    ' Cargo.lock
}

# --- Rust toolchain, components and the wasm target -------------------------
command -v rustup >/dev/null 2>&1 || die "rustup not found; install it from https://rustup.rs first"
if ! rustup show active-toolchain >/dev/null 2>&1; then
    say "installing the toolchain pinned in rust-toolchain.toml"
    rustup toolchain install
fi
installed_components="$(rustup component list --installed)"
for component in rustfmt clippy; do
    if ! grep -q "^${component}" <<<"$installed_components"; then
        say "rustup component add $component"
        rustup component add "$component"
    fi
done
if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    say "ok: rust $(rustc --version | cut -d' ' -f2) with wasm32-unknown-unknown"
else
    say "rustup target add wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown
fi

# --- trunk ------------------------------------------------------------------
if [ "$(trunk --version 2>/dev/null || true)" = "trunk ${TRUNK_VERSION}" ]; then
    say "ok: trunk ${TRUNK_VERSION}"
else
    say "cargo install trunk ${TRUNK_VERSION} (slow: about 15 min on 2 cores)"
    cargo install trunk --version "${TRUNK_VERSION}" --locked
fi

# --- wasm-bindgen-cli, matching Cargo.lock ----------------------------------
wbg_version="$(lock_version wasm-bindgen)"
[ -n "$wbg_version" ] || die "wasm-bindgen not found in Cargo.lock"
trunk_wbg="$(sed -n 's/^wasm_bindgen *= *"\(.*\)".*/\1/p' Trunk.toml)"
[ "$trunk_wbg" = "$wbg_version" ] ||
    die "Trunk.toml pins wasm_bindgen = \"${trunk_wbg}\" but Cargo.lock has ${wbg_version}; make them equal"
if [ "$(wasm-bindgen --version 2>/dev/null || true)" = "wasm-bindgen ${wbg_version}" ] &&
    [ "$(wasm-bindgen-test-runner --version 2>/dev/null || true)" = "wasm-bindgen-test-runner ${wbg_version}" ]; then
    say "ok: wasm-bindgen-cli ${wbg_version}"
else
    say "cargo install wasm-bindgen-cli =${wbg_version} (about 4 min)"
    cargo install wasm-bindgen-cli --version "=${wbg_version}"
fi

# --- Node.js ----------------------------------------------------------------
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 ||
    die "node and npm not found; install Node.js 20 or newer"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || die "Node.js $(node --version) is too old; need 20 or newer"
say "ok: node $(node --version), npm $(npm --version)"

# --- wasm-opt (binaryen) ----------------------------------------------------
if wasm-opt --version 2>/dev/null | grep -q "version ${BINARYEN_VERSION}\b"; then
    say "ok: wasm-opt ${BINARYEN_VERSION}"
else
    say "npm install -g binaryen@${BINARYEN_VERSION}"
    as_root npm install -g --no-audit --no-fund "binaryen@${BINARYEN_VERSION}"
    hash -r
    wasm-opt --version 2>/dev/null | grep -q "version ${BINARYEN_VERSION}\b" ||
        die "wasm-opt on PATH is '$(wasm-opt --version 2>&1 || true)' ($(command -v wasm-opt || echo missing)), need version ${BINARYEN_VERSION}; remove the older one from PATH"
fi

# --- Chromium and chromedriver ----------------------------------------------
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    say "ok: chromium and chromedriver"
else
    apt_install chromium chromium-driver
    hash -r
fi
# The Debian wrapper script may print a harmless shell warning; keep only the version line.
chromium_major="$(chromium --version 2>/dev/null | sed -n 's/^Chromium \([0-9]*\)\..*/\1/p')"
driver_major="$(chromedriver --version 2>/dev/null | sed -n 's/^ChromeDriver \([0-9]*\)\..*/\1/p')"
[ -n "$chromium_major" ] || die "chromium --version gave no version"
[ "$chromium_major" = "$driver_major" ] ||
    die "chromium ${chromium_major} and chromedriver ${driver_major:-?} differ; install matching versions"
say "ok: chromium ${chromium_major} with a matching chromedriver"

# --- end-to-end test packages -----------------------------------------------
lock_sum="$(sha256sum tests/e2e/package-lock.json | cut -d' ' -f1)"
stamp="tests/e2e/node_modules/.installed-lock-sha256"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$lock_sum" ]; then
    say "ok: tests/e2e packages"
else
    say "npm ci in tests/e2e"
    (cd tests/e2e && npm ci --no-audit --no-fund)
    printf '%s\n' "$lock_sum" >"$stamp"
fi

say "all tools present"
