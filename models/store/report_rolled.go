package store

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// A report reads each hour that the roll job has summed from its hourly
// sums (usage_hours.go), and only the rest minute by minute. Of a week in
// progress that is every hour but the last one or two, and the same for
// every view until the job next sums an hour: a replica keeps that part
// (rolledWeeks) and each view reads the minutes since, adding the two.
// Every figure that is rounded is rounded once its parts are added, as
// when one statement read both.

// rolledPart is what the statements below read of the rolled hours of
// one window: the report's parts from its hourly sums.
type rolledPart struct {
	per      []rolledPer  // minutesSQL's per, per (booking, span)
	hours    []rolledHour // per (span, UTC hour)
	unbooked []spanRow    // per (user, span): GPU-minutes (a)
	usedBy   []spanRow    // per booker (uid) and other user (a): GPU-minutes (b)
	unmapped []unixRow    // per Unix name mapped to no user
}

// rolledPer is a row of minutesSQL's per (its columns) from rolled hours.
type rolledPer struct {
	BookingID   int64 `gorm:"column:booking_id"`
	UID         int64 `gorm:"column:uid"`
	I           int64 `gorm:"column:i"`
	Busy        int64 `gorm:"column:busy"`
	WBusy       int64 `gorm:"column:wbusy"`
	WHeld       int64 `gorm:"column:wheld"`
	WNoData     int64 `gorm:"column:wnodata"`
	UtilN       int64 `gorm:"column:util_n"`
	UtilSum     int64 `gorm:"column:util_sum"`
	BusyUtilN   int64 `gorm:"column:busy_util_n"`
	BusyUtilSum int64 `gorm:"column:busy_util_sum"`
}

// rolledHour is the cluster's busy (a) and unbooked (b) unit-minutes of a
// rolled UTC hour (h) in span i.
type rolledHour struct {
	I int   `gorm:"column:i"`
	H int64 `gorm:"column:h"`
	A int64 `gorm:"column:a"`
	B int64 `gorm:"column:b"`
}

// unixRow is one Unix name's GPU-minutes.
type unixRow struct {
	N string `gorm:"column:n"`
	A int64  `gorm:"column:a"`
}

// rolledStatement is one statement of the rolled part, with its arguments.
type rolledStatement struct {
	sql  string
	args map[string]any
	dest any
}

// rolledStatements are the statements that read the rolled part of all
// (the plan of the report's spans; minutesSQL and unbookedSQL) and of days
// (the plan of its days; usedBySQL and unmappedSQL) into p. The spans
// they are given are cut at the end of the last rolled hour read: the
// hours read lie before it, so each falls in the same span as before,
// and the statements stay the same, word for word, while the view's now
// moves on — they are the key the part is kept under.
func (q reportSQL) rolledStatements(spans []models.Span, all, days *models.UsageReadPlan, p *rolledPart) []rolledStatement {
	if all == nil || len(all.Hours) == 0 {
		return nil
	}
	cut := models.HourStart(all.Hours[len(all.Hours)-1].To)
	spans = append([]models.Span(nil), spans...)
	for i := range spans {
		spans[i] = spans[i].Clip(cut)
	}
	q.plan = all
	out := []rolledStatement{
		q.rolledStatement(reportSQL.rolledPerSQL, spans, &p.per),
		q.rolledStatement(reportSQL.rolledHoursSQL, spans, &p.hours),
		q.rolledStatement(reportSQL.rolledUnbookedSQL, spans, &p.unbooked),
	}
	if days != nil && len(days.Hours) > 0 {
		q.plan = days
		out = append(out, q.rolledStatement(reportSQL.rolledUsedBySQL, spans, &p.usedBy),
			q.rolledStatement(reportSQL.rolledUnmappedSQL, spans, &p.unmapped))
	}
	return out
}

func (q reportSQL) rolledStatement(sql func(reportSQL, map[string]any, []models.Span) string, spans []models.Span, dest any) rolledStatement {
	args := map[string]any{}
	return rolledStatement{sql: sql(q, args, spans), args: args, dest: dest}
}

// rolledPerSQL is minutesSQL's per of the rolled hours: their bookings'
// sums per (booking, span), with the booker. Rows with nothing counted, no utilisation and
// no unbooked use are left out, as the minutes' filter leaves them out.
func (q reportSQL) rolledPerSQL(args map[string]any, spans []models.Span) string {
	return "SELECT * FROM (SELECT h.booking_id AS booking_id, b.user_id AS uid, " + q.spanOfSeconds("h.unix_hour * 3600", spans, args) + " AS i," +
		" SUM(h.busy) AS busy, SUM(h.busy * " + units("g") + ") AS wbusy, SUM(h.held * " + units("g") + ") AS wheld," +
		" SUM(h.nodata * " + units("g") + ") AS wnodata, SUM(h.util_n) AS util_n, SUM(h.util_sum) AS util_sum," +
		" SUM(h.busy_util_n) AS busy_util_n, SUM(h.busy_util_sum) AS busy_util_sum" + q.rolledHoursFrom(args, "JOIN bookings b ON b.id = h.booking_id ") +
		" AND h.booking_id <> 0 GROUP BY h.booking_id, b.user_id, 3) x WHERE x.i IS NOT NULL"
}

