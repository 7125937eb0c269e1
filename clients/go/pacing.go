package vigil

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxPacingDelay is the longest a send waits for room in the service's rate-limit
// policies before the event is dropped (see WithMaxPacingDelay).
const DefaultMaxPacingDelay = time.Second

// policy is one rate-limit policy the service named in RateLimit-Policy: a bucket of quota
// units in which a unit taken at time s (unix ms on the client's clock) is held until
// s + 1100 × w + 100 ms. The service's sliding windows keep a unit at most 1.1 × w; 100 ms cover
// the network's jitter between two requests. These are the conformance kit's pacing rules, so
// every client of the family takes the same decisions.
type policy struct {
	quota        int
	windowS      int64
	countsEvents bool
	held         []int64 // oldest first; future times are reservations of waiting requests
}

func newPolicy(name string, quota int, windowS int64) *policy {
	// "second" counts requests (a batch is one); "minute" and any other policy count events.
	return &policy{quota: quota, windowS: windowS, countsEvents: name != "second"}
}

func (p *policy) holdMs() int64 { return p.windowS*1100 + 100 }

func (p *policy) cost(events int) int {
	n := 1
	if p.countsEvents && events > 1 {
		n = events
	}
	if n > p.quota {
		n = p.quota
	}
	return n
}

func (p *policy) release(nowMs int64) {
	i := 0
	for i < len(p.held) && p.held[i]+p.holdMs() <= nowMs {
		i++
	}
	p.held = p.held[i:]
}

// earliest is when a request of this cost fits: now, or when enough held units are released.
func (p *policy) earliest(nowMs int64, cost int) int64 {
	n := len(p.held)
	if n+cost <= p.quota {
		return nowMs
	}
	return p.held[n-p.quota+cost-1] + p.holdMs()
}

func (p *policy) take(at int64, cost int) {
	i := sort.Search(len(p.held), func(i int) bool { return p.held[i] > at })
	units := make([]int64, 0, len(p.held)+cost)
	units = append(units, p.held[:i]...)
	for k := 0; k < cost; k++ {
		units = append(units, at)
	}
	p.held = append(units, p.held[i:]...)
}

// pacer decides how long a request waits, or that it would wait too long. The client calls it
// under its mutex.
type pacer struct {
	maxDelayMs int64
	policies   map[string]*policy
	// learned is whether an answer has named the policies; until then the smallest plan is assumed.
	learned bool
}

func newPacer(maxDelay time.Duration) *pacer {
	return &pacer{
		maxDelayMs: maxDelay.Milliseconds(),
		// The smallest plan (Free), assumed until the service names the key's policies.
		policies: map[string]*policy{"second": newPolicy("second", 5, 1), "minute": newPolicy("minute", 30, 60)},
	}
}

// reserve returns how long a request of events events must wait, its units taken, or false
// when the wait would exceed the bound (nothing is taken then).
func (p *pacer) reserve(nowMs int64, events int) (time.Duration, bool) {
	at := nowMs
	for _, pol := range p.policies {
		pol.release(nowMs)
		if t := pol.earliest(nowMs, pol.cost(events)); t > at {
			at = t
		}
	}
	if at-nowMs > p.maxDelayMs {
		return 0, false
	}
	for _, pol := range p.policies {
		pol.take(at, pol.cost(events))
	}
	return time.Duration(at-nowMs) * time.Millisecond, true
}

// settle moves the units a request took at takenMs to answeredMs, when its answer arrived: they
// are held from then on. The service counted the request when it arrived, after it was handed
// over and before it was answered, so a hold that starts at the answer never ends early.
func (p *pacer) settle(events int, takenMs, answeredMs int64) {
	if answeredMs <= takenMs {
		return
	}
	for _, pol := range p.policies {
		cost := pol.cost(events)
		for i := len(pol.held) - 1; i >= 0 && cost > 0; i-- {
			if pol.held[i] == takenMs {
				pol.held = append(pol.held[:i], pol.held[i+1:]...)
				pol.take(answeredMs, 1)
				cost--
			}
		}
	}
}

// learn takes the policies of an answer's RateLimit-Policy, if it names any; held units are
// kept by policy name. RateLimit (what is left) is informational: pacing counts this client's
// own requests.
func (p *pacer) learn(header http.Header) {
	policies := map[string]*policy{}
	for _, item := range parseItems(strings.Join(header.Values("RateLimit-Policy"), ",")) {
		q, okQ := item.params["q"]
		w, okW := item.params["w"]
		if !okQ || !okW || q < 1 || w < 1 {
			continue
		}
		pol, ok := p.policies[item.name]
		if !ok {
			pol = newPolicy(item.name, int(q), w)
		}
		pol.quota, pol.windowS = int(q), w
		policies[item.name] = pol
	}
	if len(policies) > 0 {
		p.policies = policies
		p.learned = true
	}
}

type sfItem struct {
	name   string
	params map[string]int64
}

// parseItems reads a structured-field list such as `"second";q=5;w=1, "minute";q=30;w=60`:
// each member's name and its integer parameters; members that cannot be read are skipped.
func parseItems(value string) []sfItem {
	if len(value) > 4096 {
		value = value[:4096]
	}
	var items []sfItem
	for _, member := range strings.Split(value, ",") {
		parts := strings.Split(member, ";")
		name := strings.Trim(strings.TrimSpace(parts[0]), `"`)
		if name == "" {
			continue
		}
		item := sfItem{name: name, params: map[string]int64{}}
		for _, part := range parts[1:] {
			key, number, found := strings.Cut(strings.TrimSpace(part), "=")
			if !found {
				continue
			}
			if n, err := strconv.ParseInt(strings.TrimSpace(number), 10, 64); err == nil {
				item.params[strings.TrimSpace(key)] = n
			}
		}
		items = append(items, item)
	}
	return items
}
