// Package mail delivers: it sends the outbox's messages over SMTP with go-mail. It
// builds one multipart/alternative email per message and says, for every
// failure, what it means for the message: retry later, give up, or (when
// the connection broke after the server may have taken it) never resend.
package mail

import (
	"context"
	"errors"
	"fmt"
	netmail "net/mail"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/gpubook/gpubook/models"
)

// TLS modes of Settings.TLS.
const (
	TLSStartTLS = "starttls" // upgrade a plain connection; refuse the server if it cannot
	TLSImplicit = "tls"      // TLS from the first byte (SMTPS, port 465)
	TLSNone     = "none"     // plain text, for a relay on localhost and for tests
)

// Settings is how to reach the SMTP server; cmd reads them from GPUBOOK_SMTP_*.
type Settings struct {
	Host     string
	Port     int
	Username string
	Password string
	From     string // RFC 5322 address, e.g. "gpubook <gpubook@example.org>"
	TLS      string
	Timeout  time.Duration
	// HELO is the name gpubook greets the server with; empty: the host name.
	HELO string
}

// Mailer sends one message per SMTP connection. Mail is a few messages a
// minute at most, and a fresh connection per message keeps each outcome
// separate: a broken connection can only ever blur one message.
type Mailer struct {
	s    Settings
	from *netmail.Address
	now  func() time.Time
}

// New checks the settings and returns a mailer; nothing is dialled yet.
func New(s Settings, now func() time.Time) (*Mailer, error) {
	if s.Host == "" {
		return nil, errors.New("mailer: no SMTP host")
	}
	from, err := netmail.ParseAddress(s.From)
	if err != nil {
		return nil, fmt.Errorf("mailer: from address %q: %w", s.From, err)
	}
	switch s.TLS {
	case "":
		s.TLS = TLSStartTLS
	case TLSStartTLS, TLSImplicit, TLSNone:
	default:
		return nil, fmt.Errorf("mailer: unknown TLS mode %q", s.TLS)
	}
	if s.Timeout <= 0 {
		s.Timeout = 10 * time.Second
	}
	if now == nil {
		now = time.Now
	}
	return &Mailer{s: s, from: from, now: now}, nil
}

// Server names the server for logs: host:port and the TLS mode.
func (m *Mailer) Server() string { return fmt.Sprintf("%s:%d (%s)", m.s.Host, m.s.Port, m.s.TLS) }

// client builds a go-mail client for one connection. The port is set after
// the TLS policy, because go-mail's port-policy options move the port.
func (m *Mailer) client() (*gomail.Client, error) {
	opts := []gomail.Option{gomail.WithTimeout(m.s.Timeout), gomail.WithoutNoop()}
	switch m.s.TLS {
	case TLSImplicit:
		opts = append(opts, gomail.WithSSL())
	case TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if m.s.Port != 0 {
		opts = append(opts, gomail.WithPort(m.s.Port))
	}
	if m.s.HELO != "" {
		opts = append(opts, gomail.WithHELO(m.s.HELO))
	}
	if m.s.Username != "" {
		// Without TLS, go-mail's PLAIN refuses any server but localhost, so a
		// password never crosses the network in clear text.
		auth := gomail.SMTPAuthAutoDiscover
		if m.s.TLS == TLSNone {
			auth = gomail.SMTPAuthPlain
		}
		opts = append(opts, gomail.WithSMTPAuth(auth), gomail.WithUsername(m.s.Username), gomail.WithPassword(m.s.Password))
	}
	c, err := gomail.NewClient(m.s.Host, opts...)
	if err != nil {
		return nil, fmt.Errorf("mailer: client: %w", err)
	}
	return c, nil
}

// Send delivers one outbox message. A failure is a *models.DeliveryError
// whose Outcome tells the worker what to do with the message.
func (m *Mailer) Send(ctx context.Context, msg models.OutboxMessage) error {
	em, err := m.build(msg)
	if err != nil {
		return &models.DeliveryError{Outcome: models.DeliveryReject, Err: err}
	}
	c, err := m.client()
	if err != nil {
		return &models.DeliveryError{Outcome: models.DeliveryRetry, Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, 3*m.s.Timeout)
	defer cancel()
	return classify(em, c.DialAndSendWithContext(ctx, em))
}

// build turns an outbox row into an email: text first, HTML as the
// preferred alternative, and headers that mark it as machine-sent so that
// auto-responders stay quiet.
func (m *Mailer) build(msg models.OutboxMessage) (*gomail.Msg, error) {
	em := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	em.FromMailAddress(m.from)
	if err := em.To(msg.ToEmail); err != nil {
		return nil, fmt.Errorf("mailer: to %q: %w", msg.ToEmail, err)
	}
	em.Subject(msg.Subject)
	em.SetMessageIDWithValue(models.MessageID(msg.DedupKey))
	em.SetDateWithValue(m.now())
	em.SetGenHeader(gomail.Header("Auto-Submitted"), "auto-generated")
	em.SetGenHeader(gomail.HeaderXAutoResponseSuppress, "All")
	if msg.Lang != "" {
		em.SetGenHeader(gomail.HeaderContentLang, msg.Lang)
	}
	if u := msg.UnsubscribeURL; u != "" && !strings.ContainsAny(u, "<>\r\n") {
		em.SetGenHeader(gomail.HeaderListUnsubscribe, "<"+u+">")
	}
	em.SetBodyString(gomail.TypeTextPlain, msg.TextBody)
	if msg.HTMLBody != "" {
		em.AddAlternativeString(gomail.TypeTextHTML, msg.HTMLBody)
	}
	return em, nil
}
