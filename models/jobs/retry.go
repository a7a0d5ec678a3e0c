package jobs

import (
	"errors"
	"time"

	"github.com/gpubook/gpubook/models"
)

// Outcome is what one run of a leased job came to, as far as its next try
// is concerned.
type Outcome int

const (
	Succeeded Outcome = iota
	// LockBusy: the run gave up on a database lock held elsewhere
	// (models.ErrLockBusy); the lock is usually free again within seconds.
	LockBusy
	Failed // any other error, a timeout included
)

// RetryAfterLockBusy is how soon a job that gave up on a held lock is due
// again by default (Config.LockRetry); its replica's next check, at most
// CheckEvery after the run started, runs it.
const RetryAfterLockBusy = 30 * time.Second

// OutcomeOf classifies a run's error.
func OutcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return Succeeded
	case errors.Is(err, models.ErrLockBusy):
		return LockBusy
	default:
		return Failed
	}
}

// NextTry is how long after a run's start the job is due again. After a
// success or an ordinary failure, nine tenths of its interval (replicas
// check at different moments, so a full interval would drift a check
// late each time); after a held lock, lockRetry at most.
func NextTry(o Outcome, every, lockRetry time.Duration) time.Duration {
	due := every - every/10
	if o == LockBusy {
		return min(due, lockRetry)
	}
	return due
}

// CheckEvery is how often each replica looks whether a job registered
// every interval is due: every check at most (PeriodCheck, 1 min), so that
// a lease that ran out, its holder dead or its hold over, is taken over
// within check, whatever the job's interval.
func CheckEvery(every, check time.Duration) time.Duration {
	return min(every, check)
}
