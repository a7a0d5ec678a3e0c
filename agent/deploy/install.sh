#!/bin/sh
# gpubook-agent installer. Run as root on the GPU node, with the binary next
# to this script (or GPUBOOK_AGENT_BIN=/path/to/gpubook-agent).
#
# First install: the enrolment token (from the node's page on the portal,
# valid 24 h, works once) comes from the environment or a file, never the
# command line, so that ps and the shell history do not show it:
#
#   sudo GPUBOOK_AGENT_TOKEN=... ./install.sh https://gpubook.example.org
#   sudo GPUBOOK_AGENT_TOKEN_FILE=/root/token ./install.sh https://gpubook.example.org
#
# Upgrade (already enrolled): sudo ./install.sh — no URL, no token; the
# credential and agent.conf are kept. Enrol again (a new token from the
# node's page): the first-install command; the credential is replaced.
# The portal's enrol page shows that command, for either case.
#
# Packaging: DESTDIR=/tmp/pkg ./install.sh installs the files under DESTDIR
# only (no root needed, no enrolment, no systemctl); when DESTDIR is a
# whole root with etc/bash.bashrc or etc/bashrc, the bash hook is placed
# there too. A package runs usr/share/gpubook-agent/bashrc-hook.sh install
# in its post-install step.
# Uninstall: see agent/README.md.
set -eu

PORTAL=${1:-}
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${GPUBOOK_AGENT_BIN:-$HERE/gpubook-agent}
D=${DESTDIR:-}

if [ $# -gt 1 ]; then
    echo "install.sh: the token is no longer an argument (ps would show it); use GPUBOOK_AGENT_TOKEN or GPUBOOK_AGENT_TOKEN_FILE" >&2
    exit 2
fi
[ -n "$D" ] || [ "$(id -u)" -eq 0 ] || { echo "install.sh: run as root (or set DESTDIR to package)" >&2; exit 1; }
[ -x "$BIN" ] || { echo "install.sh: no gpubook-agent binary at $BIN" >&2; exit 1; }

install -d -m 0755 "$D/usr/local/bin" "$D/etc/gpubook" "$D/etc/profile.d" "$D/etc/systemd/system" "$D/var/lib/gpubook-agent"
install -m 0755 "$BIN" "$D/usr/local/bin/gpubook-agent"
[ -f "$D/etc/gpubook/agent.conf" ] || install -m 0644 "$HERE/agent.conf" "$D/etc/gpubook/agent.conf"
install -m 0644 "$HERE/profile.d/gpubook.sh" "$D/etc/profile.d/gpubook.sh"
install -m 0644 "$HERE/gpubook-agent.service" "$D/etc/systemd/system/gpubook-agent.service"
# The bash hook and the script that places it, for a package's post-install
# and for uninstalling (see agent/README.md).
install -d -m 0755 "$D/usr/share/gpubook-agent"
install -m 0644 "$HERE/bash.bashrc.snippet" "$D/usr/share/gpubook-agent/bash.bashrc.snippet"
install -m 0755 "$HERE/bashrc-hook.sh" "$D/usr/share/gpubook-agent/bashrc-hook.sh"
if [ -n "$D" ]; then
    # A staging tree for a package has no bashrc: the package runs
    # bashrc-hook.sh in post-install. A whole root (an image being built)
    # has one and gets the hook now.
    if [ -f "$D/etc/bash.bashrc" ] || [ -f "$D/etc/bashrc" ]; then
        sh "$HERE/bashrc-hook.sh" install "$D"
    fi
    echo "gpubook-agent files installed under $D"
    exit 0
fi
sh "$HERE/bashrc-hook.sh" install

/usr/local/bin/gpubook-agent probe || echo "install.sh: NVML not usable yet; the agent keeps the schedule and retries NVML" >&2

TOKEN=${GPUBOOK_AGENT_TOKEN:-}
if [ -z "$TOKEN" ] && [ -n "${GPUBOOK_AGENT_TOKEN_FILE:-}" ]; then
    TOKEN=$(tr -d ' \n\r' <"$GPUBOOK_AGENT_TOKEN_FILE")
fi
# Enrol on a first install, and whenever a token is given.
if [ -n "$TOKEN" ] || [ ! -f /etc/gpubook/credential.json ]; then
    [ -n "$PORTAL" ] && [ -n "$TOKEN" ] || {
        echo "install.sh: not enrolled yet (or a token without the portal URL): give the portal URL and GPUBOOK_AGENT_TOKEN (or GPUBOOK_AGENT_TOKEN_FILE)" >&2
        exit 1
    }
    GPUBOOK_AGENT_TOKEN=$TOKEN /usr/local/bin/gpubook-agent enroll --portal "$PORTAL"
fi

# systemd runs the agent where it is the init (PID 1: /run/systemd/system
# exists, as sd_booted checks). Elsewhere (a container, OpenRC, runit,
# SysV init) every file is in place and the admin starts the agent with
# the unit's own command under their init.
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    systemctl enable --now gpubook-agent.service
    systemctl restart gpubook-agent.service
    echo "gpubook-agent installed. Check: gpubook-agent status; journalctl -u gpubook-agent"
    exit 0
fi
echo "install.sh: systemd was not found (no systemctl, or systemd is not PID 1): the agent is installed but NOT running." >&2
echo "gpubook-agent installed. Start it as root under your init system, restarted when it exits:"
echo "    /usr/local/bin/gpubook-agent run --config /etc/gpubook/agent.conf"
echo "Then check: gpubook-agent status"
exit 0
