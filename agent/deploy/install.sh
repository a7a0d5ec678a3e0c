#!/bin/sh
# gpubook-agent installer. Run as root on the GPU node, with the binary next
# to this script (or GPUBOOK_AGENT_BIN=/path/to/gpubook-agent):
#
#   sudo ./install.sh https://gpubook.example.org ENROLMENT_TOKEN
#
# The token comes from the portal's "add node" page, is valid 24 h and works
# once. Re-running the script upgrades the binary and keeps the credential.
set -eu

PORTAL=${1:?usage: install.sh PORTAL_URL ENROLMENT_TOKEN}
TOKEN=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${GPUBOOK_AGENT_BIN:-$HERE/gpubook-agent}

[ "$(id -u)" -eq 0 ] || { echo "install.sh: run as root" >&2; exit 1; }
[ -x "$BIN" ] || { echo "install.sh: no gpubook-agent binary at $BIN" >&2; exit 1; }

install -m 0755 "$BIN" /usr/local/bin/gpubook-agent
install -d -m 0755 /etc/gpubook /var/lib/gpubook-agent
[ -f /etc/gpubook/agent.conf ] || install -m 0644 "$HERE/agent.conf" /etc/gpubook/agent.conf
install -m 0644 "$HERE/profile.d/gpubook.sh" /etc/profile.d/gpubook.sh
if [ -f /etc/bash.bashrc ] && ! grep -q '^# --- gpubook' /etc/bash.bashrc; then
    cat "$HERE/bash.bashrc.snippet" >>/etc/bash.bashrc
fi
install -m 0644 "$HERE/gpubook-agent.service" /etc/systemd/system/gpubook-agent.service

/usr/local/bin/gpubook-agent probe || echo "install.sh: NVML not usable yet; the agent will still keep the schedule" >&2

if [ ! -f /etc/gpubook/credential.json ]; then
    [ -n "$TOKEN" ] || { echo "install.sh: not enrolled and no token given" >&2; exit 1; }
    GPUBOOK_AGENT_TOKEN=$TOKEN /usr/local/bin/gpubook-agent enroll --portal "$PORTAL"
fi

systemctl daemon-reload
systemctl enable --now gpubook-agent.service
systemctl restart gpubook-agent.service
echo "gpubook-agent installed. Check: gpubook-agent status; journalctl -u gpubook-agent"
