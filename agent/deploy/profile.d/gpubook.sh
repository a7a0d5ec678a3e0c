# /etc/profile.d/gpubook.sh — gpubook: at login, set CUDA_VISIBLE_DEVICES to
# the GPUs you have booked now (the hint goes to the terminal on stderr).
# Login shells only; bash.bashrc.snippet (top of the system bashrc) covers
# `ssh host cmd`.
# Fails closed: when the agent is missing, crashes, hangs (capped at 1 s) or
# prints anything but well-formed output, users see no GPU and a hint;
# root and system accounts (UID < 1000) keep their environment. An empty
# answer with exit 0 means "exempt": nothing is changed.
# Once per shell process: `ssh node bash -lc cmd` runs the bash.bashrc
# block, then bash execs `bash -lc` in the same process, which reads this
# file; the second run is skipped (see the guard at the end).
__gpubook_uid=$(id -u 2>/dev/null)
if [ "${__GPUBOOK_HOOKED-}" != "$$:$__gpubook_uid:${CUDA_VISIBLE_DEVICES+=}${CUDA_VISIBLE_DEVICES-}" ]; then
    __gpubook_env=
    __gpubook_rc=127
    if [ -x /usr/local/bin/gpubook-agent ]; then
        if command -v timeout >/dev/null 2>&1; then
            __gpubook_env=$(timeout 1 /usr/local/bin/gpubook-agent env)
        else
            __gpubook_env=$(/usr/local/bin/gpubook-agent env)
        fi
        __gpubook_rc=$?
    fi
    case "$__gpubook_rc:$__gpubook_env" in
        "0:export CUDA_VISIBLE_DEVICES="*) eval "$__gpubook_env" ;;
        0:) ;;
        *)
            case "$__gpubook_uid" in
                [0-9] | [0-9][0-9] | [0-9][0-9][0-9]) ;;
                *)
                    export CUDA_VISIBLE_DEVICES=
                    echo "gpubook: the GPU schedule could not be read (gpubook-agent missing or failing); no GPUs visible — ask your admin" >&2
                    ;;
            esac
            ;;
    esac
    # The guard: this process ($$, which exec keeps), this UID, and the
    # value just set. Inherited by another process, or with the variable
    # changed since, it does not match and the hook runs again; whoever
    # could forge it runs commands in this process already and could as
    # well set CUDA_VISIBLE_DEVICES (the lock, not the variable, holds).
    __GPUBOOK_HOOKED=$$:$__gpubook_uid:${CUDA_VISIBLE_DEVICES+=}${CUDA_VISIBLE_DEVICES-}
    export __GPUBOOK_HOOKED
    unset __gpubook_env __gpubook_rc
fi
unset __gpubook_uid
