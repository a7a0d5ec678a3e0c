package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models"
)

// AgentSettings is how the portal treats what node agents report.
type AgentSettings struct {
	// Retention is how long per-minute usage is kept; RollupRetention how
	// long its hourly sums are (docs/scaling.md): reports read the sums,
	// so the minutes may be kept for a much shorter time.
	Retention, RollupRetention time.Duration
	IdlePolicy                 models.IdlePolicy
}

// resolveAgent reads GPUBOOK_USAGE_RETENTION_DAYS,
// GPUBOOK_USAGE_ROLLUP_RETENTION_DAYS and the idle-booking
// policy: GPUBOOK_IDLE_AUTO_RELEASE (0|1, default 0: warn only),
// GPUBOOK_IDLE_GRACE (default 30m) and GPUBOOK_IDLE_UTIL_PCT (default 5).
func resolveAgent(getenv func(string) string, cfg *Config) error {
	ret, err := models.UsageRetention(strings.TrimSpace(getenv("GPUBOOK_USAGE_RETENTION_DAYS")))
	if err != nil {
		return fmt.Errorf("GPUBOOK_USAGE_RETENTION_DAYS: %q is not a whole number of days (1 or more)", getenv("GPUBOOK_USAGE_RETENTION_DAYS"))
	}
	rollups, err := models.RollupRetention(strings.TrimSpace(getenv("GPUBOOK_USAGE_ROLLUP_RETENTION_DAYS")))
	if err != nil {
		return fmt.Errorf("GPUBOOK_USAGE_ROLLUP_RETENTION_DAYS: %q is not a whole number of days (1 or more)", getenv("GPUBOOK_USAGE_ROLLUP_RETENTION_DAYS"))
	}
	pol := models.DefaultIdlePolicy
	switch v := strings.ToLower(strings.TrimSpace(getenv("GPUBOOK_IDLE_AUTO_RELEASE"))); v {
	case "", "0", "false", "no", "off":
	case "1", "true", "yes", "on":
		pol.AutoRelease = true
	default:
		return fmt.Errorf("GPUBOOK_IDLE_AUTO_RELEASE: %q is not 1 or 0", v)
	}
	if pol.Grace, err = durationEnv(getenv, "GPUBOOK_IDLE_GRACE", pol.Grace); err != nil {
		return err
	}
	if raw := strings.TrimSpace(getenv("GPUBOOK_IDLE_UTIL_PCT")); raw != "" {
		pct, err := strconv.ParseFloat(raw, 64)
		if err != nil || pct <= 0 || pct > 100 {
			return fmt.Errorf("GPUBOOK_IDLE_UTIL_PCT: %q is not a percentage between 0 and 100", raw)
		}
		pol.UtilPct = pct
	}
	cfg.Agent = AgentSettings{Retention: ret, RollupRetention: rollups, IdlePolicy: pol}
	return nil
}
