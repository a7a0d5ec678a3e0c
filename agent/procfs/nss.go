package procfs

import (
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
const (
	DefaultLookupTimeout = 200 * time.Millisecond
	DefaultPositiveTTL   = 60 * time.Second
	DefaultNegativeTTL   = 5 * time.Second
)

// nss answers lookups through Lookups with a cache and a time limit per
// lookup. A lookup that runs past the limit is given up on by the caller
// (who gets "unknown") but goes on in its goroutine and fills the cache
// when it ends; until then no second lookup of the same key starts, so a
// hung directory costs one goroutine per key, not one per sample.
type nss struct {
	look                    Lookups
	timeout, posTTL, negTTL time.Duration
	now                     func() time.Time

	mu       sync.Mutex
	cache    map[string]nssEntry
	inflight map[string]chan struct{}
}

type nssEntry struct {
	val     any // *user.User for users, []string for group names
	ok      bool
	expires time.Time
}

func newNSS(look Lookups) *nss {
	return &nss{look: look, timeout: DefaultLookupTimeout, posTTL: DefaultPositiveTTL, negTTL: DefaultNegativeTTL,
		now: time.Now, cache: map[string]nssEntry{}, inflight: map[string]chan struct{}{}}
}

// get returns the cached answer for key, or runs fn for it within the time
// limit; ok is false for "not known", "failed" and "too slow" alike.
func (n *nss) get(key string, fn func() (any, error)) (any, bool) {
	n.mu.Lock()
	if e, hit := n.cache[key]; hit && n.now().Before(e.expires) {
		n.mu.Unlock()
		return e.val, e.ok
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
	case <-t.C:
		return nil, false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	e := n.cache[key]
	return e.val, e.ok
}

// run does one lookup and stores its answer, positive or negative.
func (n *nss) run(key string, fn func() (any, error), done chan struct{}) {
	val, err := fn()
	n.mu.Lock()
	e := nssEntry{val: val, ok: err == nil, expires: n.now().Add(n.posTTL)}
	if err != nil {
		e = nssEntry{expires: n.now().Add(n.negTTL)}
	}
	n.cache[key] = e
	delete(n.inflight, key)
	n.mu.Unlock()
	close(done)
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
