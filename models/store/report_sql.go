package store

import (
	"fmt"
	"strings"

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

// busyMinute is THE definition of a busy GPU-minute, for the row m of
// gpu_usage_minutes: utilisation at or above the threshold (busyByUtil),
// or processes of one user holding at least the memory threshold on it
// (busyByMemory). userExpr names whose processes count ("b.user_id" for
// the booker); "" means anyone's.
func (q reportSQL) busyMinute(userExpr string, args map[string]any) string {
	return "(" + q.busyByUtil(args) + " OR " + q.busyByMemory(userExpr, args) + ")"
}

func (q reportSQL) busyByUtil(args map[string]any) string {
	args["busy_util"] = q.rules.BusyUtilPct
	return "m.util_avg_pct >= @busy_util"
}

// busyByMemory tests the GPU's own used memory first only as a shortcut: a
// user's processes never hold more than the GPU has in use (both are the
// most seen in the minute's samples), so an idle GPU with free memory
// needs no look at the per-user rows.
func (q reportSQL) busyByMemory(userExpr string, args map[string]any) string {
	args["busy_mem"] = q.rules.BusyMemMiB
	who := ""
	if userExpr != "" {
		who = " AND uu.user_id = " + userExpr
	}
	return "(m.mem_used_mib >= @busy_mem AND EXISTS (SELECT 1 FROM gpu_user_usage_minutes uu" +
		" WHERE uu.gpu_id = m.gpu_id AND uu.minute = m.minute AND uu.memory_mib >= @busy_mem" + who + "))"
}

// spanOf is the index of the span that col falls in, as a CASE over the
// spans' bounds ([s, e), or (s, e] for an end time), and window binds @lo
// and @hi, the bounds of all spans together. The big per-minute scans use
// these instead of joining the spans, so that each row is read once.
func (q reportSQL) spanOf(col string, spans []models.Span, args map[string]any, endTime bool) string {
	var b strings.Builder
	b.WriteString("CASE")
	for i, s := range spans {
		n := fmt.Sprint(i)
		args["s"+n], args["e"+n] = utc(s.Start), utc(s.End)
		if endTime {
			fmt.Fprintf(&b, " WHEN %s > @s%s AND %s <= @e%s THEN %d", col, n, col, n, i)
		} else {
			fmt.Fprintf(&b, " WHEN %s >= @s%s AND %s < @e%s THEN %d", col, n, col, n, i)
		}
	}
	return b.String() + " END"
}

func window(spans []models.Span, args map[string]any) {
	lo, hi := spans[0].Start, spans[0].End
	for _, s := range spans {
		if s.Start.Before(lo) {
			lo = s.Start
		}
		if s.End.After(hi) {
			hi = s.End
		}
	}
	args["lo"], args["hi"] = utc(lo), utc(hi)
}

const confirmed = "b.status = 'confirmed'"

// bookedSQL: GPU-seconds of confirmed bookings, clipped to each span.
func (q reportSQL) bookedSQL(args map[string]any, spans []models.Span) string {
	clip := q.least(q.epoch("bg.ends_at"), "k.ee") + " - " + q.greatest(q.epoch("bg.starts_at"), "k.se")
	return "SELECT b.user_id AS uid, k.i AS i, SUM(" + clip + ") AS a, 0 AS b FROM booking_gpus bg" +
		" JOIN bookings b ON b.id = bg.booking_id JOIN " + q.spans(spans, args) +
		" ON bg.starts_at < k.e AND bg.ends_at > k.s WHERE " + confirmed + " GROUP BY b.user_id, k.i"
}

// busyNoShowSQL: busy GPU-minutes inside the user's own bookings (a), and
// bookings that ended in the span without a single busy minute (b). One
// pass over the booked minutes serves both: "per" counts each booking's
// busy minutes per span, and a no-show is a booking missing from it. Only
// bookings that started inside the window can be no-shows (the minutes of
// an older one are not read).
func (q reportSQL) busyNoShowSQL(args map[string]any, spans []models.Span) string {
	window(spans, args)
	per := "SELECT bg.booking_id AS booking_id, " + q.spanOf("m.minute", spans, args, false) + " AS i, COUNT(*) AS busy" +
		" FROM booking_gpus bg JOIN bookings b ON b.id = bg.booking_id" +
		" JOIN gpu_usage_minutes m ON m.gpu_id = bg.gpu_id AND m.minute >= bg.starts_at AND m.minute < bg.ends_at" +
		" WHERE " + confirmed + " AND bg.starts_at < @hi AND bg.ends_at > @lo AND m.minute >= @lo AND m.minute < @hi AND " +
		q.busyMinute("b.user_id", args) + " GROUP BY bg.booking_id, 2"
	return "WITH per AS (" + per + ") SELECT uid, i, SUM(a) AS a, SUM(b) AS b FROM (" +
		"SELECT b.user_id AS uid, per.i AS i, per.busy AS a, 0 AS b FROM per JOIN bookings b ON b.id = per.booking_id" +
		" UNION ALL SELECT b.user_id, " + q.spanOf("b.ends_at", spans, args, true) + ", 0, 1 FROM bookings b WHERE " + confirmed +
		" AND b.ends_at > @lo AND b.ends_at <= @hi AND b.starts_at >= @lo AND NOT EXISTS (SELECT 1 FROM per WHERE per.booking_id = b.id)" +
		") x GROUP BY uid, i"
}

// unbookedSQL: GPU-minutes on which the user's processes ran on a GPU
// they had no confirmed booking of at that minute.
func (q reportSQL) unbookedSQL(args map[string]any, spans []models.Span) string {
	window(spans, args)
	return "SELECT u.user_id AS uid, " + q.spanOf("u.minute", spans, args, false) + " AS i, COUNT(*) AS a, 0 AS b" +
		" FROM gpu_user_usage_minutes u WHERE u.minute >= @lo AND u.minute < @hi AND u.user_id IS NOT NULL" +
		" AND NOT EXISTS (SELECT 1 FROM booking_gpus bg JOIN bookings b ON b.id = bg.booking_id" +
		" WHERE bg.gpu_id = u.gpu_id AND bg.starts_at <= u.minute AND bg.ends_at > u.minute AND b.user_id = u.user_id AND " +
		confirmed + ") GROUP BY u.user_id, 2"
}

// givenBackSQL: GPU-seconds between the end a booking had and the end its
// release gave it, counted in the span of the release; b is the part the
// idle rule released (an idle report of the booking records the release).
func (q reportSQL) givenBackSQL(args map[string]any, spans []models.Span) string {
	back := q.epoch("b.ends_before_release") + " - " + q.epoch("b.ends_at")
	auto := "EXISTS (SELECT 1 FROM agent_idle_reports r WHERE r.booking_id = b.id AND r.released_at IS NOT NULL)"
	return "SELECT b.user_id AS uid, k.i AS i, SUM(" + back + ") AS a, SUM(CASE WHEN " + auto + " THEN " + back +
		" ELSE 0 END) AS b FROM bookings b JOIN booking_gpus bg ON bg.booking_id = b.id JOIN " + q.spans(spans, args) +
		" ON b.released_at >= k.s AND b.released_at < k.e WHERE " + confirmed +
		" AND b.ends_before_release > b.ends_at GROUP BY b.user_id, k.i"
}

// clusterHoursSQL: the whole cluster's busy GPU-minutes per span and UTC
// hour, booked or not, for the utilisation and the heat map. It counts
// busyMinute as its two disjoint halves — busy by utilisation, and not so
// but busy by memory — because PostgreSQL runs an EXISTS on its own as a
// parallel semi-join, but one under OR as a per-row subplan (twice the
// time on the benchmark). Per minute first, then per span and hour.
func (q reportSQL) clusterHoursSQL(args map[string]any, spans []models.Span) string {
	window(spans, args)
	from := " FROM gpu_usage_minutes m WHERE m.minute >= @lo AND m.minute < @hi AND "
	byUtil := "SELECT m.minute AS minute, COUNT(*) AS n" + from + q.busyByUtil(args) + " GROUP BY m.minute"
	byMem := "SELECT m.minute AS minute, COUNT(*) AS n" + from + "NOT (COALESCE(m.util_avg_pct, -1) >= @busy_util) AND " +
		q.busyByMemory("", args) + " GROUP BY m.minute"
	return "SELECT " + q.spanOf("x.minute", spans, args, false) + " AS i, " + q.epoch("x.minute") + " / 3600 AS h, SUM(x.n) AS v FROM (" +
		byUtil + " UNION ALL " + byMem + ") x GROUP BY 1, 2"
}

// prioritySQL: priority requests made in the span, and how many of those
// were approved (a is made, b approved).
func (q reportSQL) prioritySQL(args map[string]any, spans []models.Span) string {
	return "SELECT p.user_id AS uid, k.i AS i, COUNT(*) AS a, SUM(CASE WHEN p.status = 'approved' THEN 1 ELSE 0 END) AS b" +
		" FROM priority_requests p JOIN " + q.spans(spans, args) + " ON p.created_at >= k.s AND p.created_at < k.e GROUP BY p.user_id, k.i"
}

// preemptedSQL: the user's bookings that a priority request pre-empted
// (trimmed or cancelled) in the span; the audit event records each.
func (q reportSQL) preemptedSQL(args map[string]any, spans []models.Span) string {
	return "SELECT b.user_id AS uid, k.i AS i, COUNT(DISTINCT b.id) AS a, 0 AS b FROM audit_events a" +
		" JOIN bookings b ON a.target_type = 'booking' AND a.target_id = CAST(b.id AS TEXT) JOIN " + q.spans(spans, args) +
		" ON a.at >= k.s AND a.at < k.e WHERE a.action = '" + models.AuditBookingPreempt + "' GROUP BY b.user_id, k.i"
}
