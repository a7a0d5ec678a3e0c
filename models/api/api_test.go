package api_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/api"
)

// TestEnumsAreTheDomains: every enum the document lists is the set of
// values the domain writes into that field, so a value renamed in models
// fails here instead of surprising a client.
func TestEnumsAreTheDomains(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		typ   any
		field string
		want  []string
	}{
		{api.Booking{}, "Kind", []string{models.KindStandard, models.KindPriority}},
		{api.Booking{}, "Status", []string{models.StatusConfirmed, models.StatusCancelled}},
		{api.Booking{}, "Phase", []string{string(models.PhaseUpcoming), string(models.PhaseActive), string(models.PhasePast), string(models.PhaseCancelled)}},
		{api.Request{}, "Status", []string{models.RequestPending, models.RequestApproved, models.RequestDenied, models.RequestExpired, models.RequestWithdrawn}},
		{api.Limit{}, "Period", []string{models.PeriodAll, models.PeriodPeak, models.PeriodOffPeak}},
		{api.Limit{}, "Unit", []string{api.UnitGPUs, api.UnitMinutes, api.UnitGPUMinutes}},
		{api.Limit{}, "Source", []string{models.ScopeDefault, models.ScopeGlobal, models.ScopeTeam, models.ScopeUser}},
		{api.ErrorDetail{}, "Code", []string{models.EINVALID, models.EPOLICY, models.ENOTFOUND, models.ECONFLICT, models.EFORBIDDEN,
			models.EUNAUTHORIZED, models.ETOOMANY, models.EINTERNAL}},
	} {
		typ := reflect.TypeOf(tt.typ)
		t.Run(typ.Name()+"."+tt.field, func(t *testing.T) {
			f, ok := typ.FieldByName(tt.field)
			if !ok {
				t.Fatalf("no field %s", tt.field)
			}
			if got, want := f.Tag.Get("enum"), strings.Join(tt.want, ","); got != want {
				t.Errorf("enum = %q, want %q", got, want)
			}
		})
	}
}

// TestQueryValues: the client's queries carry times in UTC to the second
// and leave optional parameters out when unset.
func TestQueryValues(t *testing.T) {
	t.Parallel()
	cst := time.FixedZone("CST", 8*3600)
	at := time.Date(2031, 3, 10, 14, 0, 0, 0, cst)
	for _, tt := range []struct {
		name string
		got  string
		want string
	}{
		{"bookings", api.BookingsQuery{From: at, To: at.Add(time.Hour)}.Values().Encode(), "from=2031-03-10T06%3A00%3A00Z&to=2031-03-10T07%3A00%3A00Z"},
		{"bookings, mine of one GPU", api.BookingsQuery{From: at, To: at, GPU: 3, Mine: true}.Values().Encode(),
			"from=2031-03-10T06%3A00%3A00Z&gpu=3&mine=true&to=2031-03-10T06%3A00%3A00Z"},
		{"slots", api.SlotsQuery{GPUs: 2, Hours: 1.5}.Values().Encode(), "gpus=2&hours=1.5"},
		{"slots, zero time in a zone left out", api.SlotsQuery{GPUs: 1, Hours: 4, Node: "n", After: time.Time{}.In(cst)}.Values().Encode(), "gpus=1&hours=4&node=n"},
		{"slots, all", api.SlotsQuery{GPUs: 1, Hours: 0.25, Model: "A100", Node: "n", After: at}.Values().Encode(),
			"after=2031-03-10T06%3A00%3A00Z&gpus=1&hours=0.25&model=A100&node=n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got  %s\nwant %s", tt.got, tt.want)
			}
		})
	}
}

func TestFieldNames(t *testing.T) {
	t.Parallel()
	if got, want := strings.Join(api.FieldNames(api.NewBooking{}), " "), "gpu_ids starts_at ends_at note"; got != want {
		t.Errorf("FieldNames(NewBooking) = %s, want %s", got, want)
	}
	if got, want := strings.Join(api.FieldNames(api.NewRequest{}), " "), "gpu_ids starts_at ends_at note purpose urgency plan give_back preempt"; got != want {
		t.Errorf("FieldNames(NewRequest) = %s, want %s", got, want)
	}
}

func TestPath(t *testing.T) {
	t.Parallel()
	if got, want := api.Path(api.PathExtend, 7), "/bookings/7/extend"; got != want {
		t.Errorf("Path = %s, want %s", got, want)
	}
}
