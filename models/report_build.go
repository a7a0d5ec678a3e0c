package models

import (
	"sort"
	"time"
)

// UserReport is one user's weekly report, as the email, the "My usage"
// page and the CSV show it. Every number in it comes from Figures and the
// functions in this package, so the three can never disagree.
type UserReport struct {
	Week    Week
	AsOf    time.Time
	User    User
	Figures Figures
	Days    []DayPoint
	Trend   []TrendPoint
	// ShareBooked and ShareBusy are the user's part of the cluster's booked
	// and busy GPU-hours this week; Entitled is the part they are due.
	ShareBooked, ShareBusy, Entitled float64
	// UsageShare is the user's part of the decayed usage (Slurm's U).
	UsageShare float64
	FairShare  float64
	TeamID     int64
	TeamName   string
	// Rank is "Rank of RankOf by busy GPU-hours": within TeamName on a
	// user's own report and a team's table (RankOf is then TeamSize), in
	// the whole cluster on the admins' table. 0 without a team.
	Rank, RankOf int
	TeamSize     int
	// UnbookedWeight and IdleWeight are what an unbooked GPU-hour and an
	// idle booked one weighed in UsageShare (the rules' weights), for the
	// sentence that explains the factor.
	UnbookedWeight, IdleWeight float64
	// LowIntensityPct is the level under which a booking's busy minutes
	// made it low-intensity (the rules'), for the figure's label.
	LowIntensityPct float64
	// UsedBy are the other users whose processes ran on this user's
	// bookings: their unbooked use, shown so that the booker sees it.
	UsedBy []UserMinutes
	Heat   HeatMap
	// Quiet is the advice of when to book: the coming week's hours with
	// the most free GPUs.
	Quiet []QuietSlot
}

// Active reports whether the long report has anything to say.
func (r UserReport) Active() bool { return r.Figures.Active() }

// share is part/whole, 0 when the whole is 0.
func share(part, whole float64) float64 {
	if whole == 0 {
		return 0
	}
	return part / whole
}

// UserReport builds the report of user u from the week's data.
func (d *WeekData) UserReport(u User) UserReport {
	t := d.totals()
	r := UserReport{Week: d.Week, AsOf: d.AsOf, User: u, Figures: d.WeekFigures(u.ID),
		Days: d.DaysOf(u.ID), Trend: d.Trend(u.ID), Heat: t.heat, Quiet: t.quiet, UsedBy: d.UsedBy[u.ID],
		UnbookedWeight: d.Rules.OrDefault().UnbookedWeight, IdleWeight: d.Rules.OrDefault().IdleWeight,
		LowIntensityPct: d.Rules.OrDefault().LowIntensityPct}
	r.ShareBooked = share(r.Figures.BookedHours(), t.all.BookedHours())
	r.ShareBusy = share(r.Figures.BusyHours(), t.all.BusyHours())
	r.Entitled = t.entitled[u.ID]
	r.UsageShare = t.usage[u.ID]
	r.FairShare = FairShareFactor(r.UsageShare, r.Entitled)
	if m, ok := t.firstTeam[u.ID]; ok {
		ids := t.members[m.TeamID]
		r.TeamID, r.TeamName, r.TeamSize, r.RankOf = m.TeamID, m.TeamName, len(ids), len(ids)
		r.Rank = t.teamRank[m.TeamID][u.ID]
	}
	return r
}

// weekTotals are the cluster-wide numbers every user's report is measured
// against; the weekly run builds hundreds of reports from one WeekData, so
// they are worked out once (WeekData is not changed after the store made it).
type weekTotals struct {
	all      Figures
	entitled map[int64]float64
	usage    map[int64]float64
	heat     HeatMap
	quiet    []QuietSlot
	// firstTeam is each user's team by name (the one their own report
	// ranks them in), members each team's user IDs in membership order,
	// and teamRank each team's ranks by busy GPU-hours.
	firstTeam map[int64]Membership
	members   map[int64][]int64
	teamRank  map[int64]map[int64]int
}

func (d *WeekData) totals() *weekTotals {
	d.totalsOnce.Do(func() {
		d.totalsVal = weekTotals{all: d.clusterWeek(), entitled: EntitledShares(d.Users, d.Memberships, d.TeamWeights, d.activeUsers()),
			usage: d.usageShares(), heat: d.HeatMap()}
		d.totalsVal.quiet = d.QuietHours(d.totalsVal.heat, QuietSlots)
		d.teamTotals(&d.totalsVal)
	})
	return &d.totalsVal
}

// teamTotals fills t's teams: a table of every user's report asks for
// each user's team and rank, and a scan of the memberships per user made
// the admins' table of 500 users quadratic.
func (d *WeekData) teamTotals(t *weekTotals) {
	t.firstTeam, t.members, t.teamRank = map[int64]Membership{}, map[int64][]int64{}, map[int64]map[int64]int{}
	for _, m := range d.Memberships {
		if best, ok := t.firstTeam[m.UserID]; !ok || m.TeamName < best.TeamName {
			t.firstTeam[m.UserID] = m
		}
		t.members[m.TeamID] = append(t.members[m.TeamID], m.UserID)
	}
	for team, ids := range t.members {
		t.teamRank[team] = Rank(ids, d.busyHours)
	}
}

// busyHours is uid's busy GPU-hours of the week, the figure ranks order by.
func (d *WeekData) busyHours(uid int64) float64 { return d.WeekFigures(uid).BusyHours() }

// activeUsers are the users with booked or unbooked use, or hours
// cancelled late, in any span: the members a team's entitled share is
// split among (a user charged for hours must have a share of them).
func (d *WeekData) activeUsers() map[int64]bool {
	out := map[int64]bool{}
	for uid, figs := range d.ByUser {
		for _, f := range figs {
			if f.BookedSec > 0 || f.UnbookedMin > 0 || f.LateCancelSec > 0 {
				out[uid] = true
			}
		}
	}
	return out
}

