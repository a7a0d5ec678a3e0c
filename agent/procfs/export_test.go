package procfs

import "time"

// SetClock stands a test's clock in for the name-service cache's, so that
// its time to live and DefaultKeepGone can pass without waiting.
func (r *Resolver) SetClock(now func() time.Time) { r.nss.now = now }
