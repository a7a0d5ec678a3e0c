package models

import (
	"sort"
	"time"
)

// Hourly usage rollups (migration 00018, docs/scaling.md). The per-minute
// usage is summed per UTC hour, GPU, booking and user by a background job;
// the reports read those sums for the hours the job has rolled and the
// minutes only for the rest, so that reports over weeks and months read
// 60 times fewer rows and the minutes can be kept for a shorter time than
// the sums. Hours are numbered in UTC (Unix seconds / 3600), whatever the
// cluster's zone: a zone whose midnight falls inside a UTC hour (India,
// +05:30) has its day boundaries inside an hour, and such an hour is read
// from its minutes (UsageReadPlan).

// HourRange is the UTC hours [From, To), numbered as UnixHour does.
type HourRange struct{ From, To int64 }

// DefaultRollupRetentionDays is GPUBOOK_USAGE_ROLLUP_RETENTION_DAYS'
// default: three years of hourly sums.
const DefaultRollupRetentionDays = 3 * 365

// RollupGrace is how long after an hour ends the job waits before it rolls
// it: agents report a minute shortly after it ends. Minutes that come later
// still are caught as late minutes (re-rolled), so this only saves work.
const RollupGrace = 10 * time.Minute

// RollupBatchHours is how many hours one roll transaction sums at most,
// so that catching up on a large history never holds one long transaction:
// on PostgreSQL writers of minutes wait for it (the rollup lock).
const RollupBatchHours = 1

// UnixHour is the number of the UTC hour t falls in.
func UnixHour(t time.Time) int64 {
	s := t.Unix()
	h := s / 3600
	if s < 0 && s%3600 != 0 {
		h--
	}
	return h
}

// HourStart is the start of UTC hour h.
func HourStart(h int64) time.Time { return time.Unix(h*3600, 0).UTC() }

// ceilHour is the first hour that starts at or after t.
func ceilHour(t time.Time) int64 {
	h := UnixHour(t)
	if HourStart(h).Before(t) {
		h++
	}
	return h
}

// CompleteBefore is the first hour that is not yet complete at now: every
// hour before it ended at least RollupGrace ago.
func CompleteBefore(now time.Time) int64 { return UnixHour(now.Add(-RollupGrace)) }

// RollupDue is the hours the job rolls next: from rolledTo (or, on its
// first run, the hour of the oldest stored minute; nothing stored means
// nothing to catch up) up to the complete hours, at most RollupBatchHours.
// An empty range (From == To) means nothing is due.
func RollupDue(rolledTo int64, rolled bool, oldest time.Time, now time.Time) HourRange {
	done := CompleteBefore(now)
	from := rolledTo
	if !rolled {
		from = done
		if !oldest.IsZero() && UnixHour(oldest) < done {
			from = UnixHour(oldest)
		}
	}
	to := min(done, from+RollupBatchHours)
	if to < from {
		to = from
	}
	return HourRange{From: from, To: to}
}

// TouchedHours is the hours a changed range of minutes [lo, hi) lies in;
// hi at or before lo stands for the one minute at lo (a late minute).
func TouchedHours(lo, hi time.Time) HourRange {
	if !hi.After(lo) {
		hi = lo.Add(time.Minute)
	}
	return HourRange{From: UnixHour(lo), To: ceilHour(hi)}
}

// MergeHours sorts rs and joins the ranges that overlap or touch.
func MergeHours(rs []HourRange) []HourRange {
	var in []HourRange
	for _, r := range rs {
		if r.From < r.To {
			in = append(in, r)
		}
	}
	sort.Slice(in, func(i, j int) bool { return in[i].From < in[j].From })
	var out []HourRange
	for _, r := range in {
		if n := len(out); n > 0 && r.From <= out[n-1].To {
			out[n-1].To = max(out[n-1].To, r.To)
			continue
		}
		out = append(out, r)
	}
	return out
}

// ClipHours keeps the parts of rs inside [from, to).
func ClipHours(rs []HourRange, from, to int64) []HourRange {
	var out []HourRange
	for _, r := range rs {
		r.From, r.To = max(r.From, from), min(r.To, to)
		if r.From < r.To {
			out = append(out, r)
		}
	}
	return out
}

