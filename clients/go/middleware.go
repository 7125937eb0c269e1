package vigil

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// MiddlewareOption configures Client.Middleware.
type MiddlewareOption func(*middleware)

type middleware struct {
	client        *Client
	proxies       []netip.Prefix
	includeQuery  bool
	responseEvent string
	report        func(status int) bool
}

// TrustProxies names the proxies in front of the application whose X-Forwarded-For entries
// are believed: entries are skipped from the right while they are one of these proxies, and
// the next one is the end user's address. Without it the connecting address is the user's.
func TrustProxies(prefixes ...netip.Prefix) MiddlewareOption {
	return func(m *middleware) { m.proxies = append(m.proxies, prefixes...) }
}

// IncludeQuery sends the query string with the request (the service scans it for injection
// attempts; leave it out when it may hold tokens).
func IncludeQuery() MiddlewareOption {
	return func(m *middleware) { m.includeQuery = true }
}

// ReportResponses sends an event of type eventType (for example "api.request") for every
// response whose status match accepts, with the request and its status, after the response
// is written and without delaying it. The service infers auth failures (401/403 on auth
// paths), rate limiting (429) and more from such events.
func ReportResponses(eventType string, match func(status int) bool) MiddlewareOption {
	return func(m *middleware) {
		m.responseEvent = eventType
		m.report = match
	}
}

type scopeKey struct{}

// requestScope is what the middleware learnt about the request, for TrackRequest.
type requestScope struct {
	ip       string
	info     RequestInfo
	recorder *statusRecorder
}

// Middleware returns net/http middleware that records the end user's address, user agent,
// method and path (and, once written, the response status) for events sent with
// TrackRequest, and optionally reports responses (ReportResponses).
//
//	mux.Handle("/login", client.Middleware()(loginHandler))
func (c *Client) Middleware(opts ...MiddlewareOption) func(http.Handler) http.Handler {
	m := &middleware{client: c}
	for _, opt := range opts {
		if opt != nil {
			opt(m)
		}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := &statusRecorder{ResponseWriter: w}
			scope := &requestScope{ip: clientAddress(r, m.proxies), info: m.requestInfo(r), recorder: rec}
			next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), scopeKey{}, scope)))
			if m.report == nil {
				return
			}
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			if !m.report(status) {
				return
			}
			info := scope.info
			info.Status = status
			c.trackInBackground(Event{Event: m.responseEvent, IP: scope.ip, UserAgent: r.UserAgent(), Request: &info})
		})
	}
}

func (m *middleware) requestInfo(r *http.Request) RequestInfo {
	info := RequestInfo{Method: r.Method, Path: r.URL.Path}
	if m.includeQuery {
		info.Query = r.URL.RawQuery
	}
	return info
}

// TrackRequest is Track for an event about the incoming request r: it fills IP, UserAgent and
// Request (method, path, and the status if the handler already wrote it) where e leaves them
// empty, from what Middleware recorded, or from r itself without the middleware (then the
// connecting address is the user's). The event is sent even if the end user goes away
// meanwhile: r's cancellation does not stop it, the client's timeout bounds it.
func (c *Client) TrackRequest(r *http.Request, e Event) (Result, error) {
	if r == nil {
		return c.Track(context.Background(), e)
	}
	scope, _ := r.Context().Value(scopeKey{}).(*requestScope)
	if scope == nil {
		scope = &requestScope{ip: clientAddress(r, nil), info: RequestInfo{Method: r.Method, Path: r.URL.Path}}
	}
	if e.IP == "" {
		e.IP = scope.ip
	}
	if e.UserAgent == "" {
		e.UserAgent = r.UserAgent()
	}
	if e.Request == nil {
		info := scope.info
		if scope.recorder != nil {
			info.Status = scope.recorder.status
		}
		e.Request = &info
	}
	return c.Track(detached{r.Context()}, e)
}

// detached keeps a context's values but not its deadline or cancellation.
type detached struct{ parent context.Context }

func (detached) Deadline() (time.Time, bool) { return time.Time{}, false }
func (detached) Done() <-chan struct{}       { return nil }
func (detached) Err() error                  { return nil }
func (d detached) Value(key any) any         { return d.parent.Value(key) }

// clientAddress is the end user's address: the connecting one, or with trusted proxies the
// rightmost X-Forwarded-For entry that is not one of them.
func clientAddress(r *http.Request, proxies []netip.Prefix) string {
	var chain []netip.Addr
	if len(proxies) > 0 {
		for _, header := range r.Header.Values("X-Forwarded-For") {
			for _, part := range strings.Split(header, ",") {
				if a, ok := parseAddr(part); ok {
					chain = append(chain, a)
				}
			}
		}
	}
	remote, remoteOK := parseAddr(r.RemoteAddr)
	if remoteOK {
		chain = append(chain, remote)
	}
	if len(chain) == 0 {
		return ""
	}
	i := len(chain) - 1
	for i > 0 && trusted(chain[i], proxies) {
		i--
	}
	return chain[i].String()
}

func trusted(a netip.Addr, proxies []netip.Prefix) bool {
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseAddr reads "1.2.3.4", "1.2.3.4:5678", "[::1]:5678" or "::1", IPv4-mapped IPv6 as IPv4.
func parseAddr(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if i := strings.IndexByte(s, '%'); i >= 0 {
		s = s[:i]
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes through to the wrapped writer, so streaming handlers keep working.
func (w *statusRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if w.status == 0 {
			w.status = http.StatusOK
		}
		f.Flush()
	}
}

// Hijack passes through to the wrapped writer, so WebSocket upgrades keep working.
func (w *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := w.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("vigil: the response writer does not support hijacking")
}

// Unwrap gives http.ResponseController (Go 1.20+) the wrapped writer.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
