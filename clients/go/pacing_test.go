package vigil

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

const freePolicy = `"second";q=5;w=1, "minute";q=30;w=60`

// policyService answers 202 with the given RateLimit-Policy and counts the requests.
func policyService(t *testing.T, policy string) (*httptest.Server, func() int) {
	var mu sync.Mutex
	n := 0
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		if policy != "" {
			w.Header().Set("RateLimit-Policy", policy)
		}
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprint(w, `{"risk":{"score":10,"level":"low","action":"allow","breakdown":[{"source":"base","points":10}]}}`)
	}))
	t.Cleanup(s.Close)
	return s, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// sleeps is the injected sleep: it records each wait and moves the fake clock by it.
type sleeps struct {
	clock *fakeClock
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	s.clock.Advance(d)
	return nil
}

func TestPolicyFieldsAreReadAsStructuredFieldLists(t *testing.T) {
	items := parseItems(`"second";q=5;w=1, "minute";r=x;t=3`)
	if len(items) != 2 || items[0].name != "second" || items[0].params["q"] != 5 || items[0].params["w"] != 1 || items[1].name != "minute" || len(items[1].params) != 1 || items[1].params["t"] != 3 {
		t.Fatalf("%+v", items)
	}
	if len(parseItems("")) != 0 {
		t.Fatal("empty field")
	}
}

func TestPacerAssumesTheSmallestPlanBeforeAnyAnswer(t *testing.T) {
	p := newPacer(time.Second)
	for i := 0; i < 5; i++ {
		if d, ok := p.reserve(0, 1); !ok || d != 0 {
			t.Fatalf("send %d: %v %v", i+1, d, ok)
		}
	}
	// The sixth request in the second waits for the first unit's release (1.1 s and 100 ms of
	// jitter): longer than allowed.
	if _, ok := p.reserve(0, 1); ok || p.learned {
		t.Fatal("the sixth request was not dropped")
	}
	slow := newPacer(2 * time.Second)
	for i := 0; i < 5; i++ {
		slow.reserve(0, 1)
	}
	for i := 0; i < 2; i++ {
		if d, ok := slow.reserve(0, 1); !ok || d != 1200*time.Millisecond {
			t.Fatalf("request %d: %v %v", i+6, d, ok)
		}
	}
}

func TestPacerCountsEventsPerMinuteAndRequestsPerSecond(t *testing.T) {
	p := newPacer(time.Second)
	p.learn(http.Header{"Ratelimit-Policy": {freePolicy}})
	if _, ok := p.reserve(0, 25); !ok || !p.learned {
		t.Fatal("25 events")
	}
	if _, ok := p.reserve(0, 5); !ok {
		t.Fatal("5 more events")
	}
	if _, ok := p.reserve(0, 1); ok {
		t.Fatal("the 31st event of the minute was not dropped")
	}
	if _, ok := p.reserve(65_099, 1); ok {
		t.Fatal("sent 1001 ms before the minute's units are released")
	}
	if d, ok := p.reserve(66_100, 1); !ok || d != 0 {
		t.Fatalf("66.1 s later: %v %v", d, ok)
	}
}

func TestPacerKeepsItsPoliciesWhenAnAnswerNamesNone(t *testing.T) {
	p := newPacer(0)
	p.learn(http.Header{"Ratelimit-Policy": {`"second";q=2;w=1`}})
	p.learn(http.Header{})
	p.learn(http.Header{"Ratelimit-Policy": {`"second";w=1, minute`}})
	_, first := p.reserve(0, 1)
	_, second := p.reserve(0, 1)
	_, third := p.reserve(0, 1)
	if !first || !second || third {
		t.Fatalf("%v %v %v", first, second, third)
	}
}

func TestABurstWaitsForRoomThenIsDroppedAndCounted(t *testing.T) {
	svc, requests := policyService(t, freePolicy)
	clock := newFakeClock()
	s := &sleeps{clock: clock}
	c := mustNew(t, WithBaseURL(svc.URL), WithClock(clock), WithSleep(s.sleep), WithMaxPacingDelay(1500*time.Millisecond))
	outcomes := map[Outcome]int{}
	for i := 0; i < 40; i++ {
		res, err := c.Track(context.Background(), Event{Event: "auth.login.success"})
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		outcomes[res.Outcome]++
	}
	st := c.Stats()
	// Thirty events a minute: five at once, then the first of each next five waits for their release.
	if requests() != 30 || outcomes[OutcomeAccepted] != 30 || outcomes[OutcomeDropped] != 10 || st.Paced != 5 || st.PacedDropped != 10 || st.Dropped != 10 || st.Sent != 30 || st.InCooldown {
		t.Fatalf("%d requests, outcomes %v, stats %+v", requests(), outcomes, st)
	}
	for _, w := range s.waits {
		if w != 1200*time.Millisecond {
			t.Fatalf("waits %v", s.waits)
		}
	}
}

func TestAPaidPlanAnnouncedByTheServiceLiftsTheAssumedOne(t *testing.T) {
	svc, requests := policyService(t, `"second";q=100;w=1, "minute";q=1000;w=60`)
	c := mustNew(t, WithBaseURL(svc.URL), WithClock(newFakeClock()), WithMaxPacingDelay(0))
	for i := 0; i < 50; i++ {
		if res, _ := c.Track(context.Background(), Event{Event: "auth.login.success"}); res.Outcome != OutcomeAccepted {
			t.Fatalf("event %d: %+v", i, res)
		}
	}
	if requests() != 50 || c.Stats().Paced != 0 {
		t.Fatalf("%d requests, %+v", requests(), c.Stats())
	}
}

func TestGoroutinesSharingAClientNeverGoOverThePolicy(t *testing.T) {
	svc, requests := policyService(t, freePolicy)
	c := mustNew(t, WithBaseURL(svc.URL), WithClock(newFakeClock()), WithMaxPacingDelay(0))
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.Track(context.Background(), Event{Event: "auth.login.success"})
		}()
	}
	wg.Wait()
	if st := c.Stats(); requests() != 5 || st.Accepted != 5 || st.PacedDropped != 15 {
		t.Fatalf("%d requests, %+v", requests(), st)
	}
}
