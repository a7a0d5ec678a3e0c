package models

import "testing"

func TestQuietestWithoutLoad(t *testing.T) {
	var empty HeatMap
	if got := empty.Quietest(3); len(got) != 0 {
		t.Errorf("quietest of an empty map = %v, want none (nothing measured, nothing to suggest)", got)
	}
	var m HeatMap
	m.Load[0][3], m.Load[2][5], m.Max = 0.5, 0.2, 0.5
	got := m.Quietest(2)
	want := []HeatCell{{0, 0, 0}, {0, 1, 0}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %v, want %v", got, want)
	}
}
