package store

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models"
)

// reportSQL writes the report's SQL for one dialect. Every figure is one
// aggregate query over (span × user), below; the fragments here are the
// only places where SQLite and PostgreSQL differ. Times are compared as
// stored (SQLite's UTC text sorts as time), and lengths are taken as whole
// Unix seconds and minutes, so both databases return the same integers.
type reportSQL struct {
	pg    bool
	rules models.ReportRules
	// plan, when set, reads the hours it names from the hourly rollups
	// (usage_hours.go) and only its minute ranges from the minutes; nil
	// reads every minute of the window.
	plan *models.UsageReadPlan
	// noShowsFrom, when set, is the start of the report's whole window
	// while the spans read only part of it (trend weeks read from their
	// snapshots): a booking that began there and ended in a span read is
	// a no-show when neither its minutes read nor its rolled hours had a
	// busy minute.
	noShowsFrom time.Time
	// noShowsTo is the end of the last span skipped: a booking that began
	// after it had every minute read.
	noShowsTo time.Time
	// noShowsSkipped are the spans skipped, whose rolled hours hold the
	// busy minutes of a booking that began in them (noShowBusy).
	noShowsSkipped []models.Span
	// rolled is the part of the plan's hours read from the rolled hours
	// (report_rolled.go); minutesSQL adds it to the minutes' part.
	rolled *rolledPart
}

