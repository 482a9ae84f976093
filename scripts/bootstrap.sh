#!/usr/bin/env bash
# Makes a fresh Debian machine with only Python 3.11 ready to run announcer:
# Debian packages (speech, audio, terminal tests), a virtual environment, and
# the Python dependencies. Safe to run again: it only does what is missing.
# Usage: scripts/bootstrap.sh run|test
set -euo pipefail

purpose="${1:-run}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"

run_apt_packages=(espeak-ng libespeak-ng1 alsa-utils python3-speechd)
test_apt_packages=(espeak-ng libespeak-ng1 alsa-utils sox tmux speech-dispatcher python3-speechd)

log() { printf 'announcer setup: %s\n' "$*" >&2; }

install_debian_packages() {
    local wanted=("$@") missing=()
    command -v dpkg-query >/dev/null 2>&1 || { log "not a Debian system; skipping system packages"; return 0; }
    for pkg in "${wanted[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
            log "missing Debian packages (${missing[*]}); run as root or install them, continuing without"
            return 0
        fi
    fi
    log "installing Debian packages: ${missing[*]}"
    $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

pick_python() {
    for candidate in python3.11 python3 python; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$candidate"; return 0
        fi
    done
    log "Python 3.11 or newer is required"; exit 1
}

ensure_venv() {
    local extras="$1" stamp="$venv/.announcer-installed" want
    want="$(cat "$root/pyproject.toml" | sha256sum | cut -c1-16)-$extras"
    if [ ! -x "$venv/bin/python" ]; then
        log "creating virtual environment in .venv"
        "$(pick_python)" -m venv "$venv"
    fi
    if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
        log "installing Python dependencies ($extras)"
        "$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
        "$venv/bin/python" -m pip install -q --disable-pip-version-check -e "$root[$extras]"
        echo "$want" > "$stamp"
    fi
}

case "$purpose" in
    run) install_debian_packages "${run_apt_packages[@]}"; ensure_venv "test" ;;
    test) install_debian_packages "${test_apt_packages[@]}"; ensure_venv "test,benchmark" ;;
    *) log "usage: bootstrap.sh run|test"; exit 2 ;;
esac
