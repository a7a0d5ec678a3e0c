package main

import (
	"strings"
	"testing"
)

func TestImportConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    ImportSettings
		wantErr string
	}{
		{"defaults", nil, ImportSettings{YearsBack: 10, YearsAhead: 2}, ""},
		{"set", map[string]string{"GPUBOOK_IMPORT_YEARS_BACK": "25", "GPUBOOK_IMPORT_YEARS_AHEAD": " 0 "}, ImportSettings{YearsBack: 25, YearsAhead: 0}, ""},
		{"negative", map[string]string{"GPUBOOK_IMPORT_YEARS_BACK": "-1"}, ImportSettings{}, "GPUBOOK_IMPORT_YEARS_BACK: \"-1\""},
		{"too far ahead", map[string]string{"GPUBOOK_IMPORT_YEARS_AHEAD": "11"}, ImportSettings{}, "from 0 to 10"},
		{"too far back", map[string]string{"GPUBOOK_IMPORT_YEARS_BACK": "101"}, ImportSettings{}, "from 0 to 100"},
		{"not a number", map[string]string{"GPUBOOK_IMPORT_YEARS_AHEAD": "2y"}, ImportSettings{}, "GPUBOOK_IMPORT_YEARS_AHEAD: \"2y\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConfig(envOf(tt.env), nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Import != tt.want {
				t.Errorf("got %+v, want %+v", got.Import, tt.want)
			}
			if l := got.bookingLimits(); l.ImportYearsBack != tt.want.YearsBack || l.ImportYearsAhead != tt.want.YearsAhead {
				t.Errorf("booking limits %d/%d, want %+v", l.ImportYearsBack, l.ImportYearsAhead, tt.want)
			}
		})
	}
}