// usageShares is every user's part of the cluster's decayed usage: each
// user's charged hours (Figures.ChargedHours) over the sum of everyone's.
func (d *WeekData) usageShares() map[int64]float64 {
	raw := map[int64]float64{}
	total := 0.0
	for uid, figs := range d.ByUser {
		raw[uid] = DecayedUsage(d.Spans, figs, d.Week.End, d.Rules)
		total += raw[uid]
	}
	for uid, v := range raw {
		raw[uid] = share(v, total)
	}
	return raw
}

// TeamTable is a team lead's view: every member's report, by rank.
func (d *WeekData) TeamTable(teamID int64) []UserReport {
	byID := map[int64]User{}
	for _, u := range d.Users {
		byID[u.ID] = u
	}
	t := d.totals()
	ids := t.members[teamID]
	var rows []UserReport
	for _, id := range ids {
		r := d.UserReport(byID[id])
		r.TeamID, r.RankOf = teamID, len(ids)
		r.Rank = t.teamRank[teamID][id]
		rows = append(rows, r)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Rank != rows[j].Rank {
			return rows[i].Rank < rows[j].Rank
		}
		return rows[i].User.Name < rows[j].User.Name
	})
	return rows
}

// ClusterUsers is every user's report for the admins' table, ranked in the
// whole cluster by busy GPU-hours (Rank of RankOf), heaviest first.
func (d *WeekData) ClusterUsers() []UserReport {
	ids := make([]int64, len(d.Users))
	for i, u := range d.Users {
		ids[i] = u.ID
	}
	ranks := Rank(ids, d.busyHours)
	rows := make([]UserReport, 0, len(d.Users))
	for _, u := range d.Users {
		r := d.UserReport(u)
		r.Rank, r.RankOf = ranks[u.ID], len(ids)
		rows = append(rows, r)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Rank < rows[j].Rank })
	return rows
}

// UserHours is one line of a "top" list.
type UserHours struct {
	User  User
	Hours float64
}

// ClusterSummary is the admins' view of the week.
type ClusterSummary struct {
	Week             Week
	GPUCount         int
	CapacityHours    float64 // GPUs × hours of the week so far
	Booked           Figures // every user's figures summed
	ClusterBusyHours float64 // busy GPU-hours, booked or not
	// UnbookedHours is GPU-hours used without a booking, each GPU-minute
	// once however many users shared it (Booked.UnbookedHours would count
	// it once per user).
	UnbookedHours            float64
	Utilisation, BookedShare float64 // of the capacity
	TopIdle, TopUnbooked     []UserHours
	PendingRequests          int64
	Trend                    []TrendPoint
	// Unmapped is the use by Unix accounts with no gpubook user, by name.
	Unmapped        []UnixMinutes
	LowIntensityPct float64
}

// TopN is how many users the summary's "top" lists show.
const TopN = 5

// ClusterSummary builds the admins' view.
func (d *WeekData) ClusterSummary() ClusterSummary {
	s := ClusterSummary{Week: d.Week, GPUCount: d.GPUCount, Booked: d.clusterWeek(), PendingRequests: d.PendingRequests}
	for i := 0; i < ReportDays; i++ {
		s.CapacityHours += d.Spans[i].End.Sub(d.Spans[i].Start).Hours() * float64(d.GPUCount)
	}
	s.ClusterBusyHours = float64(sumDays(d.ClusterBusyMin)) / 60
	s.UnbookedHours = float64(sumDays(d.ClusterUnbookedMin)) / 60
	s.Utilisation = share(s.ClusterBusyHours, s.CapacityHours)
	s.BookedShare = share(s.Booked.BookedHours(), s.CapacityHours)
	s.TopIdle = d.top(func(f Figures) float64 { return f.IdleHours() })
	s.TopUnbooked = d.top(func(f Figures) float64 { return f.UnbookedHours() })
	s.Trend = d.clusterTrend()
	s.Unmapped, s.LowIntensityPct = d.Unmapped, d.Rules.OrDefault().LowIntensityPct
	return s
}

func (d *WeekData) top(value func(Figures) float64) []UserHours {
	var out []UserHours
	for _, u := range d.Users {
		if v := value(d.WeekFigures(u.ID)); v > 0 {
			out = append(out, UserHours{User: u, Hours: v})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Hours > out[j].Hours })
	return out[:min(len(out), TopN)]
}

func (d *WeekData) clusterTrend() []TrendPoint {
	out := make([]TrendPoint, TrendWeeks)
	for uid := range d.ByUser {
		for i, p := range d.Trend(uid) {
			out[i].Week, out[i].Figures = p.Week, out[i].Figures.Add(p.Figures)
		}
	}
	for i := range out {
		out[i].Week = d.Week.Prev(TrendWeeks - 1 - i)
	}
	return out
}

// LeadOf lists the teams uid leads, for links to their team pages.
func (d *WeekData) LeadOf(uid int64) []Membership {
	var out []Membership
	for _, m := range d.Memberships {
		if m.UserID == uid && m.Role == RoleLead {
			out = append(out, m)
		}
	}
	return out
}

// CanSeeTeamUsage reports whether u may read team teamID's usage table:
// its leads and admins. mine are u's memberships.
func CanSeeTeamUsage(u *User, teamID int64, mine []Membership) bool {
	if u == nil {
		return false
	}
	if u.IsAdmin {
		return true
	}
	for _, m := range mine {
		if m.TeamID == teamID && m.UserID == u.ID && m.Role == RoleLead {
			return true
		}
	}
	return false
}
