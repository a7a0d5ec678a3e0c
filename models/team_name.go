package models

import "strings"

// TeamNameKey is the form in which team names are compared: "Vision",
// "vision" and "VISION" are one team, whether an admin types it or an IdP
// group names it. The database's unique index on lower(name) holds the
// same rule.
func TeamNameKey(name string) string { return strings.ToLower(name) }

// SameTeamName reports whether a and b name one team.
func SameTeamName(a, b string) bool { return TeamNameKey(a) == TeamNameKey(b) }

// TeamNamed finds the team called name, ignoring case.
func TeamNamed(teams []Team, name string) (Team, bool) {
	for _, t := range teams {
		if SameTeamName(t.Name, name) {
			return t, true
		}
	}
	return Team{}, false
}

// ErrTeamNameTaken refuses a new team whose name differs from an
// existing one only in case.
func ErrTeamNameTaken(existing string) *Error {
	return NewError(ECONFLICT, M("err.team_name_taken", "Name", existing))
}
