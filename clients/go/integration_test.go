package vigil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Integration tests against the real service, started from this repository's sources by the
// conformance kit's real-service.mjs on a free port with a temporary SQLite database.

type serviceAccount struct {
	ID          string `json:"id"`
	Secret      string `json:"secret"`
	Publishable string `json:"publishable"`
}

var realServer = struct {
	once     sync.Once
	proc     *nodeProcess
	base     string
	accounts map[string]serviceAccount
	err      error
}{}

// service starts the real service once for the package, with two Free accounts (one for
// the batch fallback, one to reach the rate limit) and a Pro account.
func service(t *testing.T) (string, map[string]serviceAccount) {
	t.Helper()
	s := &realServer
	s.once.Do(func() {
		s.proc, s.err = startNode("clients/conformance/real-service.mjs", "--plan", "free", "--plan", "free", "--plan", "free", "--plan", "pro")
		if s.err != nil {
			return
		}
		var info struct {
			Base     string                    `json:"base"`
			Accounts map[string]serviceAccount `json:"accounts"`
		}
		if s.err = json.Unmarshal(s.proc.line, &info); s.err == nil {
			s.base, s.accounts = info.Base, info.Accounts
		}
	})
	if s.err != nil {
		t.Fatalf("real service: %v", s.err)
	}
	return s.base, s.accounts
}

// countingTransport counts requests by path on their way to the service.
type countingTransport struct {
	mu    sync.Mutex
	paths []string
	// failFirst makes the first request reach the service but report a network error, as
	// when a connection drops after the service received the event.
	failFirst bool
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.paths = append(c.paths, r.URL.Path)
	fail := c.failFirst && len(c.paths) == 1
	c.mu.Unlock()
	resp, err := http.DefaultTransport.RoundTrip(r)
	if fail && err == nil {
		resp.Body.Close()
		return nil, errors.New("connection reset after the request was sent")
	}
	return resp, err
}

func (c *countingTransport) sent() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.paths...)
}

