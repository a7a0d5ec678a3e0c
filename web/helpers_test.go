package web_test

import "strconv"

func itoa(i int64) string { return strconv.FormatInt(i, 10) }
