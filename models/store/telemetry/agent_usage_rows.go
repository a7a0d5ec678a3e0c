package telemetry

import (
	"maps"
	"time"
	"unicode/utf8"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/wire"
)

// The rows of a usage batch go to the database through a rowLoader
// (agent_rows.go): a piece of about 32 kB at a time, never as bound values.

// Columns of the two tables, in the order each row is written.
const (
	usageCols     = "gpu_id, minute, util_avg_pct, util_max_pct, mem_used_mib, mem_total_mib, samples, booking_id, booker_mem_mib, top_mem_mib, unix_minute"
	userUsageCols = "gpu_id, minute, user_name, user_id, uid, memory_mib, processes, busy, booked, container"
)

// PostgreSQL types of the same columns.
var (
	usagePGTypes     = []string{"bigint", "timestamptz", "double precision", "double precision", "bigint", "bigint", "integer", "bigint", "bigint", "bigint", "bigint"}
	userUsagePGTypes = []string{"bigint", "timestamptz", "text", "bigint", "integer", "bigint", "integer", "boolean", "boolean", "text"}
)

// The two tables; a minute or user row stored before is left as it is.
var (
	usageTable     = newRowTable("gpu_usage_minutes", usageCols, usagePGTypes, "ON CONFLICT DO NOTHING")
	userUsageTable = newRowTable("gpu_user_usage_minutes", userUsageCols, userUsagePGTypes, "ON CONFLICT DO NOTHING")
)

// sqliteTime is how the store's SQLite connections write times
// (sqliteParams: _time_format=sqlite); PostgreSQL reads it as well.
const sqliteTime = "2006-01-02 15:04:05.999999999-07:00"

// usageChunk is how many records (or users) the writer gathers before it
// resolves their unix names and writes them.
const usageChunk = 256

// pendingMinute is a record of the chunk being gathered: its values, and
// where its users are in usageWriter.users.
type pendingMinute struct {
	gpuID             int64
	minute            time.Time
	avg, max          float64
	util              bool
	memUsed, memTotal int64
	samples           int
	lo, hi            int
}

// usageWriter gathers records into chunks and writes each chunk's rows
// to the loader, stamping them (models.StampMinute) once the chunk's unix
// names are resolved. Every buffer is made once for the batch and reused
// from chunk to chunk, so a batch costs the heap about one chunk and one
// piece of the loader, whatever its size.
type usageWriter struct {
	l       *rowLoader
	ids     map[string]int64
	holders []models.UsageHolder

	recs    []pendingMinute
	users   []wire.UserUsage
	names   []string
	userIDs map[string]int64 // unix names resolved so far in the batch (0: no gpubook user)
	stamped []models.StampedUser

	rows int // records stored or found stored
}

// newUsageWriter makes the writer of a batch of records records and users
// user rows (its chunk's buffers are no larger than they need).
func newUsageWriter(l *rowLoader, ids map[string]int64, holders []models.UsageHolder, records, users int) *usageWriter {
	return &usageWriter{l: l, ids: ids, holders: holders, userIDs: map[string]int64{},
		recs:    make([]pendingMinute, 0, min(records, usageChunk)),
		users:   make([]wire.UserUsage, 0, min(users, usageChunk+wire.MaxUsersPerRecord)),
		stamped: make([]models.StampedUser, 0, min(users, wire.MaxUsersPerRecord))}
}

// add gathers one record (copied: the stream reuses it) and writes the
// chunk once it is full.
func (w *usageWriter) add(r *wire.UsageRecord) error {
	p := pendingMinute{gpuID: w.ids[r.GPUUUID], minute: store.UTC(r.Minute), memUsed: r.MemUsedMiB, memTotal: r.MemTotalMiB,
		samples: r.Samples, lo: len(w.users)}
	if r.UtilAvgPct != nil && r.UtilMaxPct != nil {
		p.avg, p.max, p.util = *r.UtilAvgPct, *r.UtilMaxPct, true
	}
	w.users = append(w.users, r.Users...)
	p.hi = len(w.users)
	w.recs = append(w.recs, p)
	if len(w.recs) >= usageChunk || len(w.users) >= usageChunk {
		return w.flush()
	}
	return nil
}