// rolledHoursSQL is, per rolled UTC hour, the cluster's busy unit-minutes
// (a) and its unbooked ones (b), each GPU-minute once however many users
// shared it: minutesSQL's kind 'c' and 'n' rows of those hours.
func (q reportSQL) rolledHoursSQL(args map[string]any, spans []models.Span) string {
	return "SELECT * FROM (SELECT " + q.spanOfSeconds("h.unix_hour * 3600", spans, args) + " AS i, h.unix_hour AS h," +
		" SUM(h.anyone * " + units("g") + ") AS a, SUM(h.unbooked * " + units("g") + ") AS b" + q.rolledHoursFrom(args, "") +
		" GROUP BY h.unix_hour) x WHERE x.i IS NOT NULL"
}

func (q reportSQL) rolledHoursFrom(args map[string]any, join string) string {
	return " FROM usage_hours h JOIN gpus g ON g.id = h.gpu_id " + join + "WHERE " + q.hourRanges("h.unix_hour", args) +
		" AND (h.counted > 0 OR h.util_n > 0 OR h.unbooked > 0)"
}

// rolledUnbookedSQL is unbookedSQL of the rolled hours.
func (q reportSQL) rolledUnbookedSQL(args map[string]any, spans []models.Span) string {
	return "SELECT * FROM (SELECT r.user_id AS uid, " + q.spanOfSeconds("r.unix_hour * 3600", spans, args) + " AS i, " +
		weighed("SUM(r.unbooked * "+units("g")+")") + " AS a, 0 AS b FROM user_usage_hours r JOIN gpus g ON g.id = r.gpu_id WHERE " +
		q.hourRanges("r.unix_hour", args) + " AND r.unbooked > 0 GROUP BY r.user_id, 2) x WHERE x.i IS NOT NULL"
}

// rolledUsedBySQL is usedBySQL of the rolled hours (of the days).
func (q reportSQL) rolledUsedBySQL(args map[string]any, _ []models.Span) string {
	return "SELECT b.user_id AS uid, 0 AS i, r.user_id AS a, " + weighed("SUM(r.unbooked * "+units("g")+")") + " AS b" +
		" FROM user_usage_hours r JOIN bookings b ON b.id = r.booking_id JOIN gpus g ON g.id = r.gpu_id" +
		" WHERE " + q.hourRanges("r.unix_hour", args) + " AND r.unbooked > 0 GROUP BY b.user_id, r.user_id"
}

// rolledUnmappedSQL is unmappedSQL of the rolled hours (of the days).
func (q reportSQL) rolledUnmappedSQL(args map[string]any, _ []models.Span) string {
	return "SELECT r.user_name AS n, " + weighed("SUM(r.minutes * "+units("g")+")") + " AS a FROM unix_usage_hours r" +
		" JOIN gpus g ON g.id = r.gpu_id WHERE " + q.hourRanges("r.unix_hour", args) + " GROUP BY r.user_name"
}

// keptBookings is minutesSQL's kb: per booking and week of the rolled
// part (0 for the report's days, else the trend span, as lowIntensitySQL
// groups them) its busy minutes and the utilisation sums of those, which
// the no-show and low-intensity rules add to the minutes'. The rows are
// handed in as arrays (PostgreSQL) or JSON (SQLite).
func (q reportSQL) keptBookings(args map[string]any) string {
	names := "booking_id, g, busy, n, s"
	if q.rolled == nil || len(q.rolled.per) == 0 {
		return "SELECT CAST(0 AS BIGINT) AS booking_id, CAST(0 AS BIGINT) AS g, CAST(0 AS BIGINT) AS busy," +
			" CAST(0 AS BIGINT) AS n, CAST(0 AS BIGINT) AS s WHERE 1 = 0"
	}
	type key struct{ booking, g int64 }
	at := map[key]int{}
	var rows [][5]int64
	for _, r := range q.rolled.per {
		k := key{r.BookingID, r.I}
		if r.I < models.ReportDays {
			k.g = 0
		}
		j, ok := at[k]
		if !ok {
			j = len(rows)
			at[k] = j
			rows = append(rows, [5]int64{k.booking, k.g})
		}
		rows[j][2] += r.Busy
		rows[j][3] += r.BusyUtilN
		rows[j][4] += r.BusyUtilSum
	}
	if q.pg {
		arrays := make([]string, 5)
		col := make([]int64, len(rows))
		for c := range arrays {
			for k, r := range rows {
				col[k] = r[c]
			}
			n := "kb" + strconv.Itoa(c)
			args[n] = pgIDArray(col)
			arrays[c] = "CAST(@" + n + " AS BIGINT[])"
		}
		return "SELECT " + names + " FROM unnest(" + strings.Join(arrays, ", ") + ") AS r(" + names + ")"
	}
	b := make([]byte, 0, 32*len(rows))
	b = append(b, '[')
	for k, r := range rows {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for c, v := range r {
			if c > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, ']')
	}
	args["kb"] = string(append(b, ']'))
	fields := strings.Split(names, ", ")
	for c, f := range fields {
		fields[c] = fmt.Sprintf("json_extract(r.value, '$[%d]') AS %s", c, f)
	}
	return "SELECT " + strings.Join(fields, ", ") + " FROM json_each(@kb) r"
}

