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
# speech-dispatcher only recommends an output module; without one it aborts at start.
# pulseaudio: the prismatoid test hears speech-dispatcher through a private null sink;
# desktop-file-utils and appstream validate packaging/'s desktop entry and metainfo;
# openssh-server: the agent --ssh tests start their own sshd on 127.0.0.1;
# git: the packaging tests build from the files git lists, as a release would;
# binutils and libpython3.11: PyInstaller reads the bundle's libraries with objdump and
# bundles Python's shared library.
test_apt_packages=(espeak-ng libespeak-ng1 alsa-utils sox tmux speech-dispatcher speech-dispatcher-espeak-ng
    python3-speechd pulseaudio desktop-file-utils appstream openssh-client openssh-server git binutils libpython3.11)

log() { printf 'announcer setup: %s\n' "$*" >&2; }

# Runs a command as root: directly, or through sudo when there is one.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

can_become_root() {
    [ "$(id -u)" -eq 0 ] || command -v sudo >/dev/null 2>&1
}

missing_debian_packages() {
    local pkg
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || echo "$pkg"
    done
}

# Installs the Debian packages that are not installed yet. With required=yes a
# failure stops the set-up; otherwise it warns and announcer runs without them.
install_debian_packages() {
    local required="$1"; shift
    local missing=()
    command -v dpkg-query >/dev/null 2>&1 || { log "not a Debian system; skipping system packages"; return 0; }
    mapfile -t missing < <(missing_debian_packages "$@")
    [ ${#missing[@]} -eq 0 ] && return 0
    if ! can_become_root; then
        if [ "$required" = yes ]; then
            log "these Debian packages are needed: ${missing[*]}"
            log "run this once as root (or install sudo), then try again:"
            log "  apt-get install ${missing[*]}"
            exit 1
        fi
        log "not root and no sudo: skipping Debian packages ${missing[*]}"
        log "(as root: apt-get install ${missing[*]}); speech and some tests will be unavailable"
        return 0
    fi
    log "installing Debian packages: ${missing[*]}"
    # A fresh machine may never have fetched the package lists.
    log "fetching the Debian package lists"
    as_root apt-get update -qq >/dev/null
    log "installing ${#missing[@]} Debian packages (this can take a minute)"
    as_root env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    log "Debian packages installed"
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

# Debian splits venv's ensurepip out of python3.X into python3.X-venv.
ensure_venv_support() {
    local python="$1" version
    "$python" -c 'import ensurepip, venv' >/dev/null 2>&1 && return 0
    version="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    install_debian_packages yes "python$version-venv"
    "$python" -c 'import ensurepip, venv' >/dev/null 2>&1 ||
        { log "$python cannot create virtual environments (no ensurepip)"; exit 1; }
}

# The stamp records the hash of pyproject.toml and packaging/constraints.txt and the extras installed; a later
# call needing fewer extras (./run after ./test) is satisfied by it.
stamp_satisfies() {
    local stamp="$1" digest="$2" extras="$3" have extra
    have="$(cat "$stamp" 2>/dev/null)" || return 1
    [ "${have%%-*}" = "$digest" ] || return 1
    for extra in ${extras//,/ }; do
        case ",${have#*-}," in *",$extra,"*) ;; *) return 1 ;; esac
    done
}

ensure_venv() {
    local extras="$1" stamp="$venv/.announcer-installed" digest python
    digest="$(cat "$root/pyproject.toml" "$root/packaging/constraints.txt" | sha256sum | cut -c1-16)"
    if ! "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
        python="$(pick_python)"
        ensure_venv_support "$python"
        # A half-made .venv (an earlier failed attempt) would fail again.
        rm -rf "$venv"
        log "creating virtual environment in .venv"
        "$python" -m venv "$venv" || { rm -rf "$venv"; log "could not create .venv"; exit 1; }
    fi
    if ! stamp_satisfies "$stamp" "$digest" "$extras"; then
        log "step 1 of 2: updating pip"
        "$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
        log "step 2 of 2: installing Python dependencies ($extras); the first time takes a few minutes"
        # A person at a terminal sees pip's progress; logs and CI get one line per step.
        local quiet=(-q)
        [ -t 2 ] && quiet=(--progress-bar on)
        # packaging/constraints.txt: the versions the suite last passed with.
        "$venv/bin/python" -m pip install "${quiet[@]}" --disable-pip-version-check \
            -c "$root/packaging/constraints.txt" -e "${root}[${extras}]" >&2
        echo "$digest-$extras" > "$stamp"
        log "Python dependencies installed"
    fi
}

# The agent lab (tests/lab) runs the real agents (Claude Code and Codex, their ACP
# adapters, Qwen Code, opencode and Gemini CLI): node and npm
# from Debian when missing, then the pinned CLIs from npm into the user's cache
# (~/.cache/announcer/lab/agents/<pins digest>, shared by every checkout of the same pins)
# (tests/lab/clis.py holds the versions). The pinned Claude Code needs node >= 22 and
# Debian 12 ships 18: when the system's node is older, clis.py installs the npm
# registry's node binary package into ~/.cache/announcer/lab/node (no root needed) and the
# lab uses it.
# A failure here is only a warning: the lab tests say why they cannot run, and on CI
# they fail.
ensure_agent_lab() {
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        install_debian_packages no nodejs npm
    fi
    if ! command -v npm >/dev/null 2>&1; then
        log "npm is missing: the agent lab cannot install the agent CLIs"
        return 0
    fi
    (cd "$root" && "$venv/bin/python" -m tests.lab.clis install >/dev/null) ||
        log "the agent lab CLIs could not be installed; the lab tests will say why"
}

case "$purpose" in
    run) install_debian_packages no "${run_apt_packages[@]}"; ensure_venv "test" ;;
    test) install_debian_packages no "${test_apt_packages[@]}"; ensure_venv "test,benchmark"; ensure_agent_lab ;;
    *) log "usage: bootstrap.sh run|test"; exit 2 ;;
esac
