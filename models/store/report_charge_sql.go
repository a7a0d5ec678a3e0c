package store

import (
	"fmt"
	"strings"

	"github.com/gpubook/gpubook/models"
)

// The SQL of the charge rules of docs/reports.md: no-shows by a share of
// the booking's time (GPUBOOK_REPORT_NO_SHOW_PCT) and late cancellations
// (GPUBOOK_REPORT_LATE_CANCEL). models.ReportRules.IsNoShow is the same
// rule in Go.

// noShowBookings is the FROM of minutesSQL's no-shows: the bookings b
// that where (a predicate on b) picks, each with its booker's busy
// minutes among those read and the rolled hours' (pb.busy), summed once
// per booking rather than looked up per booking. Each of those bookings
// is grouped with the sums (busy 0: one with none is a no-show too), and
// the groups join bookings by primary key, so no planner can make it a
// nested loop. As a LEFT JOIN of the sums, SQLite 3.54 (modernc.org/sqlite
// v1.62) scanned them once per booking of the whole table, with no index:
// at 512 GPUs, 0.85 s of a usage view with two days of bookings and over
// ten minutes with four weeks (3.40 indexed them: 36 ms).
func (q reportSQL) noShowBookings(where string) string {
	return "(SELECT y.booking_id AS booking_id, SUM(y.busy) AS busy FROM (SELECT b.id AS booking_id, 0 AS busy FROM bookings b WHERE " + where +
		" UNION ALL SELECT per.booking_id, per.busy FROM per UNION ALL SELECT kb.booking_id, kb.busy FROM kb) y GROUP BY y.booking_id) pb" +
		" JOIN bookings b ON b.id = pb.booking_id"
}

// noShowBusy is the no-show condition on a booking b of noShowBookings:
// its booker's busy GPU-minutes (those read, plus, for a booking that
// began in a trend week read from its snapshot, the busy minutes of its
// rolled hours in the weeks skipped) under NoShowPct of its GPU-time (the
// GPU-seconds of its GPUs, up to its release). A booking of no time is
// never a no-show.
func (q reportSQL) noShowBusy(args map[string]any) string {
	args["noshow_pct"] = q.rules.OrDefault().NoShowPct
	skipped := "0"
	if hours := q.skippedHours(args); hours != "" {
		skipped = "CASE WHEN b.starts_at < @ns_to THEN (SELECT COALESCE(SUM(h.busy), 0) FROM usage_hours h WHERE h.booking_id = b.id AND " +
			hours + ") ELSE 0 END"
	}
	booked := "(SELECT SUM(" + q.epoch("bg.ends_at") + " - " + q.epoch("bg.starts_at") + ") FROM booking_gpus bg WHERE bg.booking_id = b.id)"
	return "(pb.busy + " + skipped + ") * 6000 < @noshow_pct * " + booked
}

// skippedHours is the predicate on h.unix_hour of the rolled hours inside
// the trend weeks read from their snapshots (the hours UsageReadPlan.Without
// took out); "" when none was skipped.
func (q reportSQL) skippedHours(args map[string]any) string {
	var parts []string
	for i, s := range q.noShowsSkipped {
		if !s.Start.Before(s.End) {
			continue
		}
		from := models.UnixHour(s.Start)
		if !models.HourStart(from).Equal(s.Start) {
			from++
		}
		n := fmt.Sprint(i)
		args["sha"+n], args["shb"+n] = from, models.UnixHour(s.End)
		parts = append(parts, "(h.unix_hour >= @sha"+n+" AND h.unix_hour < @shb"+n+")")
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// lateCancelSQL: per user and span, the GPU-seconds of the bookings they
// cancelled themselves less than the rules' lead before they would have
// started, from the start up to the cancellation plus the lead (a), and
// those bookings (b), counted in the span of their start. An admin's
// cancel, a pre-emption and a GPU taken out of service are not the
// owner's and charge nothing (cancelled_by, migration 00027). Weighed by
// unit (report_weight_sql.go).
func (q reportSQL) lateCancelSQL(args map[string]any, spans []models.Span) string {
	lead := q.rules.LateCancelLead()
	if lead <= 0 {
		args["lc_off"] = 1 // a named argument, so that the map binds as such
		return "SELECT 0 AS uid, 0 AS i, 0 AS a, 0 AS b WHERE @lc_off = 0"
	}
	window(spans, args)
	args["lc_lead"] = int64(lead.Seconds())
	lo, _ := bounds(spans)
	args["lc_lo"] = utc(lo.Add(-lead))
	until := q.least(q.epoch("bg.ends_at"), q.epoch("b.cancelled_at")+" + @lc_lead")
	cut := q.least(until, "k.ee") + " - " + q.greatest(q.epoch("bg.starts_at"), "k.se")
	return "SELECT b.user_id AS uid, k.i AS i, " + weighed("SUM(("+cut+") * "+units("g")+")") + " AS a," +
		" COUNT(DISTINCT CASE WHEN bg.starts_at >= k.s AND bg.starts_at < k.e THEN b.id END) AS b" +
		" FROM bookings b JOIN booking_gpus bg ON bg.booking_id = b.id JOIN gpus g ON g.id = bg.gpu_id JOIN " + q.spans(spans, args) +
		" ON bg.starts_at < k.e AND " + until + " > k.se" +
		" WHERE b.status = 'cancelled' AND b.ends_at > @lo AND b.starts_at < @hi AND b.cancelled_by = b.user_id" +
		" AND b.cancelled_at >= @lc_lo AND b.cancelled_at < @hi" +
		" AND " + q.epoch("b.cancelled_at") + " < " + q.epoch("bg.starts_at") +
		" AND " + q.epoch("b.cancelled_at") + " + @lc_lead > " + q.epoch("bg.starts_at") +
		" GROUP BY b.user_id, k.i"
}
