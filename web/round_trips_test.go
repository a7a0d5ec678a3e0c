package web_test

import (
	"net"
	"net/url"
	"sync/atomic"
	"testing"
)

// roundTripProxy stands between the store and PostgreSQL and counts round
// trips: every time a client sends after the server last answered it on
// that connection (its first message too). A pipeline of statements ending
// in one Sync is one round trip, as it is on the wire; a statement sent
// and awaited on its own is one each.
type roundTripProxy struct {
	ln     net.Listener
	target string
	trips  atomic.Int64
}

// newRoundTripProxy listens on loopback and forwards to target
// (host:port) until the test ends.
func newRoundTripProxy(tb testing.TB, target string) *roundTripProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &roundTripProxy{ln: ln, target: target}
	tb.Cleanup(func() { ln.Close() })
	go p.serve()
	return p
}

// via is dbURL with its host and port the proxy's.
func (p *roundTripProxy) via(tb testing.TB, dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		tb.Fatal(err)
	}
	u.Host = p.ln.Addr().String()
	return u.String()
}

func (p *roundTripProxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		var answered atomic.Bool
		answered.Store(true) // the first message is a trip of its own
		go p.copy(server, client, func() {
			if answered.Swap(false) {
				p.trips.Add(1)
			}
		})
		// The flag is set before the answer is passed on, so the client's
		// next message cannot be read before it.
		go p.copy(client, server, func() { answered.Store(true) })
	}
}

// copy forwards from src to dst, calling seen before passing on each read.
func (p *roundTripProxy) copy(dst, src net.Conn, seen func()) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			seen()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