// rolledWeeks keeps the rolled parts this replica read last, under their
// key: the statements with their arguments, the generation of the rolled
// hours (migration 00033) and the inventory's stamp (the GPUs' weights),
// each read in the report's snapshot. The statements read nothing else
// that changes: a booking's user is never changed.
type rolledWeeks struct {
	mu   sync.Mutex
	kept []rolledKept // the most recently used last
	// reads counts the parts read from the rolled hours rather than
	// found kept (the tests of WarmUsagePages read it).
	reads int64
}

type rolledKept struct {
	key  string
	lo   int64 // the window's start: a part of the same window replaces it
	part *rolledPart
}

// rolledKeep is how many rolled parts a replica keeps: the week in
// progress and the week that ended before it. A part is about 100 bytes
// per (booking, span): 1 MB at 512 GPUs, some 20 MB at 10,000. A part
// read again (a roll moved the generation) replaces the window's former
// one, which no view finds any more, rather than the other week's.
const rolledKeep = 2

// read returns the rolled part of the report's window in g's snapshot:
// kept, or read and kept.
func (k *rolledWeeks) read(g *gorm.DB, q reportSQL, spans []models.Span, all, days *models.UsageReadPlan) (*rolledPart, error) {
	p := &rolledPart{}
	stmts := q.rolledStatements(spans, all, days, p)
	if len(stmts) == 0 {
		return p, nil
	}
	var stamp struct {
		Generation int64 `gorm:"column:generation"`
		Inventory  int64 `gorm:"column:inventory"`
	}
	err := g.Raw("SELECT COALESCE((SELECT generation FROM usage_rollup_state WHERE id = 1), 0) AS generation," +
		" COALESCE((SELECT version FROM inventory_stamp WHERE id = 1), 0) AS inventory").Scan(&stamp).Error
	if err != nil {
		return nil, fmt.Errorf("store: report rolled stamp: %w", err)
	}
	key := rolledKey(stamp.Generation, stamp.Inventory, stmts)
	if kept := k.get(key); kept != nil {
		return kept, nil
	}
	for _, s := range stmts {
		if err := g.Raw(s.sql, s.args).Scan(s.dest).Error; err != nil {
			return nil, fmt.Errorf("store: report rolled hours: %w", err)
		}
	}
	lo, _ := bounds(spans)
	k.put(key, lo.Unix(), p)
	return p, nil
}

// rolledKey writes the key of a rolled part.
func rolledKey(generation, inventory int64, stmts []rolledStatement) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d", generation, inventory)
	for _, s := range stmts {
		b.WriteString("\n" + s.sql)
		names := make([]string, 0, len(s.args))
		for n := range s.args {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			v := s.args[n]
			if t, ok := v.(time.Time); ok {
				v = t.UnixNano()
			}
			fmt.Fprintf(&b, " %s=%v", n, v)
		}
	}
	return b.String()
}

func (k *rolledWeeks) get(key string) *rolledPart {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, e := range k.kept {
		if e.key == key {
			k.kept = append(append(k.kept[:i:i], k.kept[i+1:]...), e)
			return e.part
		}
	}
	return nil
}

func (k *rolledWeeks) put(key string, lo int64, p *rolledPart) {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reads++
	for i, e := range k.kept {
		if e.lo == lo {
			k.kept = append(k.kept[:i:i], k.kept[i+1:]...)
			break
		}
	}
	if len(k.kept) >= rolledKeep {
		k.kept = append(k.kept[:0:0], k.kept[len(k.kept)-rolledKeep+1:]...)
	}
	k.kept = append(k.kept, rolledKept{key: key, lo: lo, part: p})
}

// addRows adds extra to rows, summing a and b of the rows of one (uid, i, and
// a too when byA): a figure's minutes part and its rolled part.
func addRows(rows, extra []spanRow, byA bool) []spanRow {
	if len(extra) == 0 {
		return rows
	}
	type key struct{ uid, i, a int64 }
	at := map[key]int{}
	out := make([]spanRow, 0, len(rows)+len(extra))
	for _, r := range append(append([]spanRow(nil), rows...), extra...) {
		k := key{r.UID, int64(r.I), 0}
		if byA {
			k.a = r.A
		}
		if j, ok := at[k]; ok {
			if !byA {
				out[j].A += r.A
			}
			out[j].B += r.B
			continue
		}
		at[k] = len(out)
		out = append(out, r)
	}
	return out
}
