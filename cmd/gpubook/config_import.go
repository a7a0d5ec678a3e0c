package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpubook/gpubook/models"
)

// ImportSettings bound the dates of imported bookings: how many years back
// a row may start (GPUBOOK_IMPORT_YEARS_BACK, default 10) and how many
// years ahead it may end (GPUBOOK_IMPORT_YEARS_AHEAD, default 2).
type ImportSettings struct {
	YearsBack, YearsAhead int
}

// Most years either bound may be set to: beyond them the value is a typo.
const (
	maxImportYearsBack  = 100
	maxImportYearsAhead = 10
)

func resolveImport(getenv func(string) string, cfg *Config) error {
	cfg.Import = ImportSettings{YearsBack: models.DefaultImportYearsBack, YearsAhead: models.DefaultImportYearsAhead}
	for _, s := range []struct {
		env string
		max int
		to  *int
	}{
		{"GPUBOOK_IMPORT_YEARS_BACK", maxImportYearsBack, &cfg.Import.YearsBack},
		{"GPUBOOK_IMPORT_YEARS_AHEAD", maxImportYearsAhead, &cfg.Import.YearsAhead},
	} {
		raw := strings.TrimSpace(getenv(s.env))
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 || n > s.max {
			return fmt.Errorf("%s: %q is not a whole number of years from 0 to %d", s.env, raw, s.max)
		}
		*s.to = n
	}
	return nil
}
