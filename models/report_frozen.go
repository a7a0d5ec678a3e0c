package models

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"
)

// WeekDataVersion names the JSON layout of a frozen week (report_weeks.data).
// A change to WeekData that an old snapshot cannot be read into raises it;
// a snapshot of another version is refused with a message to recompute,
// never silently read wrong.
const WeekDataVersion = 1

// FreezeAfter is how long after its end a week that nobody reported is
// frozen anyway, at its first read: late usage spooled by agents during an
// outage has had a week to arrive.
const FreezeAfter = 7 * 24 * time.Hour

// WeekState says whether a week's figures can still change.
type WeekState int

// The states of a report week: in progress (figures as of now), ended but
// not yet frozen (as of its end, recomputed at every read until reported
// or a week old), and frozen (read from its snapshot, the same forever).
const (
	WeekInProgress WeekState = iota
	WeekEnded
	WeekFrozen
)

// FrozenWeek is a closed week's stored snapshot.
type FrozenWeek struct {
	Week     string
	Version  int
	Data     []byte
	FrozenAt time.Time
	FrozenBy string
}

// FreezeWeek serialises d as a snapshot; the week, the rules, the users,
// teams, memberships, share weights and GPU count travel inside it.
func FreezeWeek(d *WeekData, at time.Time, by string) (FrozenWeek, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return FrozenWeek{}, fmt.Errorf("models: freeze week %s: %w", d.Week, err)
	}
	return FrozenWeek{Week: d.Week.String(), Version: WeekDataVersion, Data: b, FrozenAt: at.UTC(), FrozenBy: by}, nil
}

// Thaw reads a snapshot back as the week w it was made of. The week's
// bounds are taken from w (in the cluster's zone), not from the JSON,
// whose times carry only a fixed offset: a DST week's days and heat map
// are worked out in the zone itself.
func (f FrozenWeek) Thaw(w Week) (*WeekData, error) {
	if f.Version != WeekDataVersion {
		return nil, NewError(EINTERNAL, M("err.report_snapshot_version", "Week", f.Week, "Version", strconv.Itoa(f.Version)))
	}
	d := &WeekData{}
	if err := json.Unmarshal(f.Data, d); err != nil {
		return nil, fmt.Errorf("models: thaw week %s: %w", f.Week, err)
	}
	d.Week = w
	d.State, d.FrozenAt = WeekFrozen, f.FrozenAt
	for m := range d.ByUser {
		if len(d.ByUser[m]) != len(d.Spans) {
			return nil, fmt.Errorf("models: thaw week %s: user %d has %d spans, want %d", f.Week, m, len(d.ByUser[m]), len(d.Spans))
		}
	}
	return d, nil
}

// WeekReader gives the figures of a week as every surface must show them:
// live while in progress, the frozen snapshot once closed. The store
// implements it; the pages, the CSV, the preview and the weekly send all
// read through it, so that none of them can see a closed week differently.
type WeekReader interface {
	// ReportWeekAt returns week w as seen at now. freeze asks that a
	// closed week be frozen now if it is not yet (the weekly send).
	ReportWeekAt(ctx context.Context, w Week, now time.Time, rules ReportRules, freeze bool) (*WeekData, error)
}

// FigureChange is one figure of one user that a recompute changed.
type FigureChange struct {
	UserID        int64
	Name          string
	Figure        string // a key of reportFigures
	Before, After string
}

// reportFigures are the per-user numbers a recompute diff compares, each
// formatted as the report shows it.
var reportFigures = []struct {
	key string
	val func(UserReport) string
}{
	{"booked_h", func(r UserReport) string { return hours(r.Figures.BookedHours()) }},
	{"busy_h", func(r UserReport) string { return hours(r.Figures.BusyHours()) }},
	{"idle_h", func(r UserReport) string { return hours(r.Figures.IdleHours()) }},
	{"unbooked_h", func(r UserReport) string { return hours(r.Figures.UnbookedHours()) }},
	{"no_shows", func(r UserReport) string { return strconv.FormatInt(r.Figures.NoShows, 10) }},
	{"entitled", func(r UserReport) string { return strconv.FormatFloat(r.Entitled*100, 'f', 1, 64) + "%" }},
	{"fair_share", func(r UserReport) string { return strconv.FormatFloat(r.FairShare, 'f', 2, 64) }},
	{"rank", func(r UserReport) string { return strconv.Itoa(r.Rank) + "/" + strconv.Itoa(r.RankOf) }},
}

func hours(h float64) string { return strconv.FormatFloat(h, 'f', 1, 64) }

// DiffWeeks lists every user figure that differs between two computations
// of one week (before may be nil: a week never frozen), by user name then
// figure, so that an admin sees who a recompute changed and how.
func DiffWeeks(before, after *WeekData) []FigureChange {
	users := map[int64]User{}
	for _, d := range []*WeekData{before, after} {
		if d == nil {
			continue
		}
		for _, u := range d.Users {
			users[u.ID] = u
		}
	}
	var out []FigureChange
	for _, u := range users {
		var b, a UserReport
		if before != nil {
			b = before.UserReport(u)
		}
		a = after.UserReport(u)
		for _, f := range reportFigures {
			if bv, av := f.val(b), f.val(a); bv != av {
				out = append(out, FigureChange{UserID: u.ID, Name: u.Name, Figure: f.key, Before: bv, After: av})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].UserID < out[j].UserID
	})
	return out
}
