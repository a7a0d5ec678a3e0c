package models_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

var (
	shanghai = mustZone("Asia/Shanghai")
	berlin   = mustZone("Europe/Berlin")
)

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

func at(loc *time.Location, s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		panic(err)
	}
	return t
}

func ptr(v int64) *int64 { return &v }

func lim(scope string, id int64, rule, period string, v int64) models.PolicyLimit {
	return models.PolicyLimit{Scope: scope, ScopeID: id, Rule: rule, Period: period, Value: v}
}

func gpus(n int) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	return ids
}

// baseInput is user 7 of team 3 ("vision") in Shanghai with the default
// peak schedule and the system's default limits.
func baseInput(loc *time.Location, ls ...models.PolicyLimit) models.PolicyInput {
	return models.PolicyInput{UserID: 7, UserName: "Ann", TeamIDs: []int64{3}, TeamNames: map[int64]string{3: "vision", 4: "nlp"},
		Limits: ls, Settings: models.DefaultPolicySettings(), System: models.DefaultBookingLimits, Location: loc}
}

func TestEffectivePrecedence(t *testing.T) {
	tests := []struct {
		name     string
		limits   []models.PolicyLimit
		wantVal  int64
		wantFrom string
		wantID   int64
	}{
		{"global only", []models.PolicyLimit{lim("global", 0, "max_gpus", "", 4)}, 4, "global", 0},
		{"team beats global", []models.PolicyLimit{lim("global", 0, "max_gpus", "", 4), lim("team", 3, "max_gpus", "", 6)}, 6, "team", 3},
		{"user beats team", []models.PolicyLimit{lim("global", 0, "max_gpus", "", 4), lim("team", 3, "max_gpus", "", 6), lim("user", 7, "max_gpus", "", 2)}, 2, "user", 7},
		{"other team and user ignored", []models.PolicyLimit{lim("global", 0, "max_gpus", "", 4), lim("team", 4, "max_gpus", "", 6), lim("user", 8, "max_gpus", "", 1)}, 4, "global", 0},
		{"most generous of two teams", []models.PolicyLimit{lim("team", 3, "max_gpus", "", 6), lim("team", 4, "max_gpus", "", 9)}, 9, "team", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInput(shanghai, tt.limits...)
			in.TeamIDs = []int64{3, 4}
			if tt.name == "other team and user ignored" {
				in.TeamIDs = []int64{3}
			}
			got, ok := in.Effective("max_gpus", "")
			if !ok || got.Value != tt.wantVal || got.Source.Scope != tt.wantFrom || got.Source.ScopeID != tt.wantID {
				t.Errorf("got %+v ok=%v, want %d from %s %d", got, ok, tt.wantVal, tt.wantFrom, tt.wantID)
			}
		})
	}
	t.Run("defaults keep the system limits", func(t *testing.T) {
		in := baseInput(shanghai)
		l, ok1 := in.Effective("max_length", "")
		a, ok2 := in.Effective("max_ahead", "")
		_, ok3 := in.Effective("max_gpus", "")
		if !ok1 || l.Value != 14*24*60 || l.Source.Scope != "default" || !ok2 || a.Value != 60*24*60 || ok3 {
			t.Errorf("got %+v %v, %+v %v, max_gpus set=%v", l, ok1, a, ok2, ok3)
		}
	})
}

// breachCase is one table row: a request, the limits, what is held, and the
// breaches expected as field → [limit, actual].
type breachCase struct {
	name   string
	loc    *time.Location
	now    string
	start  string
	end    string
	gpus   int
	limits []models.PolicyLimit
	held   []models.Booking // turned into holdings, as the store reads them
	loans  []models.QuotaLoan
	edit   func(*models.PolicyInput)
	want   map[string][2]int64
	source map[string]string // field → scope of the breach's source
}

func runBreachCases(t *testing.T, cases []breachCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			loc := tc.loc
			if loc == nil {
				loc = shanghai
			}
			in := baseInput(loc, tc.limits...)
			in.Held, in.Loans = models.HoldingsOf(tc.held), tc.loans
			if tc.edit != nil {
				tc.edit(&in)
			}
			req := models.NewBooking{UserID: 7, GPUIDs: gpus(tc.gpus), StartsAt: at(loc, tc.start), EndsAt: at(loc, tc.end)}
			got := models.EvaluatePolicy(req, in, at(loc, tc.now))
			if !in.NeedsUsage() { // the store then leaves Held and Loans out
				lean := in
				lean.Held, lean.Loans = nil, nil
				if leanGot := models.EvaluatePolicy(req, lean, at(loc, tc.now)); !reflect.DeepEqual(leanGot, got) {
					t.Errorf("NeedsUsage false, but without usage: %+v, with: %+v", leanGot, got)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d breaches %+v, want %v", len(got), got, tc.want)
			}
			for _, b := range got {
				w, ok := tc.want[b.Field()]
				if !ok || b.Limit != w[0] || b.Actual != w[1] {
					t.Errorf("breach %s: limit %d actual %d, want %v (present %v)", b.Field(), b.Limit, b.Actual, w, ok)
				}
				if s, ok := tc.source[b.Field()]; ok && b.Source.Scope != s {
					t.Errorf("breach %s: source %s, want %s", b.Field(), b.Source.Scope, s)
				}
				if b.Msg.Key == "" || b.Msg.Data["Limit"] == nil {
					t.Errorf("breach %s: message %v", b.Field(), b.Msg)
				}
			}
		})
	}
}

func booking(id int64, loc *time.Location, start, end string, n int) models.Booking {
	return models.Booking{ID: id, UserID: 7, GPUIDs: gpus(n), StartsAt: at(loc, start), EndsAt: at(loc, end), Status: models.StatusConfirmed}
}
