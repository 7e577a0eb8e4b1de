#!/usr/bin/env bash
# Installs what is missing, builds the web app and serves it on http://127.0.0.1:8080,
# rebuilding on every change to the app or the core. Stop it with Ctrl-C.
# Set PORT to use another port.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
echo "[serve] http://127.0.0.1:${PORT:-8080}"
exec trunk serve --offline --address 127.0.0.1 --port "${PORT:-8080}"