// flush writes the gathered chunk.
func (w *usageWriter) flush() error {
	if len(w.recs) == 0 {
		return nil
	}
	// Names are looked up once per batch, not per chunk: the chunks of a
	// backlog name the same few users again and again.
	w.names = w.names[:0]
	for _, u := range w.users {
		if _, known := w.userIDs[u.User]; !known {
			w.userIDs[u.User] = 0
			w.names = append(w.names, u.User)
		}
	}
	if len(w.names) > 0 {
		found, err := store.UnixNamesTx(w.l.tx, w.names)
		if err != nil {
			return err
		}
		maps.Copy(w.userIDs, found)
	}
	w.l.table(usageTable)
	for i := range w.recs {
		if err := w.writeMinute(i); err != nil {
			return err
		}
	}
	if len(w.users) > 0 {
		w.l.table(userUsageTable)
		for i := range w.recs {
			if err := w.writeUsers(i); err != nil {
				return err
			}
		}
	}
	w.rows += len(w.recs)
	w.recs, w.users = w.recs[:0], w.users[:0]
	return nil
}

// finish writes the last chunk and says how many minute and user rows
// the batch added.
func (w *usageWriter) finish() (inserted, usersInserted int64, err error) {
	if err := w.flush(); err != nil {
		return 0, 0, err
	}
	if inserted, err = w.l.done(usageTable); err != nil {
		return 0, 0, err
	}
	usersInserted, err = w.l.done(userUsageTable)
	return inserted, usersInserted, err
}

// writeMinute stamps record i (keeping its users' stamps in w.stamped
// for writeUsers) and writes its row.
func (w *usageWriter) writeMinute(i int) error {
	p, l := w.recs[i], w.l
	st := w.stamp(p)
	l.Int(p.gpuID)
	l.Time(p.minute)
	if p.util {
		l.Float(p.avg)
		l.Float(p.max)
	} else {
		l.Null()
		l.Null()
	}
	l.Int(p.memUsed)
	l.Int(p.memTotal)
	l.Int(int64(p.samples))
	l.IntOrNull(st.BookingID)
	l.Int(st.BookerMemMiB)
	l.Int(st.TopMemMiB)
	l.Int(p.minute.Unix() / 60)
	return l.end()
}

// stamp stamps record p from the holders and its users.
func (w *usageWriter) stamp(p pendingMinute) models.MinuteStamp {
	w.stamped = w.stamped[:0]
	for _, u := range w.users[p.lo:p.hi] {
		w.stamped = append(w.stamped, models.StampedUser{UserID: w.userIDs[u.User], MemoryMiB: u.MemoryMiB})
	}
	return models.StampMinute(w.holders, p.gpuID, p.minute, w.stamped)
}

// writeUsers writes the user rows of record i.
func (w *usageWriter) writeUsers(i int) error {
	p, l := w.recs[i], w.l
	w.stamp(p) // the booked flags
	for j, u := range w.users[p.lo:p.hi] {
		l.Int(p.gpuID)
		l.Time(p.minute)
		l.Str(store.Clip(u.User, 256))
		l.IntOrNull(w.stamped[j].UserID)
		l.Int(int64(u.UID))
		l.Int(u.MemoryMiB)
		l.Int(int64(u.Processes))
		l.Bool(u.Busy)
		l.Bool(w.stamped[j].Booked)
		l.Str(u.Container)
		if err := l.end(); err != nil {
			return err
		}
	}
	return nil
}

// appendJSONTime appends t as a JSON string in the store's SQLite time
// format.
func appendJSONTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, sqliteTime)
	return append(b, '"')
}

// appendJSONString appends s as a JSON string. The agent's text is valid
// UTF-8 without control characters (wire's rules), but the encoding does
// not depend on it.
func appendJSONString(b []byte, s string) []byte {
	return append(appendJSONChars(append(b, '"'), s), '"')
}

// appendJSONChars appends s escaped for a JSON string, without the quotes.
func appendJSONChars(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
			i++
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			i++
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+n]...)
			}
			i += n
		}
	}
	return b
}