// UsageReadPlan says where a report reads each part of its window: Hours
// from the rollups, Minutes (ranges of time) from the per-minute rows.
// Together they cover the window exactly once.
type UsageReadPlan struct {
	Hours   []HourRange
	Minutes []Span
}

// PlanUsageRead splits the window of spans (the smallest range holding
// every non-empty span) between the rollups and the minutes. An hour is
// read from its rollup when it lies wholly inside the window and inside one
// span (no span starts or ends inside it), ends at or before rolledTo, and
// no dirty range (minutes that changed since it was rolled and that the
// job has not re-rolled yet) touches it; everything else is read minute by
// minute, so the figures are the same as from the minutes alone.
func PlanUsageRead(spans []Span, rolledTo int64, dirty []HourRange) UsageReadPlan {
	lo, hi, ok := spansBounds(spans)
	if !ok {
		return UsageReadPlan{}
	}
	usable := []HourRange{{From: ceilHour(lo), To: min(UnixHour(hi), rolledTo)}}
	var cuts []HourRange
	for _, s := range spans {
		if !s.Start.Before(s.End) {
			continue
		}
		for _, t := range []time.Time{s.Start, s.End} {
			if !HourStart(UnixHour(t)).Equal(t) {
				cuts = append(cuts, HourRange{From: UnixHour(t), To: UnixHour(t) + 1})
			}
		}
	}
	hours := subtractHours(MergeHours(usable), MergeHours(append(cuts, dirty...)))
	var p UsageReadPlan
	p.Hours = hours
	at := lo
	for _, h := range hours {
		if s := HourStart(h.From); at.Before(s) {
			p.Minutes = append(p.Minutes, Span{Start: at, End: s})
		}
		at = HourStart(h.To)
	}
	if at.Before(hi) {
		p.Minutes = append(p.Minutes, Span{Start: at, End: hi})
	}
	return p
}

// spansBounds is the smallest range that holds every non-empty span.
func spansBounds(spans []Span) (lo, hi time.Time, ok bool) {
	for _, s := range spans {
		if !s.Start.Before(s.End) {
			continue
		}
		if !ok || s.Start.Before(lo) {
			lo = s.Start
		}
		if !ok || s.End.After(hi) {
			hi = s.End
		}
		ok = true
	}
	return lo.UTC(), hi.UTC(), ok
}

// subtractHours is a minus b, both merged.
func subtractHours(a, b []HourRange) []HourRange {
	var out []HourRange
	for _, r := range a {
		parts := []HourRange{r}
		for _, c := range b {
			var next []HourRange
			for _, p := range parts {
				if c.To <= p.From || c.From >= p.To {
					next = append(next, p)
					continue
				}
				if p.From < c.From {
					next = append(next, HourRange{From: p.From, To: c.From})
				}
				if c.To < p.To {
					next = append(next, HourRange{From: c.To, To: p.To})
				}
			}
			parts = next
		}
		out = append(out, parts...)
	}
	return out
}

// Time partitions of the per-minute usage on PostgreSQL (migration 00018,
// models/store/telemetry/usage_partitions.go): one per UTC day, created ahead.

// PartitionDaysAhead is how many days after today the partitions exist,
// and PartitionDaysBack how many before today the job makes sure of.
const (
	PartitionDaysAhead = 7
	PartitionDaysBack  = 1
)

// UTCDay is the start of the UTC day t falls in.
func UTCDay(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// UsagePartitionName is the name of table's partition of the UTC day.
func UsagePartitionName(table string, day time.Time) string {
	return table + "_p" + day.UTC().Format("20060102")
}

// PartitionDaysDue is the days whose partitions should exist at now:
// PartitionDaysBack before today to PartitionDaysAhead after it, less the
// days before notBefore (still held by an older partition).
func PartitionDaysDue(now, notBefore time.Time) []time.Time {
	var out []time.Time
	today := UTCDay(now)
	for d := -PartitionDaysBack; d <= PartitionDaysAhead; d++ {
		day := today.AddDate(0, 0, d)
		if !day.Before(notBefore) {
			out = append(out, day)
		}
	}
	return out
}

// PartitionDroppable says whether a partition holding minutes up to end
// (exclusive) lies wholly before the retention cutoff.
func PartitionDroppable(end, cutoff time.Time) bool {
	return !end.IsZero() && !end.After(cutoff)
}