func serviceClient(t *testing.T, key string, transport *countingTransport, opts ...Option) *Client {
	base, _ := service(t)
	opts = append([]Option{WithBaseURL(base), WithHTTPClient(&http.Client{Transport: transport}), WithTimeout(10 * time.Second)}, opts...)
	c, err := New(key, append(opts, WithRetryBackoff(10*time.Millisecond))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// read calls the service's read API with a secret key.
func read(t *testing.T, key, path string, out any) {
	t.Helper()
	base, _ := service(t)
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

type storedEvents struct {
	Data []struct {
		Event     string       `json:"event"`
		EventID   string       `json:"event_id"`
		IP        string       `json:"ip"`
		UserAgent string       `json:"user_agent"`
		Request   *RequestInfo `json:"request"`
		Risk      Risk         `json:"risk"`
	} `json:"data"`
}

func usedEvents(t *testing.T, key string) int {
	var usage struct {
		Used int `json:"used"`
	}
	read(t, key, "/v1/usage", &usage)
	return usage.Used
}

func TestServiceReturnsTheRiskDecision(t *testing.T) {
	_, accounts := service(t)
	key := accounts["pro"].Secret
	c := serviceClient(t, key, &countingTransport{})
	res, err := c.Track(context.Background(), Event{Event: "auth.mfa.bypass_attempted", ActorID: "risk-user", IP: "203.0.113.7", UserAgent: "Mozilla/5.0"})
	if err != nil || res.Outcome != OutcomeAccepted || res.Status != http.StatusAccepted {
		t.Fatalf("%+v %v", res, err)
	}
	// auth.mfa.bypass_attempted has a base score of 40.
	if res.Risk == nil || res.Risk.Score < 40 || res.Risk.Level == "" || res.Risk.Action == "" || len(res.Risk.Breakdown) == 0 {
		t.Fatalf("risk %+v", res.Risk)
	}
	var stored storedEvents
	read(t, key, "/v1/events?actor_id=risk-user", &stored)
	if len(stored.Data) != 1 || stored.Data[0].EventID != res.EventID || stored.Data[0].Risk.Score != res.Risk.Score {
		t.Fatalf("stored %+v, result %+v", stored.Data, res)
	}
}

func TestServiceCountsARetriedEventOnce(t *testing.T) {
	_, accounts := service(t)
	key := accounts["pro"].Secret
	transport := &countingTransport{failFirst: true}
	c := serviceClient(t, key, transport)
	before := usedEvents(t, key)
	res, err := c.Track(context.Background(), Event{Event: "data.exported", ActorID: "retry-user"})
	if err != nil || res.Outcome != OutcomeAccepted || c.Stats().Retries != 1 || len(transport.sent()) != 2 {
		t.Fatalf("%+v %v, stats %+v, requests %v", res, err, c.Stats(), transport.sent())
	}
	var stored storedEvents
	read(t, key, "/v1/events?actor_id=retry-user", &stored)
	if used := usedEvents(t, key); used != before+1 || len(stored.Data) != 1 {
		t.Fatalf("used %d -> %d, stored %d events: the retry was counted twice", before, used, len(stored.Data))
	}
}

func TestServiceBatchOnAPaidPlan(t *testing.T) {
	_, accounts := service(t)
	key := accounts["pro"].Secret
	transport := &countingTransport{}
	c := serviceClient(t, key, transport, WithBatchSize(100))
	before := usedEvents(t, key)
	events := make([]Event, 150)
	for i := range events {
		events[i] = Event{Event: "data.accessed", ActorID: fmt.Sprintf("batch-user-%d", i)}
	}
	res, err := c.TrackBatch(context.Background(), events)
	if err != nil || res != (BatchResult{Accepted: 150}) {
		t.Fatalf("%+v %v", res, err)
	}
	if sent := transport.sent(); len(sent) != 2 || sent[0] != "/v1/events/batch" || sent[1] != "/v1/events/batch" {
		t.Fatalf("requests %v", sent)
	}
	if used := usedEvents(t, key); used != before+150 {
		t.Fatalf("used %d -> %d", before, used)
	}
}

func TestServiceFreePlanFallsBackToSingleEvents(t *testing.T) {
	_, accounts := service(t)
	key := accounts["free"].Secret
	transport := &countingTransport{}
	c := serviceClient(t, key, transport)
	res, err := c.TrackBatch(context.Background(), []Event{{Event: "auth.login.success", ActorID: "f1"}, {Event: "auth.logout", ActorID: "f2"}, {Event: "data.accessed", ActorID: "f3"}})
	if err != nil || res != (BatchResult{Accepted: 3}) {
		t.Fatalf("%+v %v", res, err)
	}
	want := []string{"/v1/events/batch", "/v1/events", "/v1/events", "/v1/events"}
	if sent := transport.sent(); fmt.Sprint(sent) != fmt.Sprint(want) {
		t.Fatalf("requests %v, want %v", sent, want)
	}
	time.Sleep(1100 * time.Millisecond) // the Free plan allows 5 requests per second
	if res, err := c.TrackBatch(context.Background(), []Event{{Event: "data.accessed", ActorID: "f4"}}); err != nil || res.Accepted != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	if sent := transport.sent(); len(sent) != 5 || sent[4] != "/v1/events" {
		t.Fatalf("the client did not remember the plan has no batch endpoint: %v", sent)
	}
	if used := usedEvents(t, key); used != 4 {
		t.Fatalf("used %d, want 4", used)
	}
}

func TestServiceFreePlanRateLimitStartsASilentCooldown(t *testing.T) {
	_, accounts := service(t)
	key := accounts["free-2"].Secret
	c := serviceClient(t, key, &countingTransport{}, WithMaxRetries(0))
	accepted := 0
	var last Result
	// 4 events per second: the 30 events per minute limit is the one that is reached.
	for i := 0; i < 40 && last.Outcome != OutcomeDropped; i++ {
		res, err := c.Track(context.Background(), Event{Event: "auth.login.failure", ActorID: "flood"})
		switch {
		case res.Outcome == OutcomeAccepted && err == nil:
			accepted++
		case res.Outcome == OutcomeDropped && err == nil:
			last = res
		default:
			t.Fatalf("event %d: %+v %v", i+1, res, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	// Pacing keeps the client under its 30 events per minute: the 31st is dropped here, not sent.
	if s := c.Stats(); accepted != 30 || s.PacedDropped != 1 || s.RateLimited != 0 {
		t.Fatalf("accepted %d, stats %+v", accepted, s)
	}
	// Another process on the same key (a fresh client knows nothing of this minute) meets the 429.
	transport := &countingTransport{}
	other := serviceClient(t, key, transport, WithMaxRetries(0), WithErrDropped())
	if res, err := other.Track(context.Background(), Event{Event: "auth.login.failure", ActorID: "flood"}); res.Status != http.StatusTooManyRequests || !errors.Is(err, ErrRateLimited) {
		t.Fatalf("other process: %+v %v", res, err)
	}
	requests := len(transport.sent())
	for i := 0; i < 20; i++ {
		if res, err := other.Track(context.Background(), Event{Event: "auth.login.failure", ActorID: "flood"}); res.Outcome != OutcomeDropped || !errors.Is(err, ErrDropped) {
			t.Fatalf("in cooldown: %+v %v", res, err)
		}
	}
	if res, _ := other.TrackBatch(context.Background(), []Event{{Event: "data.accessed"}, {Event: "data.accessed"}}); res.Dropped != 2 {
		t.Fatalf("batch in cooldown: %+v", res)
	}
	s := other.Stats()
	if sent := len(transport.sent()); sent != requests || !s.InCooldown || s.RateLimited != 1 || s.Dropped != 22 || s.Probes != 0 {
		t.Fatalf("%d requests during the cooldown, stats %+v", sent-requests, s)
	}
}

// 100 logins at once from 100 goroutines on a Free key: the client sends what the plan takes,
// drops and counts the rest, and the service never answers 429 (so protection stays on).
func TestServiceBurstOfLoginsOnAFreeKeyIsPacedWithoutA429(t *testing.T) {
	_, accounts := service(t)
	key := accounts["free-3"].Secret
	transport := &countingTransport{}
	c := serviceClient(t, key, transport)
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[Outcome]int{}
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res, err := c.Track(context.Background(), Event{Event: "auth.login.success", ActorID: fmt.Sprintf("member-%d", i), IP: "203.0.113.9"})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("login %d: %v", i, err)
			}
			outcomes[res.Outcome]++
		}(i)
	}
	wg.Wait()
	s := c.Stats()
	t.Logf("go burst: sent=%d accepted=%d paced=%d paced_dropped=%d rate_limited=%d", s.Sent, s.Accepted, s.Paced, s.PacedDropped, s.RateLimited)
	if s.RateLimited != 0 || s.InCooldown || s.Accepted+s.PacedDropped != 100 || s.Dropped != s.PacedDropped || s.Sent != s.Accepted || s.Accepted < 5 {
		t.Fatalf("stats %+v", s)
	}
	if outcomes[OutcomeAccepted] != int(s.Accepted) || outcomes[OutcomeDropped] != int(s.PacedDropped) || len(transport.sent()) != int(s.Accepted) {
		t.Fatalf("outcomes %v, %d requests, stats %+v", outcomes, len(transport.sent()), s)
	}
	if used := usedEvents(t, key); used != int(s.Accepted) {
		t.Fatalf("used %d, want %d", used, s.Accepted)
	}
}

func TestServiceMiddlewareRecordsTheUsersRequest(t *testing.T) {
	_, accounts := service(t)
	key := accounts["pro"].Secret
	c := serviceClient(t, key, &countingTransport{})
	var decision *Risk
	login := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		res, _ := c.TrackRequest(r, Event{Event: "auth.login.failure", ActorID: "mw-user"})
		decision = res.Risk
	})
	app := httptest.NewServer(c.Middleware(TrustProxies(netip.MustParsePrefix("127.0.0.0/8")))(login))
	defer app.Close()
	req, _ := http.NewRequest(http.MethodPost, app.URL+"/login", nil)
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64)")
	req.Header.Set("X-Forwarded-For", "198.51.100.23")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if decision == nil {
		t.Fatal("no risk decision")
	}
	var stored storedEvents
	read(t, key, "/v1/events?actor_id="+url.QueryEscape("mw-user"), &stored)
	if len(stored.Data) != 1 {
		t.Fatalf("stored %+v", stored.Data)
	}
	e := stored.Data[0]
	if e.IP != "198.51.100.23" || e.UserAgent != "Mozilla/5.0 (X11; Linux x86_64)" || e.Request == nil || e.Request.Path != "/login" || e.Request.Status != 401 || e.Request.Method != "POST" {
		t.Fatalf("stored %+v (request %+v)", e, e.Request)
	}
}
