package procfs

import (
	"errors"
	"os/user"
	"strconv"
	"sync"
	"time"
)

// Lookups are the name-service calls the Resolver makes when no passwd file
// is configured. The defaults are os/user's, which with cgo go through the
// C library and so through nsswitch.conf: users and groups kept in LDAP,
// FreeIPA, AD or SSSD resolve like local ones. Tests inject slow ones.
type Lookups struct {
	UserByID   func(uid string) (*user.User, error)
	UserByName func(name string) (*user.User, error)
	GroupByID  func(gid string) (*user.Group, error)
	GroupIDs   func(u *user.User) ([]string, error)
}

// SystemLookups are os/user's lookups.
func SystemLookups() Lookups {
	return Lookups{UserByID: user.LookupId, UserByName: user.Lookup, GroupByID: user.LookupGroupId,
		GroupIDs: (*user.User).GroupIds}
}

// Name-service limits: a directory that is slow or down must never hold up
// a login or a sample, and a busy node must not ask it about the same
// user every few seconds.
//
// A directory that is down must not rename anyone either: the lock writes
// its rules for the name it is given, so a booked user whose name turned
// into her UID for a minute would lose her GPUs for that minute. A lookup
// that fails or runs past its limit therefore leaves the last name found
// in place, for as long as the directory keeps failing. A directory that
// answers "no such user" is believed only after DefaultKeepGone: one that
// is down often says just that (glibc reports "not found" when a module
// such as extrausers cannot read its files), and a name kept a day after
// an account was really deleted costs nothing (no one logs in as it).
const (
	DefaultLookupTimeout = 200 * time.Millisecond
	DefaultPositiveTTL   = 60 * time.Second
	DefaultNegativeTTL   = 5 * time.Second
	DefaultKeepGone      = 24 * time.Hour
)

// nss answers lookups through Lookups with a cache and a time limit per
// lookup. A lookup that runs past the limit is given up on by the caller
// (who gets the last answer found, or "unknown") but goes on in its
// goroutine and fills the cache when it ends; until then no second lookup
// of the same key starts, so a hung directory costs one goroutine per key,
// not one per sample.
type nss struct {
	look                              Lookups
	timeout, posTTL, negTTL, keepGone time.Duration
	now                               func() time.Time

	mu       sync.Mutex
	cache    map[string]nssEntry
	inflight map[string]chan struct{}
}

// nssEntry is what is known of one key: the last answer found and whether
// the directory has since said it no longer knows it.
type nssEntry struct {
	val     any       // *user.User for users, []string for group names; nil: never found
	gone    time.Time // when the directory first said "no such user" after val (zero: it has not)
	expires time.Time // when to ask again
}

// answer is what callers are told at now: the last answer found, unless
// the directory has said for keepGone that the key is gone.
func (e nssEntry) answer(now time.Time, keepGone time.Duration) (any, bool) {
	if e.val == nil || (!e.gone.IsZero() && now.Sub(e.gone) >= keepGone) {
		return nil, false
	}
	return e.val, true
}

func newNSS(look Lookups) *nss {
	return &nss{look: look, timeout: DefaultLookupTimeout, posTTL: DefaultPositiveTTL, negTTL: DefaultNegativeTTL,
		keepGone: DefaultKeepGone, now: time.Now, cache: map[string]nssEntry{}, inflight: map[string]chan struct{}{}}
}

// get returns the cached answer for key, or runs fn for it within the time
// limit; ok is false for "not known", "failed" and "too slow" alike when
// no answer was ever found.
func (n *nss) get(key string, fn func() (any, error)) (any, bool) {
	n.mu.Lock()
	if e, hit := n.cache[key]; hit && n.now().Before(e.expires) {
		n.mu.Unlock()
		return e.answer(n.now(), n.keepGone)
	}
	done, running := n.inflight[key]
	if !running {
		done = make(chan struct{})
		n.inflight[key] = done
		go n.run(key, fn, done)
	}
	n.mu.Unlock()
	t := time.NewTimer(n.timeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C: // too slow: the last answer found, if any
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cache[key].answer(n.now(), n.keepGone)
}

// run does one lookup and stores its answer. A failure keeps the answer
// found before and only sets when to ask again.
func (n *nss) run(key string, fn func() (any, error), done chan struct{}) {
	val, err := fn()
	n.mu.Lock()
	now := n.now()
	e := n.cache[key]
	switch {
	case err == nil:
		e = nssEntry{val: val, expires: now.Add(n.posTTL)}
	case isUnknown(err) && e.gone.IsZero():
		e.gone, e.expires = now, now.Add(n.negTTL)
	default:
		e.expires = now.Add(n.negTTL)
	}
	n.cache[key] = e
	delete(n.inflight, key)
	n.mu.Unlock()
	close(done)
}

// isUnknown tells the directory's "no such user or group" from a failure
// to ask it (connection refused, timed out, a broken module).
func isUnknown(err error) bool {
	var uid user.UnknownUserIdError
	var name user.UnknownUserError
	var gid user.UnknownGroupIdError
	return errors.As(err, &uid) || errors.As(err, &name) || errors.As(err, &gid)
}

// userByID is the user with uid, if the name service answers in time.
func (n *nss) userByID(uid int) (*user.User, bool) {
	v, ok := n.get("uid:"+strconv.Itoa(uid), func() (any, error) { return n.look.UserByID(strconv.Itoa(uid)) })
	if !ok {
		return nil, false
	}
	return v.(*user.User), true
}

// userByName is the user called name, if the name service answers in time.
func (n *nss) userByName(name string) (*user.User, bool) {
	v, ok := n.get("user:"+name, func() (any, error) { return n.look.UserByName(name) })
	if !ok {
		return nil, false
	}
	return v.(*user.User), true
}

// groups lists the names of name's groups (primary and supplementary);
// the whole walk is one lookup under one time limit.
func (n *nss) groups(name string) []string {
	v, ok := n.get("groups:"+name, func() (any, error) {
		u, err := n.look.UserByName(name)
		if err != nil {
			return nil, err
		}
		ids, err := n.look.GroupIDs(u)
		if err != nil {
			return nil, err
		}
		out := make([]string, 0, len(ids))
		for _, id := range ids {
			if g, err := n.look.GroupByID(id); err == nil {
				out = append(out, g.Name)
			}
		}
		return out, nil
	})
	if !ok {
		return nil
	}
	return v.([]string)
}
