#!/usr/bin/env bash
# Set up a qdlab development environment. Safe to run again: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*"; }

PYTHON="${PYTHON:-python3}"
missing=()
[ -x .venv/bin/python ] || "$PYTHON" -c "import ensurepip, venv" 2>/dev/null || missing+=(python3-venv)
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ ${#missing[@]} -eq 0 ]; then
    say "system packages present (dot, chromium, redis-server, python3 venv)"
elif [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    say "not root or no apt-get: skipping system packages (${missing[*]});" \
        "graph rendering, browser and team-cache tests will be skipped"
else
    say "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
    say "creating .venv with $("$PYTHON" --version)"
    "$PYTHON" -m venv .venv
else
    say ".venv exists"
fi

say "pip install -e '.[dev,docs]'"
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev,docs]' </dev/null
if [ "$(id -u)" -eq 0 ] && [ ! -e .venv/etc/jupyter/jupyter_lab_config.json ]; then
    # JupyterLab refuses to start as root unless told it may; this venv's own config says so, so the
    # `.venv/bin/jupyter lab notebooks/` (README.md, docs/getting-started.md) works on a root-only machine too.
    mkdir -p .venv/etc/jupyter
    printf '{"ServerApp": {"allow_root": true}}\n' > .venv/etc/jupyter/jupyter_lab_config.json
fi
say "done: run tests with .venv/bin/python -m pytest -q"
