package views

import "github.com/gpubook/gpubook/models"

// diffSurfaces pairs the tables of two computations by ID and lists their
// differing cells; a table, row or column on one side only is compared
// with nothing ("").
func diffSurfaces(before, after []surface, names map[int64]models.User) []models.FigureChange {
	was := make(map[string]surface, len(before))
	for _, s := range before {
		was[s.ID] = s
	}
	var out []models.FigureChange
	done := map[string]bool{}
	for _, a := range after {
		done[a.ID] = true
		b, ok := was[a.ID]
		if !ok {
			b = surface{Table: Table{ID: a.ID}, label: a.label}
		}
		out = append(out, diffTable(b, a, names)...)
	}
	for _, b := range before {
		if !done[b.ID] {
			out = append(out, diffTable(b, surface{Table: Table{ID: b.ID}, label: b.label}, names)...)
		}
	}
	return out
}

// diffTable lists the cells of a that differ from the cell of b in the
// row with the same key and the column with the same head, then the
// cells of b's rows that a no longer has. The column that names a row is
// not compared: the row's key says which row it is.
func diffTable(b, a surface, names map[int64]models.User) []models.FigureChange {
	rowAt := make(map[string]int, len(b.keys))
	for i, k := range b.keys {
		rowAt[k] = i
	}
	colAt := make(map[string]int, len(b.Head))
	for j, h := range b.Head {
		colAt[h] = j
	}
	var out []models.FigureChange
	emit := func(s surface, i, j int, before, after string) {
		c := models.FigureChange{UserID: s.users[i], Name: names[s.users[i]].Name, Table: s.ID, Figure: s.Head[j], Before: before, After: after}
		switch {
		case s.label == 0 && len(s.Head) == 2: // a figure per row: its label names it
			c.Figure = s.Rows[i][0]
		case s.label == 0:
			c.Row = s.Rows[i][0]
		}
		out = append(out, c)
	}
	seen := make(map[string]bool, len(a.keys))
	for i, k := range a.keys {
		seen[k] = true
		bi, inB := rowAt[k]
		for j, h := range a.Head {
			if j == a.label {
				continue
			}
			bv := ""
			if bj, ok := colAt[h]; inB && ok {
				bv = b.Rows[bi][bj]
			}
			if av := a.Rows[i][j]; av != bv {
				emit(a, i, j, bv, av)
			}
		}
	}
	for i, k := range b.keys {
		if seen[k] {
			continue
		}
		for j := range b.Head {
			if bv := b.Rows[i][j]; j != b.label && bv != "" {
				emit(b, i, j, bv, "")
			}
		}
	}
	return out
}
