#!/usr/bin/env bash
# Proves the README's set-up commands on a fresh Debian 12 that has only Python 3.11 and apt:
# builds a minimal bookworm root with debootstrap, clones the repository into it, and runs
# ./run --help, ./test (as CI runs it: CI=true, so the agent lab must run), both again (they
# must not set up twice) and ./run replay of a shared fixture there, as root.
# Usage (as root, on a Debian host): packaging/fresh-debian-check.sh [REPO] [SHARED]
#   REPO    git repository to clone (default: this checkout)
#   SHARED  directory mounted as ../shared beside the clone (default: ../shared beside REPO)
# Environment: CHECK_ROOT (default /var/tmp/announcer-fresh-root, deleted at the end),
#   MIRROR and SECURITY_MIRROR (default: the ones this host's apt uses), KEEP_ROOT=1 to keep the root.
set -euo pipefail

repo="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
shared="${2:-$(cd "$repo/.." && pwd)/shared}"
target="${CHECK_ROOT:-/var/tmp/announcer-fresh-root}"
mounted=()

log() { printf 'fresh-debian-check: %s\n' "$*" >&2; }

host_archive() {
    # The first URI ending in /$1 in this host's apt sources (one-line or deb822 style).
    { grep -rhoE "https?://[^ #]+/$1/?( |\$)" /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null || true; } |
        head -n1 | tr -d ' '
}

# shellcheck disable=SC2317  # called through the EXIT trap
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -R "${mounted[$i]}" 2>/dev/null || true; done
    if grep -q " $target" /proc/mounts; then log "still mounted under $target; not deleting it"; return; fi
    [ "${KEEP_ROOT:-0}" = 1 ] || rm -rf "$target"
}

in_root() {
    # A clean root login environment; PIP_CERT, NODE_EXTRA_CA_CERTS and SSL_CERT_FILE let pip,
    # npm and uv trust a host-added CA (see docs/install.md). The root is entered with pivot_root in a mount
    # namespace of its own, not chroot: a chrooted process may not create user namespaces,
    # and Codex's sandbox (bwrap) in the agent lab needs them, as on a real machine.
    # shellcheck disable=SC2016  # expanded by the inner shell
    unshare --mount --propagation private --fork /bin/bash -c '
        mount --rbind "$1" "$1" && cd "$1" && mkdir -p .oldroot && pivot_root . .oldroot &&
            cd / && umount -l /.oldroot && rmdir /.oldroot || exit 1
        shift
        exec "$@"' _ "$target" \
        /usr/bin/env -i HOME=/root USER=root LOGNAME=root TERM=xterm LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        ${pip_cert:+PIP_CERT=$pip_cert NODE_EXTRA_CA_CERTS=$pip_cert SSL_CERT_FILE=$pip_cert} \
        /bin/bash -c "cd /work/announcer && $*"
}

[ "$(id -u)" -eq 0 ] || { log "needs root (debootstrap, chroot, mount)"; exit 1; }
[ -d "$shared" ] || { log "no shared directory at $shared"; exit 1; }
[ ! -e "$target" ] || { log "$target already exists; remove it first"; exit 1; }
command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
mirror="${MIRROR:-$(host_archive debian)}"
security="${SECURITY_MIRROR:-$(host_archive debian-security)}"
pip_cert=""
[ -n "$mirror" ] || { log "no Debian mirror found in this host's apt sources; set MIRROR"; exit 1; }
trap cleanup EXIT

start=$SECONDS
debootstrap --variant=minbase bookworm "$target" "$mirror" >/dev/null
printf 'deb %s bookworm main\ndeb %s bookworm-updates main\n' "$mirror" "$mirror" > "$target/etc/apt/sources.list"
[ -z "$security" ] || printf 'deb %s bookworm-security main\n' "$security" >> "$target/etc/apt/sources.list"
cp /etc/resolv.conf "$target/etc/resolv.conf"
mount -t proc proc "$target/proc"; mounted+=("$target/proc")
for fs in sys dev; do
    mount --rbind "/$fs" "$target/$fs"; mount --make-rslave "$target/$fs"; mounted+=("$target/$fs")
done
mkdir -p "$target/work/shared"
mount --bind "$shared" "$target/work/shared"; mount -o remount,bind,ro "$target/work/shared"
mounted+=("$target/work/shared")
# "Only Python 3.11 and apt": apt's defaults, so python3.11's Recommends (ca-certificates) come too.
chroot "$target" bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3.11' >/dev/null
# A host behind a TLS-inspecting proxy trusts extra CAs; the fresh machine must trust them too to reach PyPI.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$target/usr/local/share/ca-certificates/"
    chroot "$target" update-ca-certificates >/dev/null 2>&1
    pip_cert=/etc/ssl/certs/ca-certificates.crt
fi
git clone -q "$repo" "$target/work/announcer"
log "fresh root ready in $((SECONDS - start))s ($(git -C "$target/work/announcer" log --oneline -1))"

status=0
start=$SECONDS
in_root ./run --help >/dev/null || { log "./run --help failed on the fresh machine"; status=1; }
log "first ./run --help (set-up for running) took $((SECONDS - start))s"
start=$SECONDS
# As CI runs it: the agent lab must run, never skip
in_root CI=true ./test -q -p no:cacheprovider || { log "./test failed"; status=1; }
log "then ./test (test packages, benchmark extra and the suite) took $((SECONDS - start))s"
# Idempotence: once set up, neither command may install anything again.
again="$(in_root './run --help >/dev/null && ./test -q -p no:cacheprovider tests/test_test_command.py >/dev/null' 2>&1)" ||
    { log "second run failed: $again"; status=1; }
case "$again" in *"announcer setup"*) log "set-up ran again: $again"; status=1 ;; esac
in_root ./run replay --no-delay ../shared/aaep/fixtures/captured-minimal-producer-run.jsonl >/dev/null ||
    { log "./run replay failed"; status=1; }
if [ "$status" -eq 0 ]; then log "all passed"; else log "FAILED"; fi
exit "$status"
