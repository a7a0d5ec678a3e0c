package models

import (
	"strings"
	"time"
	"unicode"
)

// importColumns are the columns an import row is read in, with the names a
// spreadsheet's header may give them ("User", "E-mail", "GPU indexes",
// "Start time", 开始 …), compared without case, spaces, dashes or
// underscores.
var importColumns = []struct {
	name    string
	aliases []string
}{
	{"email", []string{"email", "user", "useremail", "mail", "emailaddress", "username", "who", "邮箱", "用户", "用户邮箱"}},
	{"node", []string{"node", "nodename", "host", "hostname", "server", "machine", "节点", "服务器"}},
	{"gpus", []string{"gpus", "gpu", "gpuindexes", "gpuindex", "gpuids", "gpuid", "indexes", "cards", "devices", "显卡"}},
	{"start", []string{"start", "starttime", "from", "begin", "begins", "starts", "开始", "开始时间"}},
	{"end", []string{"end", "endtime", "to", "until", "ends", "finish", "结束", "结束时间"}},
	{"note", []string{"note", "notes", "comment", "comments", "description", "purpose", "remark", "备注", "说明"}},
}

// importColumnOf is the column a header cell names, or -1.
func importColumnOf(cell string) int {
	key := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '-' || r == '_' || r == '.' || r == '\uFEFF' {
			return -1
		}
		return unicode.ToLower(r)
	}, cell)
	for i, c := range importColumns {
		for _, a := range c.aliases {
			if key == a {
				return i
			}
		}
	}
	return -1
}

// importHeader tells whether the file's first record is a header, which a
// spreadsheet export puts there ("user,node,gpus,start,end,note"), and
// checks it: each cell must name a column, none twice, and the five
// columns without which no row is a booking must be there; a header that
// fails is an error for the whole file, whose rows cannot be read by it. The order it
// returns is, for each column of a row, the position of its cell in the
// file, so a header in another order is read by its names, not its places.
// A record with an email address or a time in it is a booking, not a
// header. reason is set when the record, on line, is a header that fails
// the check.
func importHeader(rec []string, line int) (order []int, header bool, reason *Msg) {
	for _, cell := range rec {
		cell = strings.TrimSpace(cell)
		if ValidEmail(NormalizeEmail(cell)) {
			return nil, false, nil
		}
		if _, ok := parseImportTime(cell, time.UTC); ok {
			return nil, false, nil
		}
	}
	order = []int{-1, -1, -1, -1, -1, -1}
	known := 0
	for pos, cell := range rec {
		col := importColumnOf(cell)
		switch {
		case col >= 0 && order[col] >= 0:
			m := M("err.import_header_twice", "Line", line, "Value", ShowText(strings.TrimSpace(cell)))
			return nil, true, &m
		case col >= 0:
			order[col], known = pos, known+1
		case strings.TrimSpace(cell) != "":
			if known == 0 && pos == 0 {
				return nil, false, nil // no header: the row's own check names its first field
			}
			m := M("err.import_header_unknown", "Line", line, "Value", ShowText(strings.TrimSpace(cell)))
			return nil, true, &m
		}
	}
	if known == 0 {
		return nil, false, nil
	}
	for col := 0; col < 5; col++ {
		if order[col] < 0 {
			m := M("err.import_header_missing", "Line", line, "Column", importColumns[col].name)
			return nil, true, &m
		}
	}
	return order, true, nil
}

// reorderImport puts a record's cells in the order a row is read in, by
// the header's names; without a header the record is read as it is.
func reorderImport(rec []string, order []int) []string {
	if order == nil {
		return rec
	}
	n := 5
	if order[5] >= 0 {
		n = 6
	}
	out := make([]string, n)
	for col := 0; col < n; col++ {
		if order[col] < len(rec) {
			out[col] = rec[order[col]]
		}
	}
	for col := 0; col < 5; col++ {
		if order[col] >= len(rec) {
			return rec // fewer cells than the header names: the row's column check refuses it
		}
	}
	for pos, cell := range rec {
		if !containsInt(order, pos) && strings.TrimSpace(cell) != "" {
			return rec // more cells than the header names: the row's column check refuses it
		}
	}
	return out
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