// minuteRanges is the predicate on col of the minutes to read: the
// window (@lo, @hi) without a plan, else the plan's minute ranges.
func (q reportSQL) minuteRanges(col string, args map[string]any) string {
	if q.plan == nil {
		return col + " >= @lo AND " + col + " < @hi"
	}
	if len(q.plan.Minutes) == 0 {
		return "1 = 0"
	}
	parts := make([]string, len(q.plan.Minutes))
	for i, s := range q.plan.Minutes {
		n := fmt.Sprint(i)
		args["ma"+n], args["mb"+n] = utc(s.Start), utc(s.End)
		parts[i] = "(" + col + " >= @ma" + n + " AND " + col + " < @mb" + n + ")"
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// hourRanges is the predicate on col (a unix_hour) of the rolled hours to
// read; "" when the plan reads none.
func (q reportSQL) hourRanges(col string, args map[string]any) string {
	if q.plan == nil || len(q.plan.Hours) == 0 {
		return ""
	}
	parts := make([]string, len(q.plan.Hours))
	for i, h := range q.plan.Hours {
		n := fmt.Sprint(i)
		args["ha"+n], args["hb"+n] = h.From, h.To
		parts[i] = "(" + col + " >= @ha" + n + " AND " + col + " < @hb" + n + ")"
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// epoch is a time column as whole Unix seconds.
func (q reportSQL) epoch(col string) string {
	if q.pg {
		return "CAST(EXTRACT(EPOCH FROM " + col + ") AS BIGINT)"
	}
	return "CAST(strftime('%s', " + col + ") AS INTEGER)"
}

func (q reportSQL) greatest(a, b string) string {
	if q.pg {
		return "GREATEST(" + a + ", " + b + ")"
	}
	return "max(" + a + ", " + b + ")"
}

func (q reportSQL) least(a, b string) string {
	if q.pg {
		return "LEAST(" + a + ", " + b + ")"
	}
	return "min(" + a + ", " + b + ")"
}

// timeArg is a bound time in a derived table, where PostgreSQL cannot
// infer its type. SQLite must not cast: its text is the time.
func (q reportSQL) timeArg(name string) string {
	if q.pg {
		return "CAST(@" + name + " AS TIMESTAMPTZ)"
	}
	return "@" + name
}

// spans is the derived table k(i, s, e, se, ee) of the report's spans:
// index, bounds as times (for comparing with stored times, using their
// indexes) and as Unix seconds (for clipping lengths).
func (q reportSQL) spans(spans []models.Span, args map[string]any) string {
	parts := make([]string, len(spans))
	for i, s := range spans {
		n := fmt.Sprint(i)
		args["s"+n], args["e"+n] = utc(s.Start), utc(s.End)
		args["se"+n], args["ee"+n] = s.Start.Unix(), s.End.Unix()
		parts[i] = fmt.Sprintf("SELECT %d AS i, %s AS s, %s AS e, CAST(@se%s AS BIGINT) AS se, CAST(@ee%s AS BIGINT) AS ee",
			i, q.timeArg("s"+n), q.timeArg("e"+n), n, n)
	}
	return "(" + strings.Join(parts, " UNION ALL ") + ") k"
}

// The minute predicates below are THE definitions of docs/reports.md, for
// the row m of gpu_usage_minutes. Whose processes ran is a stamp on the
// row (usage_stamps.go): m.booking_id is the confirmed booking that held
// the GPU, m.booker_mem_mib the memory the booker's own processes held on
// it (0: none of theirs ran), m.top_mem_mib the most any one user's held
// (0: the agent sent no per-user rows that held memory). Utilisation is
// the GPU's; on a MIG GPU NVML cannot measure it (NULL), and there the
// booker's processes running is all that can be known.

// busyMinute: booked, the booker's own processes run, and utilisation is
// at or above the threshold. Another user's process never makes it busy.
func (q reportSQL) busyMinute(args map[string]any) string {
	args["busy_util"] = q.rules.BusyUtilPct
	return "(m.booking_id IS NOT NULL AND m.booker_mem_mib > 0 AND (m.util_avg_pct >= @busy_util OR m.util_avg_pct IS NULL))"
}

// heldIdleMinute: booked, the booker's processes hold memory, utilisation
// below the threshold: the card is taken and does nothing.
func (q reportSQL) heldIdleMinute(args map[string]any) string {
	args["busy_util"] = q.rules.BusyUtilPct
	return "(m.booking_id IS NOT NULL AND m.booker_mem_mib > 0 AND m.util_avg_pct < @busy_util)"
}

// noUserDataMinute: booked, the GPU works, but no per-user row says whose
// processes ran (an agent that could not see them): not counted as busy,
// and reported as such instead of guessed.
func (q reportSQL) noUserDataMinute(args map[string]any) string {
	args["busy_util"] = q.rules.BusyUtilPct
	return "(m.booking_id IS NOT NULL AND m.top_mem_mib = 0 AND m.util_avg_pct >= @busy_util)"
}

// clusterBusyMinute: the GPU works, whoever's work it is (the cluster's
// utilisation and the heat map).
func (q reportSQL) clusterBusyMinute(args map[string]any) string {
	args["busy_util"] = q.rules.BusyUtilPct
	return "(m.util_avg_pct >= @busy_util OR (m.util_avg_pct IS NULL AND m.top_mem_mib > 0))"
}

// spanOf is the index of the span that col falls in, as a CASE over the
// spans' bounds ([s, e), or (s, e] for an end time), and window binds @lo
// and @hi, the bounds of all spans together. Scans of many rows (the user
// rows of unbooked use) use these instead of joining the spans, so that
// each row is read once; the GPU-minutes are bucketed first (minutesSQL).
func (q reportSQL) spanOf(col string, spans []models.Span, args map[string]any, endTime bool) string {
	var b strings.Builder
	b.WriteString("CASE")
	for i, s := range spans {
		if !s.Start.Before(s.End) {
			continue // empty: no time falls in it
		}
		n := fmt.Sprint(i)
		args["s"+n], args["e"+n] = utc(s.Start), utc(s.End)
		if endTime {
			fmt.Fprintf(&b, " WHEN %s > @s%s AND %s <= @e%s THEN %d", col, n, col, n, i)
		} else {
			fmt.Fprintf(&b, " WHEN %s >= @s%s AND %s < @e%s THEN %d", col, n, col, n, i)
		}
	}
	return caseEnd(&b)
}

// caseEnd closes a CASE of spanOf or spanOfSeconds: NULL, no span, when
// every span is empty.
func caseEnd(b *strings.Builder) string {
	if b.Len() == len("CASE") {
		return "CAST(NULL AS INTEGER)"
	}
	return b.String() + " END"
}

func window(spans []models.Span, args map[string]any) {
	lo, hi := bounds(spans)
	args["lo"], args["hi"] = utc(lo), utc(hi)
}

// bounds is the smallest range that holds every non-empty span (a day
// after now is clipped to an empty span at its start, and must not stretch
// the window past now).
func bounds(spans []models.Span) (lo, hi time.Time) {
	for _, s := range spans {
		if !s.Start.Before(s.End) {
			continue
		}
		if lo.IsZero() || s.Start.Before(lo) {
			lo = s.Start
		}
		if s.End.After(hi) {
			hi = s.End
		}
	}
	return lo, hi
}

const confirmed = "b.status = 'confirmed'"

// bookedSQL: GPU-seconds of confirmed bookings, clipped to each span and
// weighed by unit (report_weight_sql.go). The booked GPUs that overlap the
// window are taken first (MATERIALIZED): PostgreSQL otherwise scanned
// every GPU's bookings once per span (255 ms of a 600 ms usage page at 512
// GPUs). They are found from the bookings of the window (bookings_ends_idx),
// whose GPUs have their range (the store keeps them equal): bound on
// booking_gpus alone, which has no index on time, every booking ever made
// was hashed to find their users (EXPLAIN ANALYZE at 512 GPUs × 4 weeks,
// 56,000 bookings: 61 ms, now 40).
func (q reportSQL) bookedSQL(args map[string]any, spans []models.Span) string {
	clip := q.least(q.epoch("bg.ends_at"), "k.ee") + " - " + q.greatest(q.epoch("bg.starts_at"), "k.se")
	window(spans, args)
	return "WITH bg AS MATERIALIZED (SELECT b.user_id AS user_id, bg.gpu_id AS gpu_id, bg.starts_at AS starts_at, bg.ends_at AS ends_at" +
		" FROM bookings b JOIN booking_gpus bg ON bg.booking_id = b.id WHERE " + confirmed + " AND b.ends_at > @lo AND b.starts_at < @hi" +
		" AND bg.starts_at < @hi AND bg.ends_at > @lo)" +
		" SELECT bg.user_id AS uid, k.i AS i, " + weighed("SUM(("+clip+") * "+units("g")+")") + " AS a, 0 AS b FROM bg" +
		" JOIN gpus g ON g.id = bg.gpu_id JOIN " + q.spans(spans, args) +
		" ON bg.starts_at < k.e AND bg.ends_at > k.s GROUP BY bg.user_id, k.i"
}

// minutesSQL is the one pass over the GPU-minutes, for all the minute
// figures at once. The minutes read (pm) are counted per (booking, bucket
// of minutes): the busy, held-idle and no-per-user-data minutes (above),
// the cluster's busy minutes and the utilisation sums, with the bucket's
// span and UTC hour; the unbooked minutes group under a NULL booking.
// Buckets are whole minutes since 1970 (unix_minute), as large as the
// spans' bounds allow (an hour, unless a zone's midnight falls between
// hours). per is the bookings' sums per (booking, span), with the booker
// (uid, looked up per booking read: a join hashed every booking ever
// made, as the planner expects as many buckets as minutes), ch the
// cluster's per UTC hour; kb is what the no-show and
// low-intensity rules need of the rolled hours (q.rolled,
// report_rolled.go), handed in per booking. From per come kind 'u' rows:
// per (user, span) the busy minutes inside their bookings (a), the
// bookings that ended in the span without a single busy minute (b,
// no-shows: only bookings that started inside the window, whose minutes
// were all read), the held-idle minutes (c) and the minutes without
// per-user data (d); from ch kind 'c' rows: per (span, UTC hour) the busy
// minutes of the whole cluster (a), for the utilisation and the heat map.
// a, c and d are unit-minutes, which minutesFigures adds to the rolled
// hours' and rounds once per (user, span), as the cluster's once per span
// and per hour (report_weight_sql.go); busy and the utilisation sums stay
// per unit for the no-show and low-intensity rules, which compare a
// booking's minutes with its own time.
func (q reportSQL) minutesSQL(args map[string]any, spans []models.Span) string {
	window(spans, args)
	size := bucketMinutes(spans)
	args["bucket"] = size
	count := func(pred string) string { return "SUM(CASE WHEN " + pred + " THEN 1 ELSE 0 END)" }
	minutes := "SELECT m.booking_id AS booking_id, m.unix_minute / @bucket AS q, " + count(q.busyMinute(args)) + " AS busy, " +
		q.utilSums(args) + ", " + weighedCount(q.busyMinute(args), "g") + " AS wbusy, " +
		weighedCount(q.heldIdleMinute(args), "g") + " AS wheld, " + weighedCount(q.noUserDataMinute(args), "g") + " AS wnodata, " +
		weighedCount(q.clusterBusyMinute(args), "g") + " AS wanyone FROM gpu_usage_minutes m JOIN gpus g ON g.id = m.gpu_id WHERE " +
		q.minuteRanges("m.minute", args) + " AND (m.util_avg_pct >= @busy_util OR m.top_mem_mib > 0 OR m.booking_id IS NOT NULL) GROUP BY 1, 2"
	pm := "SELECT x.*, " + q.spanOfSeconds("x.q * @bucket * 60", spans, args) + " AS i, x.q * @bucket / 60 AS h FROM (" + minutes + ") x"
	sum := func(col string) string { return "CAST(SUM(pm." + col + ") AS BIGINT) AS " + col }
	per := "SELECT p.* FROM (SELECT pm.booking_id AS booking_id, (SELECT b.user_id FROM bookings b WHERE b.id = pm.booking_id) AS uid," +
		" pm.i AS i, " + sum("busy") + ", " + sum("wbusy") + ", " + sum("wheld") + ", " + sum("wnodata") + ", " + sum("util_n") + ", " +
		sum("util_sum") + ", " + sum("busy_util_n") + ", " + sum("busy_util_sum") +
		" FROM pm WHERE pm.booking_id IS NOT NULL GROUP BY pm.booking_id, pm.i) p WHERE p.uid IS NOT NULL"
	ch := "SELECT i, h, SUM(wanyone) AS wanyone FROM pm GROUP BY i, h"
	users := "SELECT 'u' AS kind, per.uid AS uid, per.i AS i, 0 AS h, SUM(per.wbusy) AS a, 0 AS b, SUM(per.wheld) AS c, SUM(per.wnodata) AS d," +
		" SUM(per.util_n) AS e, SUM(per.util_sum) AS f, 0 AS g FROM per GROUP BY per.uid, per.i"
	ended := confirmed + " AND b.ends_at > @lo AND b.ends_at <= @hi AND " + q.noShowStart(args)
	noShows := "SELECT 'u', b.user_id, " + q.spanOf("b.ends_at", spans, args, true) + ", 0, 0, 1, 0, 0, 0, 0, 0 FROM " + q.noShowBookings(ended) +
		" WHERE " + ended + " AND " + q.noShowBusy(args)
	cluster := "SELECT 'c', 0, ch.i, ch.h, ch.wanyone, 0, 0, 0, 0, 0, 0 FROM ch"
	return "WITH pm AS MATERIALIZED (" + pm + "), per AS MATERIALIZED (" + per + "), ch AS MATERIALIZED (" + ch + ")," +
		" kb AS MATERIALIZED (" + q.keptBookings(args) + ")" +
		" SELECT kind, uid, i, h, SUM(a) AS a, SUM(b) AS b, SUM(c) AS c, SUM(d) AS d," +
		" SUM(e) AS e, SUM(f) AS f, SUM(g) AS g FROM (" + users + " UNION ALL " + noShows + " UNION ALL " + cluster +
		" UNION ALL " + q.lowIntensitySQL(args, spans, "per.i") + ") x WHERE x.i IS NOT NULL GROUP BY kind, uid, i, h"
}

// noShowStart is the no-shows' condition on the booking's start: inside
// the window whose minutes are read, or, with noShowsFrom, inside the
// whole window, whose skipped weeks' busy minutes noShowBusy reads from
// the rollups. The caller has made sure the rollups cover the skipped
// weeks. A booking whose end falls in a skipped week gets no span (spanOf
// is NULL) and is left out (minutesSQL drops rows without one).
func (q reportSQL) noShowStart(args map[string]any) string {
	if q.noShowsFrom.IsZero() {
		return "b.starts_at >= @lo"
	}
	args["ns_from"], args["ns_to"] = utc(q.noShowsFrom), utc(q.noShowsTo)
	return "b.starts_at >= @ns_from"
}

// bucketMinutes is the largest bucket of minutes, at most an hour, whose
// multiples include every bound of the non-empty spans but the window's
// end (the clip to now, after which no minute is read): all minutes of
// one bucket then fall in the span its first minute falls in.
func bucketMinutes(spans []models.Span) int64 {
	_, hi := bounds(spans)
	size := int64(60)
	for _, s := range spans {
		if !s.Start.Before(s.End) {
			continue
		}
		for _, t := range []time.Time{s.Start, s.End} {
			if t.Equal(hi) {
				continue
			}
			if t.Unix()%60 != 0 {
				return 1
			}
			size = gcd(size, t.Unix()/60%60)
		}
	}
	return size
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// spanOfSeconds is spanOf for a column of Unix seconds.
func (q reportSQL) spanOfSeconds(col string, spans []models.Span, args map[string]any) string {
	var b strings.Builder
	b.WriteString("CASE")
	for i, s := range spans {
		if !s.Start.Before(s.End) {
			continue // empty: no time falls in it
		}
		n := fmt.Sprint(i)
		args["se"+n], args["ee"+n] = s.Start.Unix(), s.End.Unix()
		fmt.Fprintf(&b, " WHEN %s >= @se%s AND %s < @ee%s THEN %d", col, n, col, n, i)
	}
	return caseEnd(&b)
}

// unbookedSQL: GPU-minutes on which the user's processes ran on a GPU
// they had no confirmed booking of at that minute (the row's booked stamp),
// of the minutes read; the rolled hours' come from rolledUnbookedSQL.
func (q reportSQL) unbookedSQL(args map[string]any, spans []models.Span) string {
	window(spans, args)
	sql := "SELECT u.user_id AS uid, " + q.spanOf("u.minute", spans, args, false) + " AS i, " + weighed("SUM("+units("g")+")") + " AS a, 0 AS b" +
		" FROM gpu_user_usage_minutes u JOIN gpus g ON g.id = u.gpu_id WHERE " + q.minuteRanges("u.minute", args) + " AND u.user_id IS NOT NULL AND NOT u.booked" +
		" GROUP BY u.user_id, 2"
	return sql
}

// clusterUnbookedSQL: per span the GPU-minutes on which anyone's
// processes ran without a booking of theirs, each (GPU, minute) once, of
// the minutes read; the rolled hours' come from rolledHoursSQL.
func (q reportSQL) clusterUnbookedSQL(args map[string]any, spans []models.Span) string {
	window(spans, args)
	return "SELECT 0 AS uid, " + q.spanOf("x.minute", spans, args, false) + " AS i, " + weighed("SUM("+units("g")+")") + " AS a, 0 AS b FROM" +
		" (SELECT u.gpu_id, u.minute FROM gpu_user_usage_minutes u WHERE " + q.minuteRanges("u.minute", args) +
		" AND u.user_id IS NOT NULL AND NOT u.booked GROUP BY u.gpu_id, u.minute) x JOIN gpus g ON g.id = x.gpu_id GROUP BY 2"
}

// usedBySQL: per booker (uid) and other user (a) the minutes the other
// user's processes ran on the booker's bookings inside [@lo, @hi) (b), of
// the minutes read (the rolled hours' come from rolledUsedBySQL).
// Both sides of the join are bounded to the minutes read: without the
// bound on m, PostgreSQL hashed every GPU-minute of every partition to
// join the few unbooked user rows.
func (q reportSQL) usedBySQL(args map[string]any, lo, hi time.Time) string {
	args["lo"], args["hi"] = utc(lo), utc(hi)
	sql := "SELECT b.user_id AS uid, 0 AS i, u.user_id AS a, " + weighed("SUM("+units("g")+")") + " AS b FROM gpu_user_usage_minutes u" +
		" JOIN gpu_usage_minutes m ON m.gpu_id = u.gpu_id AND m.minute = u.minute JOIN bookings b ON b.id = m.booking_id JOIN gpus g ON g.id = u.gpu_id" +
		" WHERE " + q.minuteRanges("u.minute", args) + " AND " + q.minuteRanges("m.minute", args) +
		" AND u.user_id IS NOT NULL AND NOT u.booked GROUP BY b.user_id, u.user_id"
	return sql
}

// givenBackSQL: GPU-seconds between the end a booking had and the end its
// release gave it, counted in the span of the release; b is the part the
// idle rule released (an idle report of the booking records the release).
// The window's bound on the release, which the spans' join implies, lets
// the planner read the releases of the window (bookings_released_idx):
// from the join alone it expected 20,000 bookings where 1,500 were
// (EXPLAIN ANALYZE at 512 GPUs × 4 weeks: 21 ms, now 16).
func (q reportSQL) givenBackSQL(args map[string]any, spans []models.Span) string {
	back := q.epoch("b.ends_before_release") + " - " + q.epoch("b.ends_at")
	auto := "EXISTS (SELECT 1 FROM agent_idle_reports r WHERE r.booking_id = b.id AND r.released_at IS NOT NULL)"
	back = "(" + back + ") * " + units("g")
	window(spans, args)
	return "SELECT b.user_id AS uid, k.i AS i, " + weighed("SUM("+back+")") + " AS a, " + weighed("SUM(CASE WHEN "+auto+" THEN "+back+
		" ELSE 0 END)") + " AS b FROM bookings b JOIN booking_gpus bg ON bg.booking_id = b.id JOIN gpus g ON g.id = bg.gpu_id JOIN " + q.spans(spans, args) +
		" ON b.released_at >= k.s AND b.released_at < k.e WHERE " + confirmed +
		" AND b.released_at >= @lo AND b.released_at < @hi AND b.ends_before_release > b.ends_at GROUP BY b.user_id, k.i"
}

// prioritySQL: priority requests made in the span, and how many of those
// were approved (a is made, b approved).
func (q reportSQL) prioritySQL(args map[string]any, spans []models.Span) string {
	return "SELECT p.user_id AS uid, k.i AS i, COUNT(*) AS a, SUM(CASE WHEN p.status = 'approved' THEN 1 ELSE 0 END) AS b" +
		" FROM priority_requests p JOIN " + q.spans(spans, args) + " ON p.created_at >= k.s AND p.created_at < k.e GROUP BY p.user_id, k.i"
}

// eventBooking joins audit event a to booking b, its target. SQLite looks
// the booking up by its key (a cast there never fails: another target's
// id finds none); matched as text, it walked every booking for each
// span, 54 ms of a usage view at 512 GPUs × 4 weeks (2.3 ms so).
// PostgreSQL would fail the cast on a non-numeric id, and hashes the text.
func (q reportSQL) eventBooking() string {
	if q.pg {
		return "a.target_id = CAST(b.id AS TEXT)"
	}
	return "b.id = CAST(a.target_id AS INTEGER)"
}

// preemptedSQL: the user's bookings that a priority request pre-empted
// (trimmed or cancelled) in the span; the audit event records each.
func (q reportSQL) preemptedSQL(args map[string]any, spans []models.Span) string {
	return "SELECT b.user_id AS uid, k.i AS i, COUNT(DISTINCT b.id) AS a, 0 AS b FROM audit_events a" +
		" JOIN bookings b ON a.target_type = 'booking' AND " + q.eventBooking() + " JOIN " + q.spans(spans, args) +
		" ON a.at >= k.s AND a.at < k.e WHERE a.action = '" + models.AuditBookingPreempt + "' GROUP BY b.user_id, k.i"
}
