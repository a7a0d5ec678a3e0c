package smtptest

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
)

// Parsed is a received email taken apart: its decoded headers and the
// decoded body of each leaf MIME part by content type ("text/plain",
// "text/html").
type Parsed struct {
	Header mail.Header
	// Subject is the decoded Subject header.
	Subject string
	// TopType is the top-level content type, e.g. "multipart/alternative".
	TopType string
	Parts   map[string]string
}

// Parse decodes a message as a mail client would.
func Parse(data []byte) (*Parsed, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("smtptest: parse: %w", err)
	}
	p := &Parsed{Header: msg.Header, Parts: map[string]string{}}
	dec := new(mime.WordDecoder)
	if p.Subject, err = dec.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		return nil, fmt.Errorf("smtptest: subject: %w", err)
	}
	ct, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return nil, fmt.Errorf("smtptest: content type: %w", err)
	}
	p.TopType = ct
	if err := p.walk(ct, params, msg.Body, msg.Header.Get("Content-Transfer-Encoding")); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Parsed) walk(ct string, params map[string]string, body io.Reader, cte string) error {
	if !strings.HasPrefix(ct, "multipart/") {
		b, err := decodeBody(body, cte)
		if err != nil {
			return err
		}
		p.Parts[ct] = b
		return nil
	}
	mr := multipart.NewReader(body, params["boundary"])
	for {
		part, err := mr.NextPart() // decodes quoted-printable itself
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("smtptest: part: %w", err)
		}
		pct, pparams, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
		if err != nil {
			return fmt.Errorf("smtptest: part type: %w", err)
		}
		if err := p.walk(pct, pparams, part, part.Header.Get("Content-Transfer-Encoding")); err != nil {
			return err
		}
	}
}
