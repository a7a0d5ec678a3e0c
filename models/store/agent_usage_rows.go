package store

import (
	"database/sql/driver"
	"fmt"
	"maps"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
)

// The rows of a usage batch travel to the database as one JSON text per
// chunk and table, which the database unpacks itself (json_each in SQLite,
// json_array_elements in PostgreSQL). Bound one by one, each value of each
// row costs the Go heap a boxed copy, a database/sql argument and the
// driver's conversion — about 40 times the bytes the agent sent for it;
// the JSON text of a chunk costs about its own size, once, and is reused
// for the next chunk.

// Columns of the two tables, in the order of each row's JSON array.
const (
	usageCols     = "gpu_id, minute, util_avg_pct, util_max_pct, mem_used_mib, mem_total_mib, samples, booking_id, booker_mem_mib, top_mem_mib, unix_minute"
	userUsageCols = "gpu_id, minute, user_name, user_id, uid, memory_mib, processes, busy, booked, container"
)

// PostgreSQL types of the same columns, to cast the JSON text to.
var (
	usagePGTypes     = []string{"bigint", "timestamptz", "double precision", "double precision", "bigint", "bigint", "integer", "bigint", "bigint", "bigint", "bigint"}
	userUsagePGTypes = []string{"bigint", "timestamptz", "text", "bigint", "integer", "bigint", "integer", "boolean", "boolean", "text"}
)

// insertFromJSON is the INSERT of one chunk of table's rows, bound as one
// JSON array of arrays, that does nothing on a conflict.
func insertFromJSON(pg bool, table, cols string, pgTypes []string) string {
	return upsertFromJSON(pg, table, cols, pgTypes, "ON CONFLICT DO NOTHING")
}

// upsertFromJSON is insertFromJSON with its own ON CONFLICT clause.
func upsertFromJSON(pg bool, table, cols string, pgTypes []string, onConflict string) string {
	sel := ""
	for i, t := range pgTypes {
		if i > 0 {
			sel += ", "
		}
		if pg {
			sel += fmt.Sprintf("(e->>%d)::%s", i, t)
		} else {
			sel += fmt.Sprintf("value->>%d", i)
		}
	}
	if pg {
		return "INSERT INTO " + table + " (" + cols + ") SELECT " + sel + " FROM json_array_elements(?::json) AS e " + onConflict
	}
	// "WHERE true" keeps SQLite from reading ON CONFLICT as a join's ON.
	return "INSERT INTO " + table + " (" + cols + ") SELECT " + sel + " FROM json_each(?) WHERE true " + onConflict
}

var (
	insertUsageSQL = map[bool]string{
		false: insertFromJSON(false, "gpu_usage_minutes", usageCols, usagePGTypes),
		true:  insertFromJSON(true, "gpu_usage_minutes", usageCols, usagePGTypes),
	}
	insertUserUsageSQL = map[bool]string{
		false: insertFromJSON(false, "gpu_user_usage_minutes", userUsageCols, userUsagePGTypes),
		true:  insertFromJSON(true, "gpu_user_usage_minutes", userUsageCols, userUsagePGTypes),
	}
)

// sqliteTime is how the store's SQLite connections write times
// (sqliteParams: _time_format=sqlite); PostgreSQL reads it as well.
const sqliteTime = "2006-01-02 15:04:05.999999999-07:00"

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

// usageWriter gathers records into chunks and stores each chunk with one
// INSERT per table, stamping the rows (models.StampMinute) once the
// chunk's unix names are resolved. Every buffer is reused from chunk to
// chunk, so a batch costs the heap about one chunk, whatever its size.
type usageWriter struct {
	tx      *gorm.DB
	pg      bool
	ids     map[string]int64
	holders []models.UsageHolder

	recs    []pendingMinute
	users   []wire.UserUsage
	names   []string
	userIDs map[string]int64 // unix names resolved so far in the batch (0: no gpubook user)
	stamped []models.StampedUser
	buf     []byte

	rows                    int   // records stored or found stored
	inserted, usersInserted int64 // rows the INSERTs added
}

func newUsageWriter(tx *gorm.DB, ids map[string]int64, holders []models.UsageHolder) *usageWriter {
	return &usageWriter{tx: tx, pg: tx.Dialector.Name() == Postgres, ids: ids, holders: holders, userIDs: map[string]int64{}}
}

// add gathers one record (copied: the stream reuses it) and stores the
// chunk once it is full.
func (w *usageWriter) add(r *wire.UsageRecord) error {
	p := pendingMinute{gpuID: w.ids[r.GPUUUID], minute: utc(r.Minute), memUsed: r.MemUsedMiB, memTotal: r.MemTotalMiB,
		samples: r.Samples, lo: len(w.users)}
	if r.UtilAvgPct != nil && r.UtilMaxPct != nil {
		p.avg, p.max, p.util = *r.UtilAvgPct, *r.UtilMaxPct, true
	}
	w.users = append(w.users, r.Users...)
	p.hi = len(w.users)
	w.recs = append(w.recs, p)
	if len(w.recs) >= insertChunk || len(w.users) >= insertChunk {
		return w.flush()
	}
	return nil
}

