package models

import (
	"reflect"
	"testing"
	"time"
)

func TestUnixHour(t *testing.T) {
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		t    time.Time
		want int64
	}{
		{"epoch", time.Unix(0, 0), 0},
		{"one second before the second hour", time.Unix(7199, 0), 1},
		{"second hour", time.Unix(7200, 0), 2},
		{"before 1970 rounds down", time.Unix(-1, 0), -1},
		{"zone does not matter", time.Date(2026, 12, 1, 5, 30, 0, 0, kolkata), UnixHour(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))},
		{"half-hour zone midnight lies inside a UTC hour", time.Date(2026, 12, 1, 0, 0, 0, 0, kolkata), UnixHour(time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UnixHour(tc.t); got != tc.want {
				t.Errorf("UnixHour(%v) = %d, want %d", tc.t, got, tc.want)
			}
			if s := HourStart(UnixHour(tc.t)); s.After(tc.t) || !s.Add(time.Hour).After(tc.t) {
				t.Errorf("HourStart(UnixHour(%v)) = %v does not hold it", tc.t, s)
			}
		})
	}
}

func TestRollupDue(t *testing.T) {
	h0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	H := UnixHour(h0)
	for _, tc := range []struct {
		name     string
		rolledTo int64
		rolled   bool
		oldest   time.Time
		now      time.Time
		want     HourRange
	}{
		{"hour not over", H, true, time.Time{}, h0.Add(30 * time.Minute), HourRange{H, H}},
		{"hour over but inside the grace", H, true, time.Time{}, h0.Add(time.Hour + RollupGrace - time.Second), HourRange{H, H}},
		{"hour over and grace passed", H, true, time.Time{}, h0.Add(time.Hour + RollupGrace), HourRange{H, H + 1}},
		{"a batch at most", H, true, time.Time{}, h0.Add(48 * time.Hour), HourRange{H, H + RollupBatchHours}},
		{"first run starts at the oldest minute", 0, false, h0.Add(-3*time.Hour + 17*time.Minute), h0.Add(15 * time.Minute), HourRange{H - 3, min(H, H-3+RollupBatchHours)}},
		{"first run with nothing stored starts now", 0, false, time.Time{}, h0.Add(15 * time.Minute), HourRange{H, H}},
		{"first run with only the current hour stored", 0, false, h0.Add(5 * time.Minute), h0.Add(15 * time.Minute), HourRange{H, H}},
		{"clock behind the watermark rolls nothing", H + 5, true, time.Time{}, h0, HourRange{H + 5, H + 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RollupDue(tc.rolledTo, tc.rolled, tc.oldest, tc.now); got != tc.want {
				t.Errorf("RollupDue = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestTouchedHours(t *testing.T) {
	h0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	H := UnixHour(h0)
	for _, tc := range []struct {
		name   string
		lo, hi time.Time
		want   HourRange
	}{
		{"one late minute", h0.Add(59 * time.Minute), h0.Add(59 * time.Minute), HourRange{H, H + 1}},
		{"whole hour", h0, h0.Add(time.Hour), HourRange{H, H + 1}},
		{"range across hours", h0.Add(30 * time.Minute), h0.Add(90 * time.Minute), HourRange{H, H + 2}},
		{"ends on the hour", h0.Add(-time.Minute), h0, HourRange{H - 1, H}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TouchedHours(tc.lo, tc.hi); got != tc.want {
				t.Errorf("TouchedHours = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestMergeAndClipHours(t *testing.T) {
	got := MergeHours([]HourRange{{5, 7}, {1, 2}, {2, 3}, {6, 9}, {4, 4}})
	if want := []HourRange{{1, 3}, {5, 9}}; !reflect.DeepEqual(got, want) {
		t.Errorf("MergeHours = %v, want %v", got, want)
	}
	if got, want := ClipHours([]HourRange{{1, 3}, {5, 9}}, 2, 6), []HourRange{{2, 3}, {5, 6}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ClipHours = %v, want %v", got, want)
	}
}

func TestPlanUsageRead(t *testing.T) {
	utc := func(d, h, m int) time.Time { return time.Date(2026, 12, d, h, m, 0, 0, time.UTC) }
	H := func(d, h int) int64 { return UnixHour(utc(d, h, 0)) }
	day := func(d int) Span { return Span{Start: utc(d, 0, 0), End: utc(d+1, 0, 0)} }
	// Days in a +05:30 zone: each midnight is 18:30 UTC.
	india := func(d int) Span { return Span{Start: utc(d, 18, 30), End: utc(d+1, 18, 30)} }
	for _, tc := range []struct {
		name     string
		spans    []Span
		rolledTo int64
		dirty    []HourRange
		want     UsageReadPlan
	}{
		{"nothing rolled: all minutes", []Span{day(1), day(2)}, H(1, 0), nil,
			UsageReadPlan{Minutes: []Span{{utc(1, 0, 0), utc(3, 0, 0)}}}},
		{"never rolled (watermark 0)", []Span{day(1)}, 0, nil,
			UsageReadPlan{Minutes: []Span{{utc(1, 0, 0), utc(2, 0, 0)}}}},
		{"all rolled: all hours", []Span{day(1), day(2)}, H(5, 0), nil,
			UsageReadPlan{Hours: []HourRange{{H(1, 0), H(3, 0)}}}},
		{"rolled up to mid-window", []Span{day(1), day(2)}, H(2, 7), nil,
			UsageReadPlan{Hours: []HourRange{{H(1, 0), H(2, 7)}}, Minutes: []Span{{utc(2, 7, 0), utc(3, 0, 0)}}}},
		{"week in progress clipped mid-hour", []Span{day(1), {Start: utc(2, 0, 0), End: utc(2, 9, 41)}, {Start: utc(3, 0, 0), End: utc(3, 0, 0)}}, H(2, 9), nil,
			UsageReadPlan{Hours: []HourRange{{H(1, 0), H(2, 9)}}, Minutes: []Span{{utc(2, 9, 0), utc(2, 9, 41)}}}},
		{"dirty hour read from minutes", []Span{day(1)}, H(5, 0), []HourRange{{H(1, 4), H(1, 5)}},
			UsageReadPlan{Hours: []HourRange{{H(1, 0), H(1, 4)}, {H(1, 5), H(2, 0)}}, Minutes: []Span{{utc(1, 4, 0), utc(1, 5, 0)}}}},
		{"dirty outside the window changes nothing", []Span{day(1)}, H(5, 0), []HourRange{{H(3, 4), H(3, 5)}},
			UsageReadPlan{Hours: []HourRange{{H(1, 0), H(2, 0)}}}},
		{"half-hour zone: hours cut by midnight are read from minutes", []Span{india(1), india(2)}, H(5, 0), nil,
			UsageReadPlan{Hours: []HourRange{{H(1, 19), H(2, 18)}, {H(2, 19), H(3, 18)}},
				Minutes: []Span{{utc(1, 18, 30), utc(1, 19, 0)}, {utc(2, 18, 0), utc(2, 19, 0)}, {utc(3, 18, 0), utc(3, 18, 30)}}}},
		{"empty spans", []Span{{Start: utc(1, 0, 0), End: utc(1, 0, 0)}}, H(5, 0), nil, UsageReadPlan{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanUsageRead(tc.spans, tc.rolledTo, tc.dirty)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("PlanUsageRead =\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
}

func TestRollupRetention(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"", DefaultRollupRetentionDays * 24 * time.Hour, false},
		{"730", 730 * 24 * time.Hour, false},
		{"0", 0, true},
		{"3y", 0, true},
	} {
		got, err := RollupRetention(tc.in)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("RollupRetention(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestPartitionDays(t *testing.T) {
	now := time.Date(2026, 12, 3, 23, 59, 0, 0, time.UTC)
	days := PartitionDaysDue(now, time.Time{})
	if len(days) != PartitionDaysBack+PartitionDaysAhead+1 || !days[0].Equal(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)) ||
		!days[len(days)-1].Equal(time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("PartitionDaysDue = %v", days)
	}
	if got := PartitionDaysDue(now, time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)); len(got) != PartitionDaysAhead || !got[0].Equal(time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("PartitionDaysDue after a legacy partition up to Dec 4 = %v", got)
	}
	tokyo := time.FixedZone("JST", 9*3600)
	if got := UTCDay(time.Date(2026, 12, 4, 8, 0, 0, 0, tokyo)); !got.Equal(time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("UTCDay of 08:00 JST = %v, want the UTC day before", got)
	}
	if got := UsagePartitionName("gpu_usage_minutes", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)); got != "gpu_usage_minutes_p20260102" {
		t.Errorf("UsagePartitionName = %q", got)
	}
	cut := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		end  time.Time
		want bool
	}{
		{time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC), true},
		{cut, true},
		{time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC), false},
		{time.Time{}, false}, // the default partition: no end
	} {
		if got := PartitionDroppable(tc.end, cut); got != tc.want {
			t.Errorf("PartitionDroppable(%v) = %v, want %v", tc.end, got, tc.want)
		}
	}
}
