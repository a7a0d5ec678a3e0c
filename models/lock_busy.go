package models

import "errors"

// ErrLockBusy is wrapped by a store call that gave up on a database lock
// another transaction held, instead of queueing for it: a job that queues
// for a lock makes every writer that comes after it queue too (ingest
// among them). The job runner tries such a job again soon rather than at
// its next interval (models/jobs.NextTry).
var ErrLockBusy = errors.New("lock busy")
