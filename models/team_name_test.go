package models

import "testing"

func TestTeamNamed(t *testing.T) {
	teams := []Team{{ID: 1, Name: "Vision"}, {ID: 2, Name: "NLP"}, {ID: 3, Name: "Équipe"}}
	for _, tc := range []struct {
		name   string
		wantID int64
		wantOK bool
	}{
		{"Vision", 1, true}, {"vision", 1, true}, {"VISION", 1, true}, {"nlp", 2, true}, {"équipe", 3, true},
		{"vision2", 0, false}, {"", 0, false},
	} {
		got, ok := TeamNamed(teams, tc.name)
		if got.ID != tc.wantID || ok != tc.wantOK {
			t.Errorf("TeamNamed(%q) = %d %v, want %d %v", tc.name, got.ID, ok, tc.wantID, tc.wantOK)
		}
	}
}
