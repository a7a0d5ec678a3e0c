package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/agent/exempt"
	"github.com/gpubook/gpubook/agent/simgpu"
	"github.com/gpubook/gpubook/agent/spool"
)

// defaultConfigPath is read when neither --config nor GPUBOOK_AGENT_CONFIG is given.
const defaultConfigPath = "/etc/gpubook/agent.conf"

// config is every setting of the agent. The file is "key = value" lines
// ('#' starts a comment); GPUBOOK_AGENT_<KEY> in the environment overrides a
// key (GPUBOOK_AGENT_PORTAL_URL for portal_url). agent/deploy/agent.conf
// documents each key.
type config struct {
	PortalURL      string
	Node           string
	CredentialFile string
	StateDir       string
	CacheFile      string
	MetricsAddr    string
	ProcRoot       string
	PasswdFile     string
	GroupFile      string
	LogLevel       slog.Level

	SampleInterval, SyncInterval, DeliverInterval, HeartbeatInterval time.Duration
	EnvTimeout                                                       time.Duration
	// UsageSpread spreads the fleet's usage over each minute
	// (daemon.Config.UsageSpread): 0s to 59s, 0 sends at once.
	UsageSpread time.Duration
	NVMLRetry   time.Duration // first delay; doubles up to 5 min

	Policy detect.Policy
	Spool  spool.Limits
	// Enforce is the mode: "off" (report only: no terminal warnings, no
	// signals), "detect" (warn and report; the default), "signal" (detect,
	// then SIGTERM/SIGKILL after the grace period) or "lock" (signal, and
	// cgroup device rules that let each user open only the GPUs they hold).
	Enforce string
	// CgroupRoot is where the cgroup hierarchies are mounted (lock mode).
	CgroupRoot string
	// LockCgroup picks the hierarchy of the lock: "auto" (v1's devices
	// controller when mounted, else cgroup2), "v1" or "v2".
	LockCgroup string
	// DevDir is where device files are made: the lock's self-check file
	// and the simulated GPUs' files (/dev; /run and /tmp are often nodev).
	DevDir string

	// GPU is the backend: "nvml" (the real GPUs) or "simulated" (go-nvml's
	// simulated devices, for demos and tests; agent/simgpu).
	GPU string
	Sim simConfig
}

// simConfig is the simulated node (gpu = simulated): how many GPUs of
// which model, and the optional load script of extra processes.
type simConfig struct {
	GPUs      int
	Model     string
	MemoryMiB int64
	Script    string
	// MIG puts GPUs in MIG mode with the instances given (sim_mig, in
	// simgpu.ParseMIG's form: "3:7x1g.10gb").
	MIG simgpu.MIGLayout
	// ClockAhead sets the simulated node's clock this far ahead of the
	// host's (0 to 1 minute), so that a demo or an end-to-end test reaches
	// its first complete minute of usage without waiting for the host's.
	ClockAhead time.Duration
}

func defaultConfig() config {
	return config{
		CredentialFile: "/etc/gpubook/credential.json", StateDir: "/var/lib/gpubook-agent",
		CacheFile: "/var/lib/gpubook-agent/schedule.json", MetricsAddr: "127.0.0.1:9478",
		ProcRoot: "/proc", LogLevel: slog.LevelInfo,
		SampleInterval: 10 * time.Second, SyncInterval: 30 * time.Second, DeliverInterval: 15 * time.Second,
		HeartbeatInterval: 60 * time.Second, UsageSpread: 45 * time.Second, EnvTimeout: 800 * time.Millisecond, NVMLRetry: 5 * time.Second,
		Policy: detect.DefaultPolicy(), Spool: spool.DefaultLimits(), GPU: "nvml", Enforce: "detect",
		CgroupRoot: "/sys/fs/cgroup", LockCgroup: "auto", DevDir: "/dev",
	}
}

