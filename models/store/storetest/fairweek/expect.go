package fairweek

import (
	"fmt"
	"math"

	"github.com/gpubook/gpubook/models"
)

// Figures is the table of Build worked out by hand, as the store's
// WeekData.WeekFigures gives it: fay's night is 9 h in the DST week and
// 8 h otherwise.
func Figures(id IDs, dst bool) map[int64]models.Figures {
	night := int64(8)
	if dst {
		night = 9
	}
	return map[int64]models.Figures{
		id.Ann: {BookedSec: 9 * 3600, BusyMin: 420, UtilMin: 420, UtilTenths: 255600, LowIntensity: 1},
		id.Ben: {BookedSec: 5 * 3600, BusyMin: 120, NoUserDataMin: 60, GivenBackSec: 6 * 3600, NoShows: 2, UtilMin: 180, UtilTenths: 138000},
		id.Cat: {BookedSec: 4 * 3600, HeldIdleMin: 120, NoShows: 2, UtilMin: 180, UtilTenths: 36000},
		id.Dan: {UnbookedMin: 90, LateCancels: 1, LateCancelSec: 3600},
		id.Eve: {BookedSec: 12 * 3600, BusyMin: 62, UnbookedMin: 180, NoShows: 1, UtilMin: 62, UtilTenths: 37200},
		id.Fay: {BookedSec: night * 3600, BusyMin: night * 60, UnbookedMin: 30, UtilMin: night * 60, UtilTenths: night * 60000},
	}
}

// hand is one user's week as worked out from the table of Build, in hours.
type hand struct {
	booked, busy, heldIdle, givenBack, unbooked float64
	noUserDataMin, noShows                      int
	usedBy                                      string
	days                                        [7][2]float64 // booked, busy
	unbookedDays                                [7]float64
	lateCancels                                 int
	lateCancelDays                              [7]float64 // GPU-hours cancelled late
	meanUtil                                    string     // of the booked GPU-minutes
	lowIntensity                                int
	team, teamRank                              string // "" for the teamless
	clusterRank                                 string
}

func hands(dst bool) map[string]hand {
	n := 8.0
	if dst {
		n = 9
	}
	return map[string]hand{
		"ann": {booked: 9, busy: 7, days: [7][2]float64{0: {3, 3}, 1: {4, 2}, 6: {2, 2}}, meanUtil: "60.9%", lowIntensity: 1,
			team: "T1", teamRank: "1 of 2 by busy GPU-hours", clusterRank: "2 of 6 by busy GPU-hours"},
		"ben": {booked: 5, busy: 2, meanUtil: "76.7%", noUserDataMin: 60, givenBack: 6, noShows: 2, days: [7][2]float64{2: {2, 0}, 3: {2, 2}, 4: {1, 0}},
			team: "T1", teamRank: "2 of 2 by busy GPU-hours", clusterRank: "3 of 6 by busy GPU-hours"},
		"cat": {booked: 4, heldIdle: 2, meanUtil: "20.0%", noShows: 2, usedBy: "dan 1.0 h", days: [7][2]float64{2: {2, 0}, 3: {2, 0}},
			team: "T2", teamRank: "1 of 2 by busy GPU-hours", clusterRank: "5 of 6 by busy GPU-hours"},
		"dan": {meanUtil: "n/a", unbooked: 1.5, unbookedDays: [7]float64{2: 1, 4: 0.5}, lateCancels: 1, lateCancelDays: [7]float64{5: 1},
			team: "T2", teamRank: "1 of 2 by busy GPU-hours", clusterRank: "5 of 6 by busy GPU-hours"},
		"eve": {booked: 12, busy: 62.0 / 60, meanUtil: "60.0%", noShows: 1, unbooked: 3, unbookedDays: [7]float64{4: 3},
			days: [7][2]float64{5: {10, 50.0 / 60}, 6: {2, 12.0 / 60}}, clusterRank: "4 of 6 by busy GPU-hours"},
		"fay": {booked: n, busy: n, meanUtil: "100.0%", unbooked: 0.5, days: [7][2]float64{5: {2, 2}, 6: {n - 2, n - 2}}, unbookedDays: [7]float64{4: 0.5},
			clusterRank: "1 of 6 by busy GPU-hours"},
	}
}

// Table is one report table as every surface prints it, in English: the
// page's table, the CSV export, the text email and preview, the HTML email.
type Table struct {
	Head []string
	Rows [][]string
}

// Expected is what every surface must show for the fixture's week.
type Expected struct {
	Week models.Week
	// Figures, Days and Trend are each user's tables, by name.
	Figures, Days, Trend map[string]Table
	// Team is each team's members table, by team name.
	Team map[string]Table
	// Cluster and Users are the admins' summary and user table.
	Cluster, Users Table
	// Sentence is each user's sentence that explains the fair-share factor.
	Sentence map[string]string
}

