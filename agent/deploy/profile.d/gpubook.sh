# /etc/profile.d/gpubook.sh — gpubook: at login, set CUDA_VISIBLE_DEVICES to
# the GPUs you have booked now (the hint goes to the terminal on stderr).
# Login shells only; bash.bashrc.snippet covers `ssh host cmd`.
# Safe when the agent is missing, fails or is slow: it answers within 1 s,
# `timeout` caps it anyway, and only well-formed output is evaluated.
if [ -z "${__gpubook_done-}" ] && [ -x /usr/local/bin/gpubook-agent ]; then
    __gpubook_done=1
    if command -v timeout >/dev/null 2>&1; then
        __gpubook_env=$(timeout 2 /usr/local/bin/gpubook-agent env) || __gpubook_env=
    else
        __gpubook_env=$(/usr/local/bin/gpubook-agent env) || __gpubook_env=
    fi
    case "$__gpubook_env" in
        "export CUDA_VISIBLE_DEVICES="*) eval "$__gpubook_env" ;;
    esac
    unset __gpubook_env
fi
