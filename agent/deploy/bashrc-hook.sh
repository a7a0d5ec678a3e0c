#!/bin/sh
# Puts the gpubook bash hook (bash.bashrc.snippet) at the TOP of the system
# bashrc, or takes it out. Usage: bashrc-hook.sh install|remove [ROOT]
#
# Why the top: `ssh node cmd` runs a non-interactive bash. Debian's and
# Ubuntu's bash (built with SYS_BASHRC and SSH_SOURCE_BASHRC) reads
# /etc/bash.bashrc then, but the stock file begins with
# `[ -z "$PS1" ] && return`, so anything appended is never reached. On the
# RHEL family bash reads ~/.bashrc under ssh, whose first lines source
# /etc/bashrc. Both files are handled when present (SUSE and Arch use
# /etc/bash.bashrc too). PAM and sshd cannot compute the variable:
# pam_env and /etc/environment are static, pam_exec cannot set the
# session's environment, SetEnv/AcceptEnv only pass fixed values.
#
# Idempotent: an existing block (also an old one appended at the end) is
# removed before the current snippet is placed. The file is replaced by a
# rename of a copy (owner and mode kept), never left half written.
set -eu

ACTION=${1:-}
ROOT=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
SNIPPET=$HERE/bash.bashrc.snippet
case $ACTION in install | remove) ;; *) echo "usage: bashrc-hook.sh install|remove [ROOT]" >&2; exit 2 ;; esac
[ "$ACTION" = remove ] || [ -r "$SNIPPET" ] || { echo "bashrc-hook.sh: no $SNIPPET" >&2; exit 1; }

placed=
for f in "$ROOT/etc/bash.bashrc" "$ROOT/etc/bashrc"; do
    [ -f "$f" ] || continue
    begins=$(grep -c '^# --- gpubook' "$f" || true)
    ends=$(grep -c '^# --- end gpubook ---' "$f" || true)
    [ "$ACTION" = install ] || [ "$begins" != 0 ] || continue
    if [ "$begins" != "$ends" ]; then
        # Deleting from a begin marker without its end would cut the rest.
        echo "bashrc-hook.sh: $f has an unmatched '# --- gpubook' marker; fix it by hand" >&2
        exit 1
    fi
    tmp=$f.gpubook-new
    cp -p "$f" "$tmp"
    {
        [ "$ACTION" = remove ] || cat "$SNIPPET"
        sed '/^# --- gpubook/,/^# --- end gpubook ---/d' "$f"
    } >"$tmp"
    mv -f "$tmp" "$f"
    placed="$placed $f"
done
if [ "$ACTION" = install ] && [ -z "$placed" ]; then
    echo "bashrc-hook.sh: neither $ROOT/etc/bash.bashrc nor $ROOT/etc/bashrc exists; \`ssh node cmd\` will not get CUDA_VISIBLE_DEVICES" >&2
fi
exit 0
