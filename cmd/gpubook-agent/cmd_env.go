package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/agent/exempt"
	"github.com/gpubook/gpubook/agent/loginenv"
	"github.com/gpubook/gpubook/agent/procfs"
)

// hardLimit bounds `env` whatever the config says: a login must never wait
// longer than this for us.
const hardLimit = 900 * time.Millisecond

// cmdEnv prints shell code for eval at login. It always exits 0 with valid
// shell: every failure becomes "no GPUs" plus a hint on stderr.
func cmdEnv(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("env", "Print shell code that sets CUDA_VISIBLE_DEVICES to the GPUs you have booked now.\nUse: eval \"$(gpubook-agent env)\". Reads only the local cache; never the network.", stderr, getenv)
	userFlag := fs.String("user", "", "compute for this user instead of the invoking one (tests, admins)")
	quiet := fs.Bool("quiet", false, "print no hint on stderr (non-interactive shells)")
	if err := parseFlags(fs, args); err != nil {
		if helpOK(err) == nil {
			return nil
		}
		fmt.Fprint(stdout, loginenv.Unavailable("bad flags").Shell()) // the FlagSet told stderr why
		return nil
	}
	r := computeEnvTimed(ctx, *cfgPath, *userFlag, getenv, time.Now())
	fmt.Fprint(stdout, r.Shell())
	if r.Hint != "" && !*quiet {
		fmt.Fprintln(stderr, r.Hint)
	}
	return nil
}

// computeEnvTimed runs computeEnv in a goroutine under the time budget:
// config, passwd and cache reads can all hang on a sick disk or NFS.
func computeEnvTimed(ctx context.Context, cfgPath, userName string, getenv func(string) string, now time.Time) loginenv.Result {
	ch := make(chan loginenv.Result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- loginenv.Unavailable(fmt.Sprint("internal error: ", p))
			}
		}()
		ch <- computeEnv(ctx, cfgPath, userName, getenv, now)
	}()
	budget := hardLimit
	if s := getenv("GPUBOOK_AGENT_ENV_TIMEOUT"); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d > 0 && d < budget {
			budget = d
		}
	}
	t := time.NewTimer(budget)
	defer t.Stop()
	select {
	case r := <-ch:
		return r
	case <-t.C:
		return loginenv.Unavailable("timed out reading the cache")
	}
}

func computeEnv(ctx context.Context, cfgPath, userName string, getenv func(string) string, now time.Time) loginenv.Result {
	cfg, cfgErr := loadConfig(cfgPath, getenv)
	// With a broken file cfg has no passwd file: names come from the name
	// service, each lookup within its time limit.
	res := procfs.New(cfg.ProcRoot, cfg.PasswdFile, cfg.GroupFile)
	name, uid := invokingUser(res, userName)
	if cfgErr != nil {
		// A broken file must not hide the GPUs from root and system
		// accounts (the default exemptions); everyone else fails closed
		// with the bad line named, the only place a login shows it.
		if exempt.Default().Exempt(name, uid, nil) {
			return loginenv.Result{Unchanged: true}
		}
		return loginenv.Unavailable("bad config: " + strings.TrimPrefix(cfgErr.Error(), "agent: config: "))
	}
	if name == "" {
		// A UID with no name: system accounts keep their environment,
		// anyone else sees no GPU (the name is what bookings are for).
		if cfg.exemptRules().Exempt("", uid, nil) {
			return loginenv.Result{Unchanged: true}
		}
		return loginenv.Result{Hint: fmt.Sprintf("gpubook: your UID %d has no user name here (the name service does not know it or did not answer); no GPUs visible — ask your admin", uid)}
	}
	if cfg.exemptRules().Exempt(name, uid, res.UserGroups) {
		return loginenv.Result{Unchanged: true}
	}
	f, err := cache.Read(ctx, cfg.CacheFile, min(cfg.EnvTimeout, hardLimit))
	if err != nil {
		return loginenv.Unavailable(cacheProblem(err))
	}
	return loginenv.Compute(f, name, now, time.Local)
}

// invokingUser is --user if given, else the login of the real UID; name is
// "" when the UID has none (in time). $LOGNAME and $USER are never asked:
// the user sets them, and an unnamed UID must not become whoever they
// say. Names go through res, so that a directory (LDAP, SSSD) that is
// slow costs at most one lookup's time limit, never the login.
func invokingUser(res *procfs.Resolver, flagUser string) (string, int) {
	if flagUser != "" {
		if uid, ok := res.UserID(flagUser); ok {
			return flagUser, uid
		}
		return flagUser, -1
	}
	uid := os.Getuid()
	if name := res.UserName(uid); name != strconv.Itoa(uid) {
		return name, uid
	}
	return "", uid
}

// cacheProblem names a cache failure in a few words for the hint.
func cacheProblem(err error) string {
	switch {
	case errors.Is(err, cache.ErrTimeout):
		return "cache read timed out"
	case isNotExist(err):
		return "no cache yet; is gpubook-agent running?"
	case isPermission(err):
		return "cache not readable"
	}
	return "cache unreadable"
}
