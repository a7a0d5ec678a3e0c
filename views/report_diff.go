package views

import (
	"sort"
	"strconv"
	"strings"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views/i18n"
)

// A recompute's diff is taken from the tables every surface prints — the
// "My usage" page and its CSV, the email's text and HTML parts, the
// preview, the team and cluster pages and their CSV — so that any cell a
// reader could see change is listed, and only those (issue 37: shares,
// efficiency n/a → 50 % and "used by" were missing when the diff had its
// own list of figures).

// surface is one printed table with, per row, what identifies the row in
// another computation of the week (keys) and whose figures it holds (users,
// 0 for the week's own). label is the column that names the row (-1: the
// table has one row).
type surface struct {
	Table
	keys  []string
	users []int64
	label int
}

// rowsOf makes a surface whose rows are named by column label and all
// belong to uid.
func rowsOf(tb Table, uid int64, label int) surface {
	s := surface{Table: tb, label: label}
	for _, r := range tb.Rows {
		k := ""
		if label >= 0 {
			k = r[label]
		}
		s.keys, s.users = append(s.keys, k), append(s.users, uid)
	}
	return s
}

// membersOf is a members table (a team's, the admins' users), a row per user.
func membersOf(tb Table, rows []models.UserReport) surface {
	s := surface{Table: tb, label: 1}
	for _, r := range rows {
		s.keys, s.users = append(s.keys, strconv.FormatInt(r.User.ID, 10)), append(s.users, r.User.ID)
	}
	return s
}

// userSurfaces is every table of u's own report as the surfaces print it:
// the figures, the sentence that explains the factor, the days (the
// email's per-day chart prints the same numbers) and the trend.
func userSurfaces(t *i18n.Translator, d *models.WeekData, u models.User) []surface {
	r := d.UserReport(u)
	sentence := Table{ID: "fairshare", Head: []string{t.T("report.fairshare")}, Rows: [][]string{{FairShareSentence(t, r)}}}
	return []surface{rowsOf(FiguresTable(t, r), u.ID, 0), rowsOf(sentence, u.ID, -1), rowsOf(DaysTable(t, r.Days), u.ID, 0),
		rowsOf(TrendTable(t, r.Trend), u.ID, 0)}
}

// weekSurfaces is every table of the week that is not one user's report:
// the admins' summary, its trend, top lists and users table, each team's
// members table ("members:" + the team's name), the heat map and the
// quiet hours every report advises.
func weekSurfaces(t *i18n.Translator, d *models.WeekData) []surface {
	s := d.ClusterSummary()
	trend := TrendTable(t, s.Trend)
	trend.ID = "cluster_trend"
	out := []surface{rowsOf(ClusterTable(t, s), 0, 0), rowsOf(trend, 0, 0), rowsOf(TopTable(t, "top_idle", s.TopIdle), 0, 0),
		rowsOf(TopTable(t, "top_unbooked", s.TopUnbooked), 0, 0)}
	users := d.ClusterUsers()
	out = append(out, membersOf(MembersTable(t, "users", users), users))
	seen := map[int64]bool{}
	for _, m := range d.Memberships {
		if seen[m.TeamID] {
			continue
		}
		seen[m.TeamID] = true
		rows := d.TeamTable(m.TeamID)
		out = append(out, membersOf(MembersTable(t, "members:"+m.TeamName, rows), rows))
	}
	heat := d.HeatMap()
	quiet := Table{ID: "quiet", Head: []string{t.T("recompute.quiet")}, Rows: [][]string{{QuietHours(t, d.QuietHours(heat, models.QuietSlots))}}}
	return append(out, rowsOf(HeatTable(t, heat), 0, 0), rowsOf(quiet, 0, -1))
}

// DiffWeeks is models.WeekDiff in t's language: every cell of every
// surface that reads differently in after than in before, users by name
// first, then the week's own tables. A week never frozen (before nil) was
// never shown as closed, so nothing is listed: it is frozen now.
func DiffWeeks(t *i18n.Translator, before, after *models.WeekData) []models.FigureChange {
	if before == nil {
		return nil
	}
	names := map[int64]models.User{}
	for _, d := range []*models.WeekData{before, after} {
		if d != nil {
			for _, u := range d.Users {
				names[u.ID] = u
			}
		}
	}
	users := make([]models.User, 0, len(names))
	for _, u := range names {
		users = append(users, u)
	}
	sort.Slice(users, func(i, j int) bool {
		if users[i].Name != users[j].Name {
			return users[i].Name < users[j].Name
		}
		return users[i].ID < users[j].ID
	})
	var out []models.FigureChange
	for _, u := range users {
		out = append(out, diffSurfaces(userSurfaces(t, before, u), userSurfaces(t, after, u), names)...)
	}
	return append(out, diffSurfaces(weekSurfaces(t, before), weekSurfaces(t, after), names)...)
}

// WeekDiff is DiffWeeks as the store takes it.
func WeekDiff(t *i18n.Translator) models.WeekDiff {
	return func(before, after *models.WeekData) []models.FigureChange { return DiffWeeks(t, before, after) }
}

// diffTables names the tables of a diff; a team's is "members:" + its name.
var diffTables = map[string]string{"figures": "report.figures_heading", "fairshare": "report.fairshare", "days": "report.days_heading",
	"trend": "report.trend_heading", "cluster": "report.cluster_title", "cluster_trend": "recompute.cluster_trend",
	"top_idle": "report.top_idle", "top_unbooked": "report.top_unbooked", "users": "report.all_users", "heat": "report.heat_heading",
	"quiet": "recompute.quiet"}

// DiffTableTitle is the title of a change's table in t's language.
func DiffTableTitle(t *i18n.Translator, id string) string {
	if team, ok := strings.CutPrefix(id, "members:"); ok {
		return t.T("report.team_title", "Team", team)
	}
	if key, ok := diffTables[id]; ok {
		return t.T(key)
	}
	return id
}

// DiffFigure names a change's cell: the figure, or its row and column
// ("Mon 12-01 · GPU-hours busy").
func DiffFigure(c models.FigureChange) string {
	if c.Row != "" {
		return c.Row + " · " + c.Figure
	}
	return c.Figure
}

// DiffWho is whose figure changed: the user, or the week's own.
func DiffWho(t *i18n.Translator, c models.FigureChange) string {
	if c.UserID == 0 {
		return t.T("recompute.week")
	}
	return c.Name
}

// DiffCell is a cell as the diff shows it: "—" where there was none.
func DiffCell(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
