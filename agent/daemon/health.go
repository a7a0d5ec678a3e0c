package daemon

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// maxSampleErrorLen bounds the sample error a heartbeat carries (the
// portal refuses a longer one, and with it the whole heartbeat).
const maxSampleErrorLen = 1024

// noteSampleLocked records whether the latest sample failed, and since
// when samples have been failing. It reports a change (sampling began or
// stopped failing), which the portal should hear at once rather than at
// the next heartbeat: the node page must not call a node that cannot
// measure healthy for a whole heartbeat interval. d.mu is held.
func (d *Daemon) noteSampleLocked(err error, at time.Time) bool {
	d.sampleErr = errString(err)
	was := !d.sampleFailing.IsZero()
	switch {
	case err != nil && !was:
		d.sampleFailing = at.UTC()
	case err == nil && was:
		d.sampleFailing = time.Time{}
	}
	return (err != nil) != was
}

// wakeHeartbeat asks the portal loop for a heartbeat now; one already
// asked for and not yet sent is enough.
func (d *Daemon) wakeHeartbeat() {
	select {
	case d.beatNow <- struct{}{}:
	default:
	}
}

// heartbeatText makes s acceptable to the portal's heartbeat validation:
// control characters become spaces, invalid UTF-8 is replaced, and the
// text is cut to at most n bytes on a character boundary.
func heartbeatText(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
