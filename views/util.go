package views

import (
	"net/url"
	"strconv"
)

func itoa(i int) string { return strconv.Itoa(i) }

func itoa64(i int64) string { return strconv.FormatInt(i, 10) }

// ariaInvalid marks a field with a problem for screen readers.
func ariaInvalid(msg string) string {
	if msg != "" {
		return "true"
	}
	return "false"
}

// MiB formats a memory size for people: 81920 → "80 GiB".
func MiB(m int64) string {
	if m >= 1024 && m%1024 == 0 {
		return itoa64(m/1024) + " GiB"
	}
	if m >= 1024 {
		return strconv.FormatFloat(float64(m)/1024, 'f', 1, 64) + " GiB"
	}
	return itoa64(m) + " MiB"
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