// The tables' headers, in English.
var (
	FiguresHead = []string{"Figure", "Value"}
	DaysHead    = []string{"Day", "GPU-hours booked", "GPU-hours busy", "Efficiency"}
	TrendHead   = []string{"Week", "GPU-hours booked", "GPU-hours busy", "Efficiency", "GPU-hours used without a booking"}
	MembersHead = []string{"Rank", "User", "GPU-hours booked", "GPU-hours busy", "Efficiency", MeanUtilLabel, "Idle GPU-hours in bookings",
		"… of which held idle (memory held, GPU not working)", "GPU-hours used without a booking", "No-shows (bookings hardly used)",
		"GPU-hours cancelled late (charged as idle)", LowLabel, "Share of booked GPU-hours", "Fair-share factor"}
	// The labels of the intensity figures at the default level.
	MeanUtilLabel = "Mean utilisation of booked GPU-minutes"
	LowLabel      = "Low-intensity bookings (busy minutes averaging under 25%)"
)

func hours(h float64) string { return fmt.Sprintf("%.1f", h) }
func pct(x float64) string   { return fmt.Sprintf("%.0f%%", x*100) }

func sum(xs [7]float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

func eff(booked, busy float64) string {
	if booked == 0 {
		return "n/a"
	}
	return pct(busy / booked)
}

// Expect works out every table of case c at unbooked weight w and the
// idle weight that goes with it (the default 2, or w when w is larger).
// The fair-share factor is Slurm's 2^(−U/S) of docs/reports.md: every user
// is active and the three parts (T1, T2, the teamless) weigh 1 each, so S
// = 1/6; U is the user's charged hours (busy booked + idle weight × (idle
// booked + cancelled late) + w × unbooked, per day, decayed by
// 2^(−age/7 d) from the middle of the day to the week's end) over
// everyone's; the three weeks before are empty. In the normal week (w 1.5,
// idle 2), for example, dan's Saturday charges 2 × 1 h cancelled late and
// his Wednesday 1.5 × 1 h unbooked; eve's Saturday no-show 50/60 h busy
// + 2 × (10 − 50/60) h idle = 19.17 h before the decay (10 h when every
// booked hour cost 1), more than the 15 h of the same 10 h used without a
// booking.
func Expect(c Case, weight float64) Expected {
	w := c.Parse()
	hs := hands(c.DST)
	idle := max(models.DefaultIdleWeight, weight)
	var totalBooked, totalBusy, totalCharged float64
	charged := map[string]float64{}
	for name, h := range hs {
		totalBooked += h.booked
		totalBusy += h.busy
		for i, s := range w.Days() {
			mid := s.Start.Add(s.End.Sub(s.Start) / 2)
			decay := math.Exp2(-w.End.Sub(mid).Hours() / 24 / 7)
			booked, busy := h.days[i][0], h.days[i][1]
			charged[name] += (busy + idle*(booked-busy+h.lateCancelDays[i]) + weight*h.unbookedDays[i]) * decay
		}
		totalCharged += charged[name]
	}
	factor := func(name string) string { return fmt.Sprintf("%.2f", math.Exp2(-charged[name]/totalCharged*6)) }
	e := Expected{Week: w, Figures: map[string]Table{}, Days: map[string]Table{}, Trend: map[string]Table{}, Team: map[string]Table{},
		Sentence: map[string]string{}}
	weekdays := []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
	member := func(rank, name string) []string {
		h := hs[name]
		return []string{rank, name, hours(h.booked), hours(h.busy), eff(h.booked, h.busy), h.meanUtil, hours(h.booked - h.busy), hours(h.heldIdle),
			hours(h.unbooked), fmt.Sprint(h.noShows), hours(sum(h.lateCancelDays)), fmt.Sprint(h.lowIntensity), pct(h.booked / totalBooked), factor(name)}
	}
	for _, name := range Names {
		h := hs[name]
		used := h.usedBy
		if used == "" {
			used = "nobody"
		}
		rows := [][]string{
			{"GPU-hours booked", hours(h.booked)},
			{"GPU-hours busy", hours(h.busy)},
			{"Efficiency", eff(h.booked, h.busy)},
			{"Idle GPU-hours in bookings", hours(h.booked - h.busy)},
			{"… of which held idle (memory held, GPU not working)", hours(h.heldIdle)},
			{MeanUtilLabel, h.meanUtil},
			{LowLabel, fmt.Sprint(h.lowIntensity)},
			{"Booked minutes without per-user data", fmt.Sprintf("no per-user data for %d minutes", h.noUserDataMin)},
			{"Used by others on your bookings", used},
			{"GPU-hours given back early", hours(h.givenBack)},
			{"… of which released as idle", "0.0"},
			{"No-shows (bookings hardly used)", fmt.Sprint(h.noShows)},
			{"Bookings cancelled late", fmt.Sprint(h.lateCancels)},
			{"GPU-hours cancelled late (charged as idle)", hours(sum(h.lateCancelDays))},
			{"GPU-hours used without a booking", hours(h.unbooked)},
			{"Priority requests made", "0"},
			{"Priority requests approved", "0"},
			{"Bookings pre-empted", "0"},
			{"Share of booked GPU-hours", pct(h.booked / totalBooked)},
			{"Share of busy GPU-hours", pct(h.busy / totalBusy)},
			{"Entitled share", "17%"},
			{"Fair-share factor", factor(name)},
		}
		if h.team != "" {
			rows = append(rows, []string{"Rank", h.teamRank + " in " + h.team})
		}
		e.Figures[name] = Table{Head: FiguresHead, Rows: rows}
		e.Sentence[name] = fmt.Sprintf("Your fair-share factor is %s: 2^(−U/S), where U = %s is your part of the cluster's recent charged "+
			"GPU-hours (booked hours in which you worked count once, hours used without a booking %v times, booked hours left idle "+
			"and hours cancelled late %v times; each week older counts half) and S = 17%% "+
			"your entitled share — 1 means unused, 0.5 exactly your share, lower means more than your share.",
			factor(name), pct(charged[name]/totalCharged), weight, idle)
		days := Table{Head: DaysHead}
		for i, s := range w.Days() {
			days.Rows = append(days.Rows, []string{weekdays[i] + " " + s.Start.Format("01-02"), hours(h.days[i][0]), hours(h.days[i][1]),
				eff(h.days[i][0], h.days[i][1])})
		}
		e.Days[name] = days
		trend := Table{Head: TrendHead}
		for i := 3; i >= 1; i-- {
			trend.Rows = append(trend.Rows, []string{w.Prev(i).String(), "0.0", "0.0", "n/a", "0.0"})
		}
		trend.Rows = append(trend.Rows, []string{w.String(), hours(h.booked), hours(h.busy), eff(h.booked, h.busy), hours(h.unbooked)})
		e.Trend[name] = trend
	}
	e.Team["T1"] = Table{Head: MembersHead, Rows: [][]string{member(hs["ann"].teamRank, "ann"), member(hs["ben"].teamRank, "ben")}}
	e.Team["T2"] = Table{Head: MembersHead, Rows: [][]string{member(hs["cat"].teamRank, "cat"), member(hs["dan"].teamRank, "dan")}}
	e.Users = Table{Head: MembersHead}
	for _, name := range []string{"fay", "ann", "ben", "eve", "cat", "dan"} {
		e.Users.Rows = append(e.Users.Rows, member(hs[name].clusterRank, name))
	}
	e.Cluster = clusterTable(w, c.DST, totalBooked, totalBusy)
	return e
}

// clusterTable: 6 GPUs over the week's hours (169 in the DST week); busy
// anywhere is ann 360 + her 60 at 6 % + ben 120 + ben's 60 without per-user data + dan on
// cat's booking 60 + eve 180 + dan and fay's shared 30 + fay's night (cat's
// 0 % is not busy) + eve's 50 and 12 minutes on g0 at the weekend;
// unbooked is dan 60 + eve 180 + the shared half hour once = 4.5 h; the
// no-shows are ben's two, cat's two and eve's Saturday; dan cancelled one
// booking late, 1 h of it charged.
func clusterTable(w models.Week, dst bool, booked, busy float64) Table {
	capacity, night := 6*168.0, 8.0
	if dst {
		capacity, night = 6*169.0, 9
	}
	anywhere := (360 + 60 + 120 + 60 + 60 + 180 + 30 + 60*night + 50 + 12) / 60
	// The booked minutes with a record: ann 420, ben 180, cat 180, eve 62
	// and fay's night (Build); their utilisation in tenths of a percent.
	utilMin, utilTenths := 420+180+180+62+60*night, 255600+138000+36000+37200+60000*night
	return Table{Head: FiguresHead, Rows: [][]string{
		{"GPUs in service", "6"},
		{"GPU-hours available", hours(capacity)},
		{"GPU-hours booked", hours(booked)},
		{"GPU-hours busy", hours(busy)},
		{"Efficiency", eff(booked, busy)},
		{"… of which held idle (memory held, GPU not working)", "2.0"},
		{MeanUtilLabel, fmt.Sprintf("%.1f%%", utilTenths/10/utilMin)},
		{LowLabel, "1"},
		{"GPU-hours busy in the cluster (booked or not)", hours(anywhere)},
		{"Utilisation", pct(anywhere / capacity)},
		{"Booked share of capacity", pct(booked / capacity)},
		{"GPU-hours used without a booking (each GPU-minute once)", "4.5"},
		{"GPU-hours used by Unix accounts with no gpubook user", "1.0"},
		{"GPU-hours given back early", "6.0"},
		{"No-shows (bookings hardly used)", "5"},
		{"Bookings cancelled late", "1"},
		{"GPU-hours cancelled late (charged as idle)", "1.0"},
		{"Pending priority requests", "0"},
	}}
}