// flush stores the gathered chunk.
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
		found, err := unixNamesIn(w.tx, w.names)
		if err != nil {
			return err
		}
		maps.Copy(w.userIDs, found)
	}
	ids := w.userIDs
	w.buf = append(w.buf[:0], '[')
	for i := range w.recs {
		w.appendMinute(i, ids)
	}
	w.buf = append(w.buf, ']')
	ins := w.tx.Exec(insertUsageSQL[w.pg], w.jsonArg())
	if ins.Error != nil {
		return ins.Error
	}
	w.rows, w.inserted = w.rows+len(w.recs), w.inserted+ins.RowsAffected
	if len(w.users) > 0 {
		w.buf = append(w.buf[:0], '[')
		for i := range w.recs {
			w.appendUsers(i, ids)
		}
		w.buf = append(w.buf, ']')
		uins := w.tx.Exec(insertUserUsageSQL[w.pg], w.jsonArg())
		if uins.Error != nil {
			return uins.Error
		}
		w.usersInserted += uins.RowsAffected
	}
	w.recs, w.users = w.recs[:0], w.users[:0]
	return nil
}

// jsonArg binds the chunk's JSON text without copying it: both drivers
// copy an argument into their own buffers while they run the statement,
// and buf is not touched until then. SQLite must get text (it would read
// a blob as its binary JSONB); pgx encodes []byte for a json parameter as
// it is, but a string through one more copy.
func (w *usageWriter) jsonArg() any { return jsonArg(w.pg, w.buf) }

// jsonArg is the argument that binds buf, JSON text, for the dialect.
func jsonArg(pg bool, buf []byte) any {
	if pg {
		return jsonBytes(buf)
	}
	return unsafe.String(unsafe.SliceData(buf), len(buf))
}

// jsonBytes passes JSON text as []byte to the driver; GORM would take a
// plain []byte argument for a list (IN (?, ?, …)).
type jsonBytes []byte

func (j jsonBytes) Value() (driver.Value, error) { return []byte(j), nil }

// appendMinute stamps record i (keeping its users' stamps in w.stamped
// for appendUsers) and appends its row.
func (w *usageWriter) appendMinute(i int, ids map[string]int64) {
	p := w.recs[i]
	if i > 0 {
		w.buf = append(w.buf, ',')
	}
	b := append(w.buf, '[')
	b = strconv.AppendInt(b, p.gpuID, 10)
	b = appendJSONTime(b, p.minute)
	if p.util {
		b = strconv.AppendFloat(append(b, ','), p.avg, 'g', -1, 64)
		b = strconv.AppendFloat(append(b, ','), p.max, 'g', -1, 64)
	} else {
		b = append(b, ",null,null"...)
	}
	st := w.stamp(p, ids)
	b = appendInts(b, p.memUsed, p.memTotal, int64(p.samples))
	if st.BookingID != 0 {
		b = appendInts(b, st.BookingID)
	} else {
		b = append(b, ",null"...)
	}
	b = appendInts(b, st.BookerMemMiB, st.TopMemMiB, p.minute.Unix()/60)
	w.buf = append(b, ']')
}

// stamp stamps record p from the holders and its users.
func (w *usageWriter) stamp(p pendingMinute, ids map[string]int64) models.MinuteStamp {
	w.stamped = w.stamped[:0]
	for _, u := range w.users[p.lo:p.hi] {
		w.stamped = append(w.stamped, models.StampedUser{UserID: ids[u.User], MemoryMiB: u.MemoryMiB})
	}
	return models.StampMinute(w.holders, p.gpuID, p.minute, w.stamped)
}

// appendUsers appends the user rows of record i.
func (w *usageWriter) appendUsers(i int, ids map[string]int64) {
	p := w.recs[i]
	w.stamp(p, ids) // the booked flags
	b := w.buf
	for j, u := range w.users[p.lo:p.hi] {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, p.gpuID, 10)
		b = appendJSONTime(b, p.minute)
		b = appendJSONString(append(b, ','), clip(u.User, 256))
		if id := w.stamped[j].UserID; id != 0 {
			b = appendInts(b, id)
		} else {
			b = append(b, ",null"...)
		}
		b = appendInts(b, int64(u.UID), u.MemoryMiB, int64(u.Processes), boolInt(u.Busy), boolInt(w.stamped[j].Booked))
		b = appendJSONString(append(b, ','), u.Container)
		b = append(b, ']')
	}
	w.buf = b
}

func boolInt(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

// appendInts appends ",n" for each n.
func appendInts(b []byte, ns ...int64) []byte {
	for _, n := range ns {
		b = strconv.AppendInt(append(b, ','), n, 10)
	}
	return b
}

// appendJSONTime appends ",\"TIME\"" in the store's SQLite time format.
func appendJSONTime(b []byte, t time.Time) []byte {
	b = append(b, ',', '"')
	b = t.UTC().AppendFormat(b, sqliteTime)
	return append(b, '"')
}

// appendJSONString appends s as a JSON string. The agent's text is valid
// UTF-8 without control characters (wire's rules), but the encoding does
// not depend on it.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
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
	return append(b, '"')
}