// loadConfig reads path (a missing file means defaults) and applies env
// overrides. A bad value is blamed on where it came from (FILE:LINE or the
// variable), and keys are checked in configKeys order so that the first
// problem named is the same on every run.
func loadConfig(path string, getenv func(string) string) (config, error) {
	c := defaultConfig()
	kv := map[string]configValue{}
	if err := readKV(path, kv); err != nil {
		return c, err
	}
	for _, k := range configKeys {
		name := "GPUBOOK_AGENT_" + strings.ToUpper(k)
		if v := getenv(name); v != "" {
			kv[k] = configValue{v, name}
		}
	}
	for k, v := range kv {
		if !slices.Contains(configKeys, k) {
			return c, fmt.Errorf("agent: config: %s: unknown key %q", v.from, k)
		}
	}
	for _, k := range configKeys {
		if v, ok := kv[k]; ok {
			if err := c.set(k, v.value); err != nil {
				return c, fmt.Errorf("agent: config: %s: %s = %q: %w", v.from, k, v.value, err)
			}
		}
	}
	return c, nil
}

// configValue is one key's raw value and where it was read (FILE:LINE or
// the environment variable), for error messages.
type configValue struct{ value, from string }

func readKV(path string, kv map[string]configValue) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("agent: config: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return fmt.Errorf("agent: config: %s:%d: want key = value", path, n)
		}
		kv[strings.TrimSpace(k)] = configValue{strings.Trim(strings.TrimSpace(v), `"`), fmt.Sprintf("%s:%d", path, n)}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("agent: config: %w", err)
	}
	return nil
}

var configKeys = []string{"portal_url", "node", "credential_file", "state_dir", "cache_file", "metrics_addr",
	"proc_root", "passwd_file", "group_file", "log_level", "sample_interval", "sync_interval", "deliver_interval",
	"heartbeat_interval", "usage_spread", "env_timeout", "exempt_users", "exempt_groups", "system_uid_max", "enforce", "grace",
	"kill_after", "overstay_warning", "idle_util_pct", "idle_after", "mem_no_process_mib", "mem_no_process_after",
	"spool_max_age", "spool_max_bytes", "cgroup_root", "lock_cgroup", "dev_dir", "gpu", "sim_gpus", "sim_model", "sim_memory_mib", "sim_script", "sim_clock_ahead", "sim_mig"}

func (c *config) set(k, v string) error {
	strs := map[string]*string{"portal_url": &c.PortalURL, "node": &c.Node, "credential_file": &c.CredentialFile,
		"state_dir": &c.StateDir, "cache_file": &c.CacheFile, "metrics_addr": &c.MetricsAddr, "proc_root": &c.ProcRoot,
		"passwd_file": &c.PasswdFile, "group_file": &c.GroupFile, "cgroup_root": &c.CgroupRoot, "dev_dir": &c.DevDir, "sim_model": &c.Sim.Model, "sim_script": &c.Sim.Script}
	durs := map[string]*time.Duration{"sample_interval": &c.SampleInterval, "sync_interval": &c.SyncInterval,
		"deliver_interval": &c.DeliverInterval, "heartbeat_interval": &c.HeartbeatInterval, "env_timeout": &c.EnvTimeout,
		"grace": &c.Policy.Grace, "kill_after": &c.Policy.KillAfter, "overstay_warning": &c.Policy.OverstayWarning,
		"idle_after": &c.Policy.IdleAfter, "mem_no_process_after": &c.Policy.MemNoProcAfter, "spool_max_age": &c.Spool.MaxAge}
	if p, ok := strs[k]; ok {
		*p = v
		return nil
	}
	if p, ok := durs[k]; ok {
		d, err := time.ParseDuration(v)
		if err == nil && d <= 0 {
			err = errors.New("must be positive")
		}
		*p = d
		return err
	}
	return c.setOther(k, v)
}

