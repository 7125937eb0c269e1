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

// spent is tokens of a policy taken at a time (unix milliseconds on the client's clock); a
// future time is a reservation.
type spent struct {
	at     int64
	tokens int
}

// policy is one rate-limit policy the service announced in RateLimit-Policy, as a token
// bucket whose spent tokens come back one window (plus the service's tolerance) later.
type policy struct {
	quota        int
	windowMs     int64
	countsEvents bool
	spent        []spent // sorted by at
}

func newPolicy(name string, quota int, windowSeconds int64) *policy {
	// "second" counts requests (a batch is one); "minute" and any other policy count events.
	return &policy{quota: quota, windowMs: windowSeconds * 1000, countsEvents: name != "second"}
}

// spanMs is how long a spent token stays spent: the window plus a tenth of it (at most one
// second), the longest the service's sliding windows may still count a unit.
func (p *policy) spanMs() int64 {
	tolerance := p.windowMs / 10
	if tolerance > 1000 {
		tolerance = 1000
	}
	return p.windowMs + tolerance
}

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

func (p *policy) forget(nowMs int64) {
	i := 0
	for i < len(p.spent) && p.spent[i].at <= nowMs-p.spanMs() {
		i++
	}
	p.spent = p.spent[i:]
}

func (p *policy) used(atMs int64) int {
	n := 0
	for _, s := range p.spent {
		if s.at > atMs-p.spanMs() {
			n += s.tokens
		}
	}
	return n
}

// earliest is the first time from atMs on at which cost tokens are free.
func (p *policy) earliest(atMs int64, cost int) int64 {
	used := p.used(atMs)
	if used+cost <= p.quota {
		return atMs
	}
	for _, s := range p.spent {
		if s.at <= atMs-p.spanMs() {
			continue
		}
		used -= s.tokens
		if used+cost <= p.quota {
			return s.at + p.spanMs()
		}
	}
	return atMs
}

func (p *policy) insert(s spent) {
	i := sort.Search(len(p.spent), func(i int) bool { return p.spent[i].at > s.at })
	p.spent = append(p.spent, spent{})
	copy(p.spent[i+1:], p.spent[i:])
	p.spent[i] = s
}

// pacer decides how long a send waits, or that it would wait too long. The client calls it
// under its mutex.
type pacer struct {
	maxDelayMs int64
	policies   map[string]*policy
	lastMs     int64
	// seen is whether an answer has told the policies; until then the smallest plan is assumed.
	seen bool
}

func newPacer(maxDelay time.Duration) *pacer {
	return &pacer{
		maxDelayMs: maxDelay.Milliseconds(),
		// The smallest plan (Free), assumed until the service says otherwise.
		policies: map[string]*policy{"second": newPolicy("second", 5, 1), "minute": newPolicy("minute", 30, 60)},
	}
}

// reserve returns how long a send of events events must wait, its tokens taken, or false
// when the wait would exceed the bound (nothing is taken then).
func (p *pacer) reserve(nowMs int64, events int) (time.Duration, bool) {
	if len(p.policies) == 0 {
		return 0, true
	}
	start := nowMs
	if p.lastMs > start {
		start = p.lastMs
	}
	at := start
	for _, pol := range p.policies {
		pol.forget(nowMs)
		if t := pol.earliest(start, pol.cost(events)); t > at {
			at = t
		}
	}
	if at-nowMs > p.maxDelayMs {
		return 0, false
	}
	for _, pol := range p.policies {
		pol.insert(spent{at: at, tokens: pol.cost(events)})
	}
	p.lastMs = at
	return time.Duration(at-nowMs) * time.Millisecond, true
}

// observe takes the policies and what is left of them from an answer's header fields.
func (p *pacer) observe(nowMs int64, status int, header http.Header) {
	announced := parseItems(strings.Join(header.Values("RateLimit-Policy"), ","))
	if len(announced) == 0 {
		// A successful answer without policies: the service does not announce them, and the 429
		// cooldown is what protects it. Other answers may come from a proxy: keep pacing.
		if status >= 200 && status < 300 {
			p.policies = map[string]*policy{}
			p.seen = true
		}
		return
	}
	p.seen = true
	policies := map[string]*policy{}
	for _, item := range announced {
		q, okQ := item.params["q"]
		w, okW := item.params["w"]
		if !okQ || !okW || q < 1 || w < 1 {
			continue
		}
		pol, ok := p.policies[item.name]
		if !ok {
			pol = newPolicy(item.name, int(q), w)
		}
		pol.quota, pol.windowMs = int(q), w*1000
		policies[item.name] = pol
	}
	p.policies = policies
	for _, item := range parseItems(strings.Join(header.Values("RateLimit"), ",")) {
		pol, ok := p.policies[item.name]
		remaining, okR := item.params["r"]
		if !ok || !okR {
			continue
		}
		reset := item.params["t"]
		if remaining < 0 {
			remaining = 0
		}
		if reset < 0 {
			reset = 0
		}
		// The service counts more than this client spent (other processes share the key): the
		// difference is spent until the window frees it.
		if missing := pol.quota - pol.used(nowMs) - int(remaining); missing > 0 {
			pol.insert(spent{at: nowMs + reset*1000 - pol.spanMs(), tokens: missing})
		}
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
