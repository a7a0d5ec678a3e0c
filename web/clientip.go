package web

import (
	"net"

	"github.com/labstack/echo/v4"
)

// clientIP decides which address every per-IP limit, log line and audit
// event uses. Headers are written by the client, so without trusted proxies
// only the connection's peer counts: X-Forwarded-For and X-Real-IP are
// ignored. With proxies, the right-most X-Forwarded-For entry that is not one
// of them is the client (everything left of it may be forged). Echo's
// extractors trust loopback, link-local and private addresses unless told
// otherwise; they are told, so that the admin's list is the only trust.
func clientIP(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
