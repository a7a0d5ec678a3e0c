// Package smtptest runs a real SMTP server (emersion/go-smtp) inside a test
// and records what it receives, so that mail tests check what a mail
// server really got: the envelope, the headers and every MIME part.
package smtptest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one email as the server received it.
type Message struct {
	From string
	To   []string
	Data []byte
}

// Options change how the server behaves, to stage failures.
type Options struct {
	// Username and Password, when set, make AUTH PLAIN mandatory.
	Username, Password string
	// Reject, when it returns an error for a recipient, refuses RCPT TO
	// with it (e.g. &smtp.SMTPError{Code: 550, …}).
	Reject func(rcpt string) error
	// HangAfterData records the message and then holds its reply this long,
	// as a server that took the mail but whose answer never arrived.
	HangAfterData time.Duration
	// HangAt, when above zero, makes only the HangAt-th message received
	// (counting from 1) hang, as a server that stalls mid-batch.
	HangAt int
	// ReplyDelay answers every accepted message this late, as a slow but
	// working server.
	ReplyDelay time.Duration
}

// Server is a running test SMTP server.
type Server struct {
	Addr string // 127.0.0.1:PORT
	Port int
	opts Options
	srv  *smtp.Server
	mu   sync.Mutex
	msgs []Message
}

// Start listens on a free port of 127.0.0.1 and serves until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	return StartOn(t, "127.0.0.1:0", opts)
}

// StartOn is Start on a given address, so that an outage test can bring a
// server up on the port that refused connections before.
func StartOn(t testing.TB, addr string, opts Options) *Server {
	t.Helper()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the port may linger briefly after an earlier user
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("smtptest: listen %s: %v", addr, err)
	}
	s := &Server{Addr: ln.Addr().String(), Port: ln.Addr().(*net.TCPAddr).Port, opts: opts}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &session{s: s}, nil }))
	s.srv.Domain = "localhost"
	s.srv.AllowInsecureAuth = true
	s.srv.ReadTimeout, s.srv.WriteTimeout = 10*time.Second, 10*time.Second
	go s.srv.Serve(ln)
	t.Cleanup(s.Close)
	return s
}

// FreeAddr returns a 127.0.0.1 address that nothing listens on now.
func FreeAddr(t testing.TB) (addr string, port int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String(), ln.Addr().(*net.TCPAddr).Port
}

// Close stops the server; a closed server refuses connections.
func (s *Server) Close() { s.srv.Close() }

// Messages returns what the server received so far, in order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Wait returns once n messages arrived or the timeout passed.
func (s *Server) Wait(n int, timeout time.Duration) []Message {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if m := s.Messages(); len(m) >= n {
			return m
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s.Messages()
}

type session struct {
	s      *Server
	authed bool
	cur    Message
}

func (se *session) AuthMechanisms() []string {
	if se.s.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (se *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != se.s.opts.Username || pass != se.s.opts.Password {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "bad credentials"}
		}
		se.authed = true
		return nil
	}), nil
}

func (se *session) Mail(from string, _ *smtp.MailOptions) error {
	if se.s.opts.Username != "" && !se.authed {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "authentication required"}
	}
	se.cur = Message{From: from}
	return nil
}

func (se *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if se.s.opts.Reject != nil {
		if err := se.s.opts.Reject(to); err != nil {
			return err
		}
	}
	se.cur.To = append(se.cur.To, to)
	return nil
}

func (se *session) Data(r io.Reader) error {
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, r); err != nil {
		return err
	}
	se.cur.Data = buf.Bytes()
	se.s.mu.Lock()
	se.s.msgs = append(se.s.msgs, se.cur)
	n := len(se.s.msgs)
	se.s.mu.Unlock()
	if d := se.s.opts.HangAfterData; d > 0 && (se.s.opts.HangAt == 0 || se.s.opts.HangAt == n) {
		time.Sleep(d)
		return errors.New("smtptest: hung up after data")
	}
	time.Sleep(se.s.opts.ReplyDelay)
	return nil
}

func (se *session) Reset()        { se.cur = Message{} }
func (se *session) Logout() error { return nil }
