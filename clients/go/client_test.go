package vigil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingService is a real HTTP server that answers with the statuses it is given in turn
// (then 202 with a risk decision) and records what it received.
type recordingService struct {
	*httptest.Server
	mu       sync.Mutex
	statuses []int
	bodies   [][]byte
	paths    []string
	headers  []http.Header
}

func newRecordingService(t *testing.T, statuses ...int) *recordingService {
	s := &recordingService{statuses: statuses}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.paths = append(s.paths, r.URL.Path)
		s.headers = append(s.headers, r.Header.Clone())
		status := http.StatusAccepted
		if len(s.statuses) > 0 {
			status = s.statuses[0]
			s.statuses = s.statuses[1:]
		}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		// A roomy policy, as the kit's scripted server announces: pacing stays out of the way.
		w.Header().Set("RateLimit-Policy", `"second";q=10000;w=1, "minute";q=100000;w=60`)
		w.WriteHeader(status)
		switch {
		case status == http.StatusAccepted && r.URL.Path == "/v1/events/batch":
			var in struct{ Events []json.RawMessage }
			_ = json.Unmarshal(body, &in)
			fmt.Fprintf(w, `{"status":"accepted","accepted":%d}`, len(in.Events))
		case status == http.StatusAccepted:
			fmt.Fprint(w, `{"id":"evt_1","status":"accepted","risk":{"score":55,"level":"high","action":"challenge","breakdown":[{"source":"base","points":55}]}}`)
		default:
			fmt.Fprintf(w, `{"error":"CODE_%d","message":"answer %d","request_id":"req_1"}`, status, status)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *recordingService) received() (paths []string, bodies []map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, b := range s.bodies {
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		bodies = append(bodies, m)
		paths = append(paths, s.paths[i])
	}
	return paths, bodies
}

func noSleep(context.Context, time.Duration) error { return nil }

func mustNew(t *testing.T, opts ...Option) *Client {
	t.Helper()
	c, err := New("vgl_sk_test", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func TestNewRejectsInvalidOptions(t *testing.T) {
	cases := map[string][]Option{
		"relative base URL": {WithBaseURL("localhost:8080")},
		"ftp base URL":      {WithBaseURL("ftp://example.com")},
		"zero timeout":      {WithTimeout(0)},
		"negative retries":  {WithMaxRetries(-1)},
		"zero batch size":   {WithBatchSize(0)},
		"negative buffer":   {WithBuffering(-1, time.Second)},
		"nil clock":         {WithClock(nil)},
		"nil HTTP client":   {WithHTTPClient(nil)},
	}
	for name, opts := range cases {
		if _, err := New("vgl_sk_test", opts...); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	if _, err := New("  "); err == nil {
		t.Error("New accepted an empty API key")
	}
	if _, err := New("vgl_sk_test", WithBaseURL("https://vigil.example.com/"), WithMaxRetries(0), WithBuffering(0, 0)); err != nil {
		t.Errorf("valid options: %v", err)
	}
}

func TestTrackSendsTheEventWithKeyAndReturnsTheRiskDecision(t *testing.T) {
	svc := newRecordingService(t)
	c := mustNew(t, WithBaseURL(svc.URL))
	at := time.Date(2026, 11, 26, 8, 0, 0, 123456789, time.UTC)
	res, err := c.Track(context.Background(), Event{Event: "auth.login.failure", ActorID: "alice", Timestamp: at, Metadata: map[string]any{"mfa": true}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeAccepted || res.Status != 202 || res.Risk == nil || res.Risk.Score != 55 || res.Risk.Action != ActionChallenge || len(res.Risk.Breakdown) != 1 {
		t.Fatalf("result %+v (risk %+v)", res, res.Risk)
	}
	_, bodies := svc.received()
	want := map[string]any{"event": "auth.login.failure", "actor_id": "alice", "event_id": res.EventID, "timestamp": "2026-11-26T08:00:00.123Z", "metadata": map[string]any{"mfa": true}}
	if fmt.Sprint(bodies[0]) != fmt.Sprint(want) {
		t.Fatalf("sent %v, want %v", bodies[0], want)
	}
	h := svc.headers[0]
	if h.Get("Authorization") != "Bearer vgl_sk_test" || h.Get("Content-Type") != "application/json" || !strings.HasPrefix(h.Get("User-Agent"), "vigil-go/") {
		t.Fatalf("headers %v", h)
	}
}

func TestDroppedEventsAreNoErrorUnlessAskedFor(t *testing.T) {
	svc := newRecordingService(t, 429)
	var handled []error
	c := mustNew(t, WithBaseURL(svc.URL), WithMaxRetries(0), WithErrorHandler(func(err error) { handled = append(handled, err) }))
	ctx := context.Background()
	e := Event{Event: "auth.login.success"}
	if _, err := c.Track(ctx, e); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("429: %v", err)
	}
	// A cooldown drops every event for an hour: a plain `if err != nil { log }` must stay quiet.
	for i := 0; i < 1000; i++ {
		if res, err := c.Track(ctx, e); err != nil || res.Outcome != OutcomeDropped {
			t.Fatalf("in cooldown: %v %v", res, err)
		}
	}
	if _, err := c.TrackBatch(ctx, []Event{e, e}); err != nil {
		t.Fatalf("batch in cooldown: %v", err)
	}
	if s := c.Stats(); s.Dropped != 1002 || len(handled) != 1 || !errors.Is(handled[0], ErrRateLimited) {
		t.Fatalf("stats %+v, handled %v", s, handled)
	}
}

func TestErrorsMatchTheirOutcome(t *testing.T) {
	svc := newRecordingService(t, 400, 500, 429)
	c := mustNew(t, WithBaseURL(svc.URL), WithMaxRetries(0), WithErrDropped())
	ctx := context.Background()
	e := Event{Event: "auth.login.failure"}

	_, err := c.Track(ctx, e)
	var derr *DeliveryError
	if !errors.Is(err, ErrRejected) || !errors.As(err, &derr) || derr.Status != 400 || derr.Code != "CODE_400" || derr.Message != "answer 400" {
		t.Fatalf("400: %v", err)
	}
	if _, err = c.Track(ctx, e); !errors.Is(err, ErrFailed) || errors.Is(err, ErrRejected) {
		t.Fatalf("500: %v", err)
	}
	if _, err = c.Track(ctx, e); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("429: %v", err)
	}
	if res, err := c.Track(ctx, e); !errors.Is(err, ErrDropped) || res.Outcome != OutcomeDropped {
		t.Fatalf("in cooldown: %v %v", res, err)
	}
	if _, err := c.TrackBatch(ctx, []Event{e, e}); !errors.Is(err, ErrDropped) {
		t.Fatalf("batch in cooldown: %v", err)
	} else {
		var berr *BatchError
		if !errors.As(err, &berr) || berr.Undelivered != 2 || berr.Total != 2 {
			t.Fatalf("batch error %v", err)
		}
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Track(ctx, e); !errors.Is(err, ErrClosed) || errors.Is(err, ErrDropped) {
		t.Fatalf("after Close: %v", err)
	}
	if paths, _ := svc.received(); len(paths) != 3 {
		t.Fatalf("%d requests, want 3", len(paths))
	}
}

func TestAcceptedCallsReturnNoError(t *testing.T) {
	svc := newRecordingService(t)
	c := mustNew(t, WithBaseURL(svc.URL), WithBatchSize(2))
	res, err := c.TrackBatch(context.Background(), []Event{{Event: "data.exported"}, {Event: "data.exported"}, {Event: "data.exported"}})
	if err != nil || res != (BatchResult{Accepted: 3}) {
		t.Fatalf("%+v %v", res, err)
	}
	if paths, _ := svc.received(); strings.Join(paths, " ") != "/v1/events/batch /v1/events/batch" {
		t.Fatalf("paths %v", paths)
	}
}

func TestRetriesWaitAJitteredExponentialBackoff(t *testing.T) {
	base := 100 * time.Millisecond
	distinct := map[time.Duration]bool{}
	for run := 0; run < 10; run++ {
		svc := newRecordingService(t, 503, 503, 503, 503)
		var waits []time.Duration
		c := mustNew(t, WithBaseURL(svc.URL), WithMaxRetries(3), WithRetryBackoff(base),
			WithSleep(func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }))
		res, err := c.Track(context.Background(), Event{Event: "auth.login.failure"})
		if res.Outcome != OutcomeFailed || res.Status != 503 || !errors.Is(err, ErrFailed) {
			t.Fatalf("%+v %v", res, err)
		}
		if len(waits) != 3 || c.Stats().Retries != 3 {
			t.Fatalf("waits %v, stats %+v", waits, c.Stats())
		}
		for n, d := range waits {
			full := base << n
			if d < full/2 || d > full {
				t.Fatalf("retry %d waited %v, want between %v and %v", n, d, full/2, full)
			}
			distinct[d] = true
		}
		paths, bodies := svc.received()
		if len(paths) != 4 || bodies[0]["event_id"] != bodies[3]["event_id"] {
			t.Fatalf("%d requests; ids %v %v", len(paths), bodies[0]["event_id"], bodies[len(bodies)-1]["event_id"])
		}
	}
	// 30 random draws: a constant delay would give 3 values.
	if len(distinct) < 10 {
		t.Fatalf("only %d distinct delays in 30 retries: not jittered", len(distinct))
	}
	if jittered(base, 2, 0) != 200*time.Millisecond || jittered(base, 2, 1) != 400*time.Millisecond {
		t.Fatal("jitter bounds")
	}
}

func TestCancelledContextStopsRetrying(t *testing.T) {
	svc := newRecordingService(t, 503, 503, 503)
	ctx, cancel := context.WithCancel(context.Background())
	c := mustNew(t, WithBaseURL(svc.URL), WithMaxRetries(5),
		WithSleep(func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }))
	res, err := c.Track(ctx, Event{Event: "auth.login.failure"})
	if res.Outcome != OutcomeFailed || !errors.Is(err, context.Canceled) || !errors.Is(err, ErrFailed) {
		t.Fatalf("%+v %v", res, err)
	}
	if paths, _ := svc.received(); len(paths) != 1 {
		t.Fatalf("%d requests after cancellation, want 1", len(paths))
	}
}

type panicky struct{}

func (panicky) MarshalJSON() ([]byte, error) { panic("boom") }

func TestUnencodableEventsAreRejectedWithoutPanicking(t *testing.T) {
	svc := newRecordingService(t)
	c := mustNew(t, WithBaseURL(svc.URL))
	// A nil context too: the client falls back to context.Background.
	res, err := c.Track(nil, Event{Event: "custom.x.y", Metadata: map[string]any{"v": panicky{}}})
	if res.Outcome != OutcomeRejected || !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("%+v %v", res, err)
	}
	br, err := c.TrackBatch(context.Background(), []Event{{Event: "custom.x.y", Metadata: map[string]any{"c": make(chan int)}}, {Event: "custom.x.y"}})
	if br.Rejected != 1 || br.Accepted != 1 || !errors.Is(err, ErrRejected) {
		t.Fatalf("%+v %v", br, err)
	}
	if s := c.Stats(); s.Rejected != 2 || s.Accepted != 1 {
		t.Fatalf("stats %+v", s)
	}
	if paths, _ := svc.received(); len(paths) != 1 {
		t.Fatalf("%d requests, want 1", len(paths))
	}
}

func TestBufferedModeSendsWhatTheCallerHandedOver(t *testing.T) {
	svc := newRecordingService(t)
	c := mustNew(t, WithBaseURL(svc.URL), WithBuffering(100, time.Hour))
	meta := map[string]any{"role": "viewer"}
	res, err := c.Track(context.Background(), Event{Event: "account.role.changed", Metadata: meta})
	if err != nil || res.Outcome != OutcomeBuffered {
		t.Fatalf("%+v %v", res, err)
	}
	meta["role"] = "admin" // after the hand-over: not what is sent
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	paths, bodies := svc.received()
	if len(paths) != 1 || paths[0] != "/v1/events/batch" {
		t.Fatalf("paths %v", paths)
	}
	sent := bodies[0]["events"].([]any)[0].(map[string]any)
	if sent["metadata"].(map[string]any)["role"] != "viewer" || sent["event_id"] != res.EventID {
		t.Fatalf("sent %v", sent)
	}
}

func TestErrorHandlerHearsOfBackgroundFailures(t *testing.T) {
	svc := newRecordingService(t, 400)
	var mu sync.Mutex
	var heard []error
	c := mustNew(t, WithBaseURL(svc.URL), WithBuffering(2, time.Hour),
		WithErrorHandler(func(err error) { mu.Lock(); heard = append(heard, err); mu.Unlock() }))
	for i := 0; i < 2; i++ {
		if _, err := c.Track(context.Background(), Event{Event: "data.exported"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(heard) != 1 || !errors.Is(heard[0], ErrRejected) || c.Stats().Rejected != 2 {
		t.Fatalf("heard %v, stats %+v", heard, c.Stats())
	}
}

func TestCloseWaitsForDeliveriesInProgress(t *testing.T) {
	release := make(chan struct{})
	var received sync.WaitGroup
	received.Add(1)
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Done()
		<-release
		w.WriteHeader(http.StatusAccepted)
	}))
	defer svc.Close()
	c := mustNew(t, WithBaseURL(svc.URL), WithTimeout(time.Minute))
	done := make(chan Result)
	go func() {
		res, _ := c.Track(context.Background(), Event{Event: "auth.login.failure"})
		done <- res
	}()
	received.Wait()
	closed := make(chan error)
	go func() { closed <- c.Close(context.Background()) }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a delivery was in progress", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if res := <-done; res.Outcome != OutcomeAccepted {
		t.Fatalf("%+v", res)
	}
}

func TestCloseGivesUpWhenItsContextEnds(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer svc.Close()
	c := mustNew(t, WithBaseURL(svc.URL), WithTimeout(time.Minute), WithBuffering(10, time.Hour))
	_, _ = c.Track(context.Background(), Event{Event: "auth.login.failure"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: %v", err)
	}
	// The abandoned delivery ends (its context is cancelled) and is counted.
	if err := c.waitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.Failed != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestConcurrentUse(t *testing.T) {
	for _, mode := range []string{"direct", "buffered"} {
		t.Run(mode, func(t *testing.T) {
			svc := newRecordingService(t)
			opts := []Option{WithBaseURL(svc.URL), WithBatchSize(7)}
			if mode == "buffered" {
				opts = append(opts, WithBuffering(13, time.Millisecond))
			}
			c := mustNew(t, opts...)
			const goroutines, each = 20, 25
			var wg sync.WaitGroup
			for g := 0; g < goroutines; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for i := 0; i < each; i++ {
						if i%5 == 0 {
							_, _ = c.TrackBatch(context.Background(), []Event{{Event: "data.accessed"}, {Event: "data.accessed"}})
							_ = c.Stats()
						} else {
							_, _ = c.Track(context.Background(), Event{Event: "data.accessed", ActorID: fmt.Sprint(g)})
						}
					}
				}(g)
			}
			wg.Wait()
			if err := c.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := goroutines * (each + each/5) // each fifth call is a batch of two
			ids := map[string]bool{}
			_, bodies := svc.received()
			for _, b := range bodies {
				if events, ok := b["events"].([]any); ok {
					for _, e := range events {
						ids[e.(map[string]any)["event_id"].(string)] = true
					}
				} else {
					ids[b["event_id"].(string)] = true
				}
			}
			if s := c.Stats(); s.Accepted != int64(want) || len(ids) != want {
				t.Fatalf("accepted %d, distinct ids %d, want %d", s.Accepted, len(ids), want)
			}
		})
	}
}

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestEventIDsAreUUIDv7FromTheClientsClock(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	seen := map[string]bool{}
	for i := 0; i < 10000; i++ {
		id := newEventID(now)
		if !uuidV7.MatchString(id) || seen[id] {
			t.Fatalf("id %q (duplicate: %v)", id, seen[id])
		}
		seen[id] = true
	}
	id := newEventID(now)
	if got := strings.ReplaceAll(id, "-", "")[:12]; got != fmt.Sprintf("%012x", now.UnixMilli()) {
		t.Fatalf("time prefix %s of %s", got, id)
	}
}

func TestEventJSON(t *testing.T) {
	data, err := json.Marshal(Event{Event: "auth.login.success"})
	if err != nil || string(data) != `{"event":"auth.login.success"}` {
		t.Fatalf("%s %v", data, err)
	}
	in := `{"event":"api.request","timestamp":1800000000000,"request":{"method":"POST","path":"/login","status":401},"ip":"203.0.113.7"}`
	var e Event
	if err := json.Unmarshal([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	if !e.Timestamp.Equal(time.UnixMilli(1_800_000_000_000)) || e.Request.Status != 401 || e.IP != "203.0.113.7" {
		t.Fatalf("%+v", e)
	}
	out, _ := json.Marshal(e)
	var back Event
	if err := json.Unmarshal(out, &back); err != nil || !back.Timestamp.Equal(e.Timestamp) || back.Request.Path != "/login" {
		t.Fatalf("%s: %+v %v", out, back, err)
	}
	if err := json.Unmarshal([]byte(`{"event":"a.b","timestamp":"yesterday"}`), &e); err == nil {
		t.Fatal("accepted a timestamp that is not one")
	}
}

func TestSystemClockTimersFlushTheBuffer(t *testing.T) {
	svc := newRecordingService(t)
	var mu sync.Mutex
	flushed := make(chan struct{})
	c := mustNew(t, WithBaseURL(svc.URL), WithBuffering(100, 10*time.Millisecond),
		WithHTTPClient(&http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := http.DefaultTransport.RoundTrip(r)
			mu.Lock()
			defer mu.Unlock()
			select {
			case <-flushed:
			default:
				close(flushed)
			}
			return resp, err
		})}))
	if _, err := c.Track(context.Background(), Event{Event: "data.accessed"}); err != nil {
		t.Fatal(err)
	}
	<-flushed // nothing but the flush interval sends it
	if err := c.waitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if paths, _ := svc.received(); len(paths) != 1 || paths[0] != "/v1/events/batch" {
		t.Fatalf("paths %v", paths)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestQueueLimitDropsTheNewestEventsWhenDeliveryLagsBehind(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	received := 0
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Events []json.RawMessage }
		_ = json.NewDecoder(r.Body).Decode(&in)
		<-release
		mu.Lock()
		received += len(in.Events)
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer svc.Close()
	c := mustNew(t, WithBaseURL(svc.URL), WithTimeout(time.Minute), WithBuffering(2, time.Hour), WithQueueLimit(3))
	for i := 0; i < 6; i++ {
		if res, err := c.Track(context.Background(), Event{Event: "data.accessed"}); err != nil || res.Outcome != OutcomeBuffered {
			t.Fatalf("%+v %v", res, err)
		}
	}
	// Three flushes of two events against a limit of three waiting events: one is dropped
	// from the second flush, both from the third.
	if s := c.Stats(); s.Dropped != 3 {
		t.Fatalf("stats %+v", s)
	}
	close(release)
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if s := c.Stats(); received != 3 || s.Accepted != 3 {
		t.Fatalf("received %d, stats %+v", received, s)
	}
}

func TestAnOverloadPauseReplacesTheBackoffAndTheErrorHandlerHearsOfWhatIsGivenUp(t *testing.T) {
	var requests int
	var mu sync.Mutex
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		requests++
		seconds := 30
		if requests == 1 {
			seconds = 2
		}
		mu.Unlock()
		w.Header().Set("Retry-After", fmt.Sprint(seconds))
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, `{"error":"OVERLOADED","message":"retry in %d seconds","retry_after":%d}`, seconds, seconds)
	}))
	t.Cleanup(svc.Close)
	var waits []time.Duration
	var heard []error
	c := mustNew(t, WithBaseURL(svc.URL), WithClock(newFakeClock()),
		WithSleep(func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }),
		WithErrorHandler(func(err error) { heard = append(heard, err) }))

	first, err := c.Track(context.Background(), Event{Event: "auth.login.failure"})
	// The first pause (2 s) fits the 2 s timeout: waited through the sleep; the second (30 s) does not.
	if first.Outcome != OutcomeFailed || first.Status != 503 || !errors.Is(err, ErrFailed) || len(waits) != 1 || waits[0] != 2*time.Second {
		t.Fatalf("%+v %v, waits %v", first, err, waits)
	}
	second, err := c.Track(context.Background(), Event{Event: "auth.login.failure"})
	if second.Outcome != OutcomeFailed || second.Status != 0 || !errors.Is(err, ErrFailed) {
		t.Fatalf("%+v %v", second, err)
	}
	s := c.Stats()
	mu.Lock()
	defer mu.Unlock()
	if requests != 2 || len(heard) != 2 || s.Sent != 1 || s.Failed != 2 || s.Retries != 1 || s.Dropped != 0 || s.InCooldown {
		t.Fatalf("%d requests, %d errors heard, stats %+v", requests, len(heard), s)
	}
}
