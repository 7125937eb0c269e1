package vigil

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// app serves handler behind the client's middleware on a real HTTP server.
func app(t *testing.T, c *Client, handler http.HandlerFunc, opts ...MiddlewareOption) *httptest.Server {
	srv := httptest.NewServer(c.Middleware(opts...)(handler))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string, header map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestTrackRequestFillsTheRequestFields(t *testing.T) {
	svc := newRecordingService(t)
	c := mustNew(t, WithBaseURL(svc.URL))
	var res Result
	srv := app(t, c, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		res, _ = c.TrackRequest(r, Event{Event: "auth.login.failure", ActorID: "alice"})
	}, IncludeQuery())
	get(t, srv.URL+"/login?next=%2Fhome", map[string]string{"User-Agent": "curl/8.0", "X-Forwarded-For": "198.51.100.9"})
	if res.Outcome != OutcomeAccepted || res.Risk == nil {
		t.Fatalf("%+v", res)
	}
	_, bodies := svc.received()
	e := bodies[0]
	// No trusted proxy: X-Forwarded-For is not believed, the connecting address is the user's.
	if e["ip"] != "127.0.0.1" || e["user_agent"] != "curl/8.0" || e["actor_id"] != "alice" {
		t.Fatalf("sent %v", e)
	}
	req := e["request"].(map[string]any)
	if req["method"] != "POST" || req["path"] != "/login" || req["query"] != "next=%2Fhome" || req["status"] != float64(401) {
		t.Fatalf("request %v", req)
	}
}

func TestTrustedProxiesRevealTheUsersAddress(t *testing.T) {
	svc := newRecordingService(t)
	c := mustNew(t, WithBaseURL(svc.URL))
	srv := app(t, c, func(w http.ResponseWriter, r *http.Request) {
		_, _ = c.TrackRequest(r, Event{Event: "auth.login.success"})
	}, TrustProxies(netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")))
	// The user claims 192.0.2.1, the edge proxy saw 203.0.113.5 and a 10.x proxy relayed it.
	get(t, srv.URL+"/", map[string]string{"X-Forwarded-For": "192.0.2.1, 203.0.113.5, 10.1.2.3"})
	get(t, srv.URL+"/", map[string]string{"X-Forwarded-For": "[::ffff:10.9.9.9]:443, ::ffff:198.51.100.4"})
	get(t, srv.URL+"/", nil)
	_, bodies := svc.received()
	for i, want := range []string{"203.0.113.5", "198.51.100.4", "127.0.0.1"} {
		if bodies[i]["ip"] != want {
			t.Errorf("request %d: ip %v, want %s", i+1, bodies[i]["ip"], want)
		}
		if _, ok := bodies[i]["request"].(map[string]any)["query"]; ok {
			t.Errorf("request %d: query sent without IncludeQuery", i+1)
		}
	}
}

func TestTrackRequestWithoutMiddlewareAndKeepsGivenFields(t *testing.T) {
	svc := newRecordingService(t)
	c := mustNew(t, WithBaseURL(svc.URL))
	r := httptest.NewRequest(http.MethodDelete, "/users/7", nil)
	r.RemoteAddr = "[2001:db8::1]:5555"
	r.Header.Set("User-Agent", "agent")
	ctx, cancel := context.WithCancel(r.Context())
	cancel() // the end user went away: the security event is still sent
	if res, err := c.TrackRequest(r.WithContext(ctx), Event{Event: "account.deleted", UserAgent: "given"}); err != nil {
		t.Fatalf("%+v %v", res, err)
	}
	_, bodies := svc.received()
	e := bodies[0]
	if e["ip"] != "2001:db8::1" || e["user_agent"] != "given" || e["request"].(map[string]any)["method"] != "DELETE" {
		t.Fatalf("sent %v", e)
	}
}

func TestReportResponsesSendsMatchingStatusesAfterTheAnswer(t *testing.T) {
	svc := newRecordingService(t)
	c := mustNew(t, WithBaseURL(svc.URL))
	srv := app(t, c, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}, ReportResponses("api.request", func(status int) bool { return status >= 400 }))
	if resp := get(t, srv.URL+"/login", map[string]string{"User-Agent": "ua"}); resp.StatusCode != 401 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	get(t, srv.URL+"/home", nil)
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	paths, bodies := svc.received()
	if len(paths) != 1 {
		t.Fatalf("%d events, want 1 (only the 401)", len(paths))
	}
	e := bodies[0]
	req := e["request"].(map[string]any)
	if e["event"] != "api.request" || e["user_agent"] != "ua" || req["path"] != "/login" || req["status"] != float64(401) || e["event_id"] == nil {
		t.Fatalf("sent %v", e)
	}
}

func TestRecorderPassesFlushAndHijackThrough(t *testing.T) {
	c := mustNew(t, WithBaseURL("http://127.0.0.1:1"))
	var flusher, hijacker bool
	srv := app(t, c, func(w http.ResponseWriter, r *http.Request) {
		_, flusher = w.(http.Flusher)
		h, ok := w.(http.Hijacker)
		if ok {
			conn, _, err := h.Hijack()
			hijacker = err == nil
			if conn != nil {
				_, _ = conn.Write([]byte("HTTP/1.1 204 No Content\r\n\r\n"))
				conn.Close()
			}
		}
	})
	if resp := get(t, srv.URL, nil); resp.StatusCode != http.StatusNoContent || !flusher || !hijacker {
		t.Fatalf("status %d flusher %v hijacker %v", resp.StatusCode, flusher, hijacker)
	}
}
