package store

import (
	"fmt"
	"time"

	"github.com/gpubook/gpubook/models"
)

// The utilisation sums of docs/reports.md ("Mean utilisation",
// "Low-intensity"), for the row m of gpu_usage_minutes. Utilisation is
// summed in whole tenths of a percent, rounded half up the same way in
// both dialects, so that SQLite and PostgreSQL agree to the unit.

// tenths is col (a utilisation in percent, never negative) in tenths.
func (q reportSQL) tenths(col string) string {
	if q.pg {
		return "CAST(FLOOR(" + col + " * 10 + 0.5) AS INTEGER)"
	}
	return "CAST(" + col + " * 10 + 0.5 AS INTEGER)"
}

// utilSums is four columns: the booked minutes with a utilisation
// recorded and their utilisation summed, then the same over the busy
// minutes (a MIG GPU's minutes have none and are left out of both).
func (q reportSQL) utilSums(args map[string]any) string {
	booked := "m.booking_id IS NOT NULL AND m.util_avg_pct IS NOT NULL"
	busy := q.busyMinute(args) + " AND m.util_avg_pct IS NOT NULL"
	sum := func(pred, v string) string { return "SUM(CASE WHEN " + pred + " THEN " + v + " ELSE 0 END)" }
	return sum(booked, "1") + " AS util_n, " + sum(booked, q.tenths("m.util_avg_pct")) + " AS util_sum, " +
		sum(busy, "1") + " AS busy_util_n, " + sum(busy, q.tenths("m.util_avg_pct")) + " AS busy_util_sum"
}

// lowIntensitySQL is the kind 'u' rows of minutesSQL that count, in the
// span of its end, each booking whose busy minutes in the week of its end
// (the report's week for its days, else the trend week itself) average
// under the rules' LowIntensityPct. span is the span of per.q.
func (q reportSQL) lowIntensitySQL(args map[string]any, spans []models.Span, span string) string {
	args["low_tenths"] = q.rules.OrDefault().LowIntensityPct * 10
	week := func(i string) string {
		return "CASE WHEN " + i + " < " + fmt.Sprint(models.ReportDays) + " THEN 0 ELSE " + i + " END"
	}
	end := q.spanOf("b.ends_at", spans, args, true)
	return "SELECT 'u', b.user_id, " + end + ", 0, 0, 0, 0, 0, 0, 0, 1 FROM bookings b JOIN (SELECT y.booking_id AS booking_id, y.g AS g," +
		" SUM(y.n) AS n, SUM(y.s) AS s FROM (SELECT per.booking_id, " + week(span) + " AS g, per.busy_util_n AS n, per.busy_util_sum AS s FROM per" +
		" UNION ALL SELECT kb.booking_id, kb.g, kb.n, kb.s FROM kb) y GROUP BY 1, 2) x ON x.booking_id = b.id" +
		" WHERE " + confirmed + " AND b.ends_at > @lo AND b.ends_at <= @hi AND x.n > 0 AND x.s < @low_tenths * x.n AND x.g = " + week(end)
}

// unmappedSQL: per Unix name that maps to no gpubook user, the GPU-minutes
// its processes ran on a GPU in [@lo, @hi), weighed by unit (uid is 0, a the minutes; the
// name comes back in n), of the minutes read; the rolled hours' come from
// rolledUnmappedSQL.
func (q reportSQL) unmappedSQL(args map[string]any, lo, hi time.Time) string {
	args["lo"], args["hi"] = utc(lo), utc(hi)
	sql := "SELECT u.user_name AS n, " + weighed("SUM("+units("g")+")") + " AS a FROM gpu_user_usage_minutes u JOIN gpus g ON g.id = u.gpu_id WHERE " + q.minuteRanges("u.minute", args) +
		" AND u.user_id IS NULL GROUP BY u.user_name"
	return sql
}