func (c *config) setOther(k, v string) error {
	var err error
	switch k {
	case "log_level":
		if c.LogLevel.UnmarshalText([]byte(v)) != nil {
			err = errors.New("want debug, info, warn or error")
		}
	case "exempt_users":
		// Added to the default (root), never replacing it.
		c.Policy.Exempt.Users = append(exempt.Default().Users, list(v)...)
	case "exempt_groups":
		c.Policy.Exempt.Groups = list(v)
	case "system_uid_max":
		c.Policy.Exempt.SystemUIDMax, err = strconv.Atoi(v)
	case "enforce":
		err = c.setEnforce(v)
	case "idle_util_pct":
		c.Policy.IdleUtilPct, err = strconv.ParseFloat(v, 64)
	case "mem_no_process_mib":
		c.Policy.MemNoProcMiB, err = strconv.ParseInt(v, 10, 64)
	case "spool_max_bytes":
		c.Spool.MaxBytes, err = strconv.ParseInt(v, 10, 64)
	case "lock_cgroup":
		c.LockCgroup = v
		if v != "auto" && v != "v1" && v != "v2" {
			err = errors.New("want auto, v1 or v2")
		}
	case "gpu":
		c.GPU = v
		if v != "nvml" && v != "simulated" {
			err = errors.New("want nvml or simulated")
		}
	case "sim_gpus":
		c.Sim.GPUs, err = strconv.Atoi(v)
		if err == nil && (c.Sim.GPUs < 1 || c.Sim.GPUs > 16) {
			err = errors.New("want 1 to 16")
		}
	case "sim_memory_mib":
		c.Sim.MemoryMiB, err = strconv.ParseInt(v, 10, 64)
		if err == nil && c.Sim.MemoryMiB <= 0 {
			err = errors.New("must be positive")
		}
	case "sim_mig":
		c.Sim.MIG, err = simgpu.ParseMIG(v)
		if err == nil && c.GPU != "simulated" {
			err = errors.New("only with gpu = simulated (real GPUs are split with nvidia-smi mig)")
		}
	case "usage_spread": // 0 is allowed here, unlike the intervals
		c.UsageSpread, err = time.ParseDuration(v)
		if err == nil && (c.UsageSpread < 0 || c.UsageSpread >= time.Minute) {
			err = errors.New("want 0s to 59s")
		}
	case "sim_clock_ahead":
		c.Sim.ClockAhead, err = time.ParseDuration(v)
		if err == nil && (c.Sim.ClockAhead < 0 || c.Sim.ClockAhead > time.Minute) {
			err = errors.New("want 0s to 1m")
		}
		if err == nil && c.GPU != "simulated" {
			err = errors.New("only with gpu = simulated (a real node keeps the host's clock)")
		}
	default:
		return errors.New("unknown key")
	}
	return err
}

// setEnforce reads the mode; true and false are the older spellings of
// signal and detect, so existing agent.conf files keep their meaning.
func (c *config) setEnforce(v string) error {
	modes := map[string]string{"off": "off", "detect": "detect", "false": "detect", "signal": "signal", "true": "signal", "lock": "lock"}
	m, ok := modes[strings.ToLower(v)]
	if !ok {
		return errors.New("want off, detect, signal or lock")
	}
	c.Enforce, c.Policy.Enforce = m, m == "signal" || m == "lock"
	return nil
}

func list(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// exemptRules returns the exemption rules (shared by env and detection).
func (c config) exemptRules() exempt.Rules { return c.Policy.Exempt }

func (c config) statusPath() string    { return filepath.Join(c.StateDir, "status.json") }
func (c config) watermarkPath() string { return filepath.Join(c.StateDir, "watermark.json") }
func (c config) detectPath() string    { return filepath.Join(c.StateDir, "violations.json") }
func (c config) minutePath() string    { return filepath.Join(c.StateDir, "minute.json") }
func (c config) spoolDir() string      { return filepath.Join(c.StateDir, "spool") }
