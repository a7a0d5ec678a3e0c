package wire

import "strings"

// The heartbeat's lock field (Heartbeat.Lock) is the node's enforcement
// mode as the agent states it — "off", "detect", "signal", "lock v1",
// "lock v2", "lock v2 systemd" — with these additions, which the portal
// and `gpubook-agent status` read:
const (
	// LockCannot starts the field of a node asked to lock that cannot (its
	// probe or self-check failed): "detect (cannot lock: REASON)".
	LockCannot = "detect (cannot lock: "
	// LockGuardingNothing follows the mode of a lock that passed its
	// self-check but has written no rules for any GPU yet (NVML lists
	// none): "lock v1 (guarding nothing: REASON)".
	LockGuardingNothing = " (guarding nothing: "
)

// LockFailed reports whether a node asked to lock cannot.
func LockFailed(lock string) bool { return strings.HasPrefix(lock, LockCannot) }

// LockIdle reports whether a node's lock guards no GPU yet.
func LockIdle(lock string) bool { return strings.Contains(lock, LockGuardingNothing) }
