package models

import (
	"context"
	"encoding/json"
	"fmt"
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
	d.State, d.FrozenAt, d.FrozenBy = WeekFrozen, f.FrozenAt, f.FrozenBy
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

// FigureChange is one cell of a report surface that reads differently in
// two computations of a week: the table it is in (as its CSV export names
// it, "members:T1" for a team's), the row (a figure's label, a day, a week,
// a user) and column, and both texts as the surface prints them.
type FigureChange struct {
	UserID int64  // whose figure: 0 for the week's own (the admins' summary, the heat map)
	Name   string // the user's name; "" for the week's own
	Table  string
	Row    string
	Figure string // the column's head
	Before string // "" when the cell was not there
	After  string // "" when the cell is gone
}

// WeekDiff lists every cell any surface shows differently in after than
// in before (nil: a week never frozen). The views implement it
// (views.DiffWeeks) from the very tables the pages, CSV exports, emails
// and preview print, so that a recompute lists all of it and nothing
// else; the store records its list in the audit log.
type WeekDiff func(before, after *WeekData) []FigureChange
