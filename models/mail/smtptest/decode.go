package smtptest

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime/quotedprintable"
	"strings"
)

// decodeBody undoes a part's transfer encoding.
func decodeBody(r io.Reader, cte string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, r)
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("smtptest: body: %w", err)
	}
	return string(b), nil
}
