package vigil

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// CooldownDuration is how long the client stays silent after the first 429 (except probes).
	CooldownDuration = time.Hour
	// ProbePeriod divides a cooldown: at most one probe is sent per period, counted from its start.
	ProbePeriod = 5 * time.Minute
	// MaxOverloadPause is the longest pause an overload answer (503 with Retry-After) imposes,
	// whatever it asks.
	MaxOverloadPause = time.Minute
	// Version is this client's version, sent in the User-Agent header.
	Version = "0.1.0"

	maxAnswerBytes = 1 << 20
)

// Client delivers events to Vigil. Create it with New; it is safe for concurrent use.
type Client struct {
	cfg       config
	auth      string
	eventsURL string
	batchURL  string
	// bg bounds background deliveries (buffered flushes, middleware events); Close cancels it
	// when its context ends before they are done.
	bg     context.Context
	stopBG context.CancelFunc

	mu            sync.Mutex
	rand          *rand.Rand
	cooling       bool
	cooldownStart time.Time
	// pausedUntil is the end of the overload pause (zero: none).
	pausedUntil      time.Time
	probedPeriod     int64
	batchUnavailable bool
	buffer           []encodedEvent
	timer            Timer
	timerGen         uint64
	jobs             []job
	queued           int // events in jobs not finished yet
	working          bool
	busy             int
	idle             chan struct{}
	closed           bool
	stats            Stats
	pacer            *pacer
	// firstSend keeps requests one at a time until an answer has told the policies, so the
	// others pace to what the service announced, not to the smallest plan.
	firstSend sync.Mutex
}

type encodedEvent struct {
	id   string
	body []byte
}

// job is background work, run in order by one goroutine so batches leave in the order their
// events arrived.
type job struct {
	events []encodedEvent // sent through the batch endpoint
	single *encodedEvent  // sent alone to the single-event endpoint
	probe  bool
	done   chan struct{}
}

// delivery is what one request (with its retries) produced.
type delivery struct {
	outcome Outcome
	status  int
	risk    *Risk
	code    string
	message string
	err     error
}

type gate int

const (
	gateSend gate = iota
	gateProbe
	gateDrop
)

// New returns a client that authenticates with apiKey, a secret (vgl_sk_…) or publishable
// (vgl_pk_…) key. It returns an error only for an empty key or an invalid option.
func New(apiKey string, opts ...Option) (*Client, error) {
	if strings.TrimSpace(apiKey) == "" {
		return nil, fmt.Errorf("vigil: empty API key")
	}
	cfg := config{
		baseURL:       DefaultBaseURL,
		timeout:       DefaultTimeout,
		maxRetries:    DefaultMaxRetries,
		retryBackoff:  DefaultRetryBackoff,
		batchSize:     DefaultBatchSize,
		bufferSize:    DefaultBufferSize,
		flushInterval: DefaultFlushInterval,
		queueLimit:    DefaultQueueLimit,
		clock:         SystemClock{},
		sleep:         sleepContext,
		maxPacing:     DefaultMaxPacingDelay,
	}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	if cfg.httpClient == nil {
		cfg.httpClient = &http.Client{}
	}
	var seed [8]byte
	if _, err := crand.Read(seed[:]); err != nil {
		binary.LittleEndian.PutUint64(seed[:], uint64(time.Now().UnixNano()))
	}
	bg, stop := context.WithCancel(context.Background())
	return &Client{
		cfg:       cfg,
		auth:      "Bearer " + apiKey,
		eventsURL: cfg.baseURL + "/v1/events",
		batchURL:  cfg.baseURL + "/v1/events/batch",
		bg:        bg,
		stopBG:    stop,
		// Each client draws its own jitter, so clients started together do not retry together.
		rand:  rand.New(rand.NewSource(int64(binary.LittleEndian.Uint64(seed[:])))),
		idle:  make(chan struct{}),
		pacer: newPacer(cfg.maxPacing),
	}, nil
}

// Track delivers one event. In direct mode it returns once the service answered (or the
// retries are exhausted, or ctx is done), with the risk decision of an accepted event. In
// buffered mode it returns at once with OutcomeBuffered. The error is nil when the event was
// accepted or buffered, else a *DeliveryError; ignoring it loses nothing but the information.
func (c *Client) Track(ctx context.Context, e Event) (res Result, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	c.begin()
	defer c.end()
	defer func() {
		if p := recover(); p != nil {
			var derr *DeliveryError
			res, derr = c.rejected(res.EventID, fmt.Errorf("unexpected panic: %v", p))
			err = derr
		}
	}()
	ev, encErr := c.encode(e)
	res.EventID = ev.id
	if encErr != nil {
		res, derr := c.rejected(ev.id, encErr)
		return res, derr
	}
	c.mu.Lock()
	if c.closed {
		c.stats.Dropped++
		c.mu.Unlock()
		return Result{Outcome: OutcomeDropped, EventID: ev.id}, &DeliveryError{Outcome: OutcomeDropped, closed: true}
	}
	g := c.gateLocked()
	switch {
	case g == gateDrop:
		c.stats.Dropped++
		c.mu.Unlock()
		if derr := c.droppedError(); derr != nil {
			return Result{Outcome: OutcomeDropped, EventID: ev.id}, derr
		}
		return Result{Outcome: OutcomeDropped, EventID: ev.id}, nil
	case c.cfg.buffered && g == gateSend:
		givenUp := c.bufferLocked(ev)
		c.mu.Unlock()
		if givenUp > 0 {
			return Result{Outcome: OutcomeFailed, EventID: ev.id}, c.report(&DeliveryError{Outcome: OutcomeFailed, Err: errBufferFullDuringPause})
		}
		return Result{Outcome: OutcomeBuffered, EventID: ev.id}, nil
	case c.cfg.buffered:
		c.enqueueLocked(job{single: &ev, probe: true})
		c.mu.Unlock()
		return Result{Outcome: OutcomeBuffered, EventID: ev.id}, nil
	}
	c.mu.Unlock()
	res, derr := c.deliverOne(ctx, ev, g == gateProbe)
	if derr != nil {
		return res, derr
	}
	return res, nil
}

// TrackBatch delivers events in chunks of the batch size, in order (or buffers them in
// buffered mode) and counts what happened to them. The error is nil when every event was
// accepted or buffered, else a *BatchError.
func (c *Client) TrackBatch(ctx context.Context, events []Event) (res BatchResult, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	c.begin()
	defer c.end()
	var first *DeliveryError
	defer func() {
		if p := recover(); p != nil {
			c.mu.Lock()
			c.stats.Rejected += int64(len(events))
			c.mu.Unlock()
			res = BatchResult{Rejected: len(events)}
			first = c.report(&DeliveryError{Outcome: OutcomeRejected, Err: fmt.Errorf("unexpected panic: %v", p)})
		}
		err = batchError(res, first, c.cfg.errDropped)
	}()
	list := make([]encodedEvent, 0, len(events))
	for _, e := range events {
		ev, encErr := c.encode(e)
		if encErr != nil {
			_, derr := c.rejected(ev.id, encErr)
			res.Rejected++
			first = firstOf(first, derr)
			continue
		}
		list = append(list, ev)
	}
	if len(list) == 0 {
		return res, nil
	}
	c.mu.Lock()
	if c.closed {
		c.stats.Dropped += int64(len(list))
		c.mu.Unlock()
		res.Dropped += len(list)
		first = firstOf(first, &DeliveryError{Outcome: OutcomeDropped, closed: true})
		return res, nil
	}
	g := c.gateLocked()
	if g == gateSend {
		if c.cfg.buffered {
			givenUp := c.bufferLocked(list...)
			c.mu.Unlock()
			res.Buffered += len(list) - givenUp
			res.Failed += givenUp
			if givenUp > 0 {
				first = firstOf(first, c.report(&DeliveryError{Outcome: OutcomeFailed, Err: errBufferFullDuringPause}))
			}
			return res, nil
		}
		c.mu.Unlock()
		sent, sendErr := c.sendEvents(ctx, list)
		merge(&res, sent)
		first = firstOf(first, sendErr)
		return res, nil
	}
	// In cooldown: the first event of the call is this period's probe, the others are dropped.
	dropped := len(list)
	if g == gateProbe {
		dropped--
	}
	c.stats.Dropped += int64(dropped)
	res.Dropped += dropped
	if dropped > 0 {
		first = firstOf(first, c.droppedError())
	}
	if g == gateProbe && c.cfg.buffered {
		c.enqueueLocked(job{single: &list[0], probe: true})
		c.mu.Unlock()
		res.Buffered++
		return res, nil
	}
	c.mu.Unlock()
	if g == gateProbe {
		r, derr := c.deliverOne(ctx, list[0], true)
		res.add(r.Outcome, 1)
		first = firstOf(first, derr)
	}
	return res, nil
}

// Flush sends what the buffer holds and returns once it and everything handed over before
// it are delivered or given up, or when ctx is done.
func (c *Client) Flush(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	done := make(chan struct{})
	c.mu.Lock()
	c.flushLocked(done)
	c.mu.Unlock()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close flushes the buffer and waits until no delivery is in progress, or until ctx is done,
// in which case deliveries still in progress are abandoned. Events handed over afterwards are
// dropped (ErrClosed). Calling Close more than once is harmless.
func (c *Client) Close(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		c.flushLocked(nil)
	}
	c.mu.Unlock()
	err := c.waitIdle(ctx)
	c.stopBG()
	return err
}

// Stats returns the counts since the client was created and whether it is in a cooldown now.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.InCooldown = c.inCooldownLocked(c.cfg.clock.Now())
	return s
}

// trackInBackground hands an event over without waiting: buffered mode buffers it, direct
// mode sends it from the background goroutine. Close waits for it.
func (c *Client) trackInBackground(e Event) {
	c.begin()
	defer c.end()
	defer func() {
		if p := recover(); p != nil {
			_, _ = c.rejected("", fmt.Errorf("unexpected panic: %v", p))
		}
	}()
	ev, err := c.encode(e)
	if err != nil {
		_, _ = c.rejected(ev.id, err)
		return
	}
	c.mu.Lock()
	if c.closed {
		c.stats.Dropped++
		c.mu.Unlock()
		return
	}
	givenUp := 0
	switch g := c.gateLocked(); {
	case g == gateDrop:
		c.stats.Dropped++
	case g == gateSend && c.cfg.buffered:
		givenUp = c.bufferLocked(ev)
	default:
		c.enqueueLocked(job{single: &ev, probe: g == gateProbe})
	}
	c.mu.Unlock()
	if givenUp > 0 {
		c.report(&DeliveryError{Outcome: OutcomeFailed, Err: errBufferFullDuringPause})
	}
}

func (c *Client) encode(e Event) (ev encodedEvent, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("encoding the event: unexpected panic: %v", p)
		}
	}()
	if e.EventID == "" {
		e.EventID = newEventID(c.cfg.clock.Now())
	}
	ev.id = e.EventID
	// Encoded now, so later changes to the caller's maps do not change what is sent.
	ev.body, err = json.Marshal(e)
	if err != nil {
		err = fmt.Errorf("encoding the event: %w", err)
	}
	return ev, err
}

func (c *Client) rejected(id string, cause error) (Result, *DeliveryError) {
	c.mu.Lock()
	c.stats.Rejected++
	c.mu.Unlock()
	return Result{Outcome: OutcomeRejected, EventID: id}, c.report(&DeliveryError{Outcome: OutcomeRejected, Err: cause})
}

// report passes an error to the error handler; drops are silent by design.
func (c *Client) report(err *DeliveryError) *DeliveryError {
	if err != nil && err.Outcome != OutcomeDropped && c.cfg.onError != nil {
		func() {
			defer func() { _ = recover() }()
			c.cfg.onError(err)
		}()
	}
	return err
}

func (c *Client) inCooldownLocked(now time.Time) bool {
	if c.cooling && now.Sub(c.cooldownStart) >= CooldownDuration {
		c.cooling = false
	}
	return c.cooling
}

// gateLocked decides whether an event produced now is sent, sent as this period's probe, or
// dropped.
func (c *Client) gateLocked() gate {
	now := c.cfg.clock.Now()
	if !c.inCooldownLocked(now) {
		return gateSend
	}
	period := int64(now.Sub(c.cooldownStart) / ProbePeriod)
	if period <= c.probedPeriod {
		return gateDrop
	}
	c.probedPeriod = period
	return gateProbe
}

func (c *Client) enterCooldownLocked() {
	now := c.cfg.clock.Now()
	if c.inCooldownLocked(now) {
		return
	}
	c.cooling = true
	c.cooldownStart = now
	c.probedPeriod = 0
	c.stats.Dropped += int64(len(c.takeBufferLocked()))
}

// bufferLocked buffers events and returns how many were given up (counted Failed) because an
// overload pause holds a full buffer.
func (c *Client) bufferLocked(events ...encodedEvent) int {
	givenUp := 0
	for _, ev := range events {
		// A full buffer is only kept while an overload pause holds its flush: it grows no further.
		if len(c.buffer) >= c.cfg.bufferSize {
			givenUp++
			continue
		}
		c.buffer = append(c.buffer, ev)
		if len(c.buffer) >= c.cfg.bufferSize {
			c.flushWhenUnpausedLocked()
		}
	}
	if len(c.buffer) > 0 && c.timer == nil {
		c.armTimerLocked(c.cfg.flushInterval)
	}
	c.stats.Failed += int64(givenUp)
	return givenUp
}

func (c *Client) armTimerLocked(d time.Duration) {
	if c.timer != nil {
		c.timer.Stop()
	}
	c.timerGen++
	gen := c.timerGen
	c.timer = c.cfg.clock.AfterFunc(d, func() { c.flushOnTimer(gen) })
}

// flushWhenUnpausedLocked is a flush by count or by time: at once, or at the end of an overload
// pause longer than the timeout.
func (c *Client) flushWhenUnpausedLocked() {
	left := c.pauseLeftLocked(c.cfg.clock.Now())
	if left <= c.cfg.timeout {
		c.flushLocked(nil)
		return
	}
	c.armTimerLocked(left)
}

// pauseLeftLocked is what is left of the overload pause (0 when there is none).
func (c *Client) pauseLeftLocked(now time.Time) time.Duration {
	if c.pausedUntil.IsZero() {
		return 0
	}
	left := c.pausedUntil.Sub(now)
	if left <= 0 {
		c.pausedUntil = time.Time{}
		return 0
	}
	return left
}

// overloadPause is the pause an overload answer asks for: a 503 whose Retry-After is a whole
// number of seconds, or without that field a JSON body whose retry_after is one. false for
// every other answer, a 503 without either included (an ordinary 5xx).
func overloadPause(status int, header http.Header, body []byte) (time.Duration, bool) {
	if status != http.StatusServiceUnavailable {
		return 0, false
	}
	seconds := int64(-1)
	if values := header.Values("Retry-After"); len(values) > 0 {
		if n, err := strconv.ParseUint(strings.TrimSpace(values[0]), 10, 63); err == nil {
			seconds = int64(n)
		} else if errors.Is(err, strconv.ErrRange) {
			seconds = int64(MaxOverloadPause / time.Second)
		}
	} else {
		var parsed struct {
			RetryAfter *json.Number `json:"retry_after"`
		}
		if json.Unmarshal(body, &parsed) == nil && parsed.RetryAfter != nil {
			if n, err := strconv.ParseUint(parsed.RetryAfter.String(), 10, 63); err == nil {
				seconds = int64(n)
			}
		}
	}
	if seconds < 0 {
		return 0, false
	}
	if seconds > int64(MaxOverloadPause/time.Second) {
		return MaxOverloadPause, true
	}
	return time.Duration(seconds) * time.Second, true
}

func (c *Client) flushOnTimer(gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// A timer whose buffer was already taken (by count, Flush or a cooldown) has nothing to do.
	if gen != c.timerGen {
		return
	}
	c.timer = nil
	c.flushWhenUnpausedLocked()
}

// flushLocked queues the buffer for sending; with done, it queues a job even for an empty
// buffer, so done closes once everything queued before is finished.
func (c *Client) flushLocked(done chan struct{}) {
	events := c.takeBufferLocked()
	if len(events) > 0 || done != nil {
		c.enqueueLocked(job{events: events, done: done})
	}
}

func (c *Client) takeBufferLocked() []encodedEvent {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	c.timerGen++
	events := c.buffer
	c.buffer = nil
	return events
}

func (c *Client) enqueueLocked(j job) {
	n := j.size()
	if over := c.queued + n - c.cfg.queueLimit; over > 0 && n > 0 {
		// Deliveries are slower than the application produces events: the newest events are
		// dropped rather than memory growing without bound.
		if over > n {
			over = n
		}
		c.stats.Dropped += int64(over)
		if j.single != nil {
			j.single = nil
		} else {
			j.events = j.events[:n-over]
		}
		if j.size() == 0 && j.done == nil {
			return
		}
	}
	c.queued += j.size()
	c.jobs = append(c.jobs, j)
	c.busy++
	if !c.working {
		c.working = true
		go c.work()
	}
}

// size is how many events a job sends.
func (j job) size() int {
	if j.single != nil {
		return 1
	}
	return len(j.events)
}

// work runs queued jobs in order and ends when the queue is empty, so an idle client holds
// no goroutine.
func (c *Client) work() {
	for {
		c.mu.Lock()
		if len(c.jobs) == 0 {
			c.working = false
			c.mu.Unlock()
			return
		}
		j := c.jobs[0]
		c.jobs[0] = job{}
		c.jobs = c.jobs[1:]
		c.mu.Unlock()
		c.run(j)
		if j.done != nil {
			close(j.done)
		}
		c.mu.Lock()
		c.queued -= j.size()
		c.mu.Unlock()
		c.end()
	}
}

func (c *Client) run(j job) {
	defer func() {
		if p := recover(); p != nil {
			_, _ = c.rejected("", fmt.Errorf("unexpected panic: %v", p))
		}
	}()
	if j.single != nil {
		_, _ = c.deliverOne(c.bg, *j.single, j.probe)
	} else if len(j.events) > 0 {
		_, _ = c.sendEvents(c.bg, j.events)
	}
}

func (c *Client) begin() {
	c.mu.Lock()
	c.busy++
	c.mu.Unlock()
}

func (c *Client) end() {
	c.mu.Lock()
	c.busy--
	if c.busy == 0 {
		close(c.idle)
		c.idle = make(chan struct{})
	}
	c.mu.Unlock()
}

// waitIdle returns when no call is in progress and no background job is queued or running.
func (c *Client) waitIdle(ctx context.Context) error {
	for {
		c.mu.Lock()
		if c.busy == 0 {
			c.mu.Unlock()
			return nil
		}
		idle := c.idle
		c.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// sendEvents sends events in chunks of the batch size, or one by one once the plan has shown
// it has no batch endpoint; a cooldown drops what is left.
func (c *Client) sendEvents(ctx context.Context, events []encodedEvent) (BatchResult, *DeliveryError) {
	var res BatchResult
	var first *DeliveryError
	counted := 0 // events before this index went out in a batch request: already counted Sent
	for i := 0; i < len(events); {
		c.mu.Lock()
		if c.inCooldownLocked(c.cfg.clock.Now()) {
			n := len(events) - i
			c.stats.Dropped += int64(n)
			c.mu.Unlock()
			res.Dropped += n
			first = firstOf(first, c.droppedError())
			break
		}
		single := c.batchUnavailable
		c.mu.Unlock()
		if single {
			r, err := c.deliverOneCounted(ctx, events[i], false, i >= counted)
			res.add(r.Outcome, 1)
			first = firstOf(first, err)
			i++
			continue
		}
		end := i + c.cfg.batchSize
		if end > len(events) {
			end = len(events)
		}
		chunk := events[i:end]
		d := c.post(ctx, c.batchURL, batchBody(chunk), len(chunk), false, true)
		if d.status == http.StatusForbidden {
			// The plan has no batch endpoint (Free): the same events go one by one, now and
			// from now on.
			c.mu.Lock()
			c.batchUnavailable = true
			c.mu.Unlock()
			counted = end
			continue
		}
		c.mu.Lock()
		c.stats.add(d.outcome, int64(len(chunk)))
		c.mu.Unlock()
		res.add(d.outcome, len(chunk))
		first = firstOf(first, c.errorOf(d))
		i = end
	}
	return res, first
}

func batchBody(events []encodedEvent) []byte {
	size := len(`{"events":[]}`)
	for _, ev := range events {
		size += len(ev.body) + 1
	}
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString(`{"events":[`)
	for i, ev := range events {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(ev.body)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

func (c *Client) deliverOne(ctx context.Context, ev encodedEvent, probe bool) (Result, *DeliveryError) {
	return c.deliverOneCounted(ctx, ev, probe, true)
}

func (c *Client) deliverOneCounted(ctx context.Context, ev encodedEvent, probe, countSent bool) (Result, *DeliveryError) {
	d := c.post(ctx, c.eventsURL, ev.body, 1, probe, countSent)
	c.mu.Lock()
	c.stats.add(d.outcome, 1)
	c.mu.Unlock()
	res := Result{Outcome: d.outcome, Status: d.status, EventID: ev.id}
	if d.outcome == OutcomeAccepted {
		res.Risk = d.risk
	}
	return res, c.errorOf(d)
}

// droppedError is the error of a dropped event: nil unless the client was created WithErrDropped.
func (c *Client) droppedError() *DeliveryError {
	if !c.cfg.errDropped {
		return nil
	}
	return &DeliveryError{Outcome: OutcomeDropped}
}

func (c *Client) errorOf(d delivery) *DeliveryError {
	if d.outcome == OutcomeAccepted {
		return nil
	}
	if d.outcome == OutcomeDropped {
		return c.droppedError()
	}
	return c.report(&DeliveryError{Outcome: d.outcome, Status: d.status, Code: d.code, Message: d.message, Err: d.err})
}

// post sends one request with its retries, each attempt paced. A probe is a single attempt
// whose answer decides the cooldown. countSent is false for events already counted Sent (the
// single-event fallback of a batch the service has seen).
func (c *Client) post(ctx context.Context, url string, body []byte, events int, probe, countSent bool) delivery {
	status := 0
	for attempt := 0; ; attempt++ {
		c.mu.Lock()
		wait := c.pauseLeftLocked(c.cfg.clock.Now())
		c.mu.Unlock()
		// During an overload pause an attempt waits for its end only when that fits its timeout.
		if wait > c.cfg.timeout {
			return delivery{outcome: OutcomeFailed, status: status, err: errOverloadPause}
		}
		if wait == 0 && attempt > 0 {
			wait = c.backoff(attempt - 1)
		}
		if wait > 0 {
			if serr := c.cfg.sleep(ctx, wait); serr != nil {
				return delivery{outcome: OutcomeFailed, status: status, err: serr}
			}
		}
		if attempt > 0 {
			c.mu.Lock()
			// Another request may have met a 429 meanwhile: a cooldown stops the retries too.
			if c.inCooldownLocked(c.cfg.clock.Now()) {
				c.mu.Unlock()
				return delivery{outcome: OutcomeDropped, status: status}
			}
			c.mu.Unlock()
		}
		d, retry := c.attemptGated(ctx, url, body, events, probe, countSent, attempt)
		if !retry {
			return d
		}
		status = d.status
	}
}

// attemptGated is attempt, one at a time until an answer has named the rate-limit policies, so
// that the others pace to what the service announced, not to the smallest plan.
func (c *Client) attemptGated(ctx context.Context, url string, body []byte, events int, probe, countSent bool, attempt int) (delivery, bool) {
	c.mu.Lock()
	learned := c.pacer.learned
	c.mu.Unlock()
	if !learned {
		c.firstSend.Lock()
		defer c.firstSend.Unlock()
	}
	return c.attempt(ctx, url, body, events, probe, countSent, attempt)
}

// attempt makes one paced attempt; true means it is to be retried.
func (c *Client) attempt(ctx context.Context, url string, body []byte, events int, probe, countSent bool, attempt int) (delivery, bool) {
	c.mu.Lock()
	takenMs := c.cfg.clock.Now().UnixMilli()
	wait, ok := c.pacer.reserve(takenMs, events)
	takenMs += wait.Milliseconds()
	if !ok {
		c.mu.Unlock()
		if attempt > 0 {
			return delivery{outcome: OutcomeFailed}, false
		}
		// Room would come later than allowed: dropped here rather than sent into a 429.
		c.mu.Lock()
		c.stats.PacedDropped += int64(events)
		c.mu.Unlock()
		return delivery{outcome: OutcomeDropped}, false
	}
	if attempt > 0 {
		c.stats.Retries++
	} else {
		if wait > 0 {
			c.stats.Paced += int64(events)
		}
		if probe {
			c.stats.Probes++
		}
		if countSent {
			c.stats.Sent += int64(events)
		}
	}
	c.mu.Unlock()
	if wait > 0 {
		if serr := c.cfg.sleep(ctx, wait); serr != nil {
			return delivery{outcome: OutcomeFailed, err: serr}, false
		}
	}
	status, answer, header, err := c.send(ctx, url, body)
	c.mu.Lock()
	c.pacer.settle(events, takenMs, c.cfg.clock.Now().UnixMilli())
	c.mu.Unlock()
	if err == nil {
		pause, overloaded := overloadPause(status, header, answer)
		c.mu.Lock()
		c.pacer.learn(header)
		// Any answer but an overload answer means the service takes requests again.
		if !overloaded {
			c.pausedUntil = time.Time{}
		} else if until := c.cfg.clock.Now().Add(pause); until.After(c.pausedUntil) {
			c.pausedUntil = until
		}
		c.mu.Unlock()
		d := parseAnswer(status, answer)
		if status == http.StatusTooManyRequests {
			c.mu.Lock()
			c.enterCooldownLocked()
			c.mu.Unlock()
			d.outcome = OutcomeRateLimited
			return d, false
		}
		if probe {
			c.mu.Lock()
			c.cooling = false
			c.mu.Unlock()
		}
		if status >= 200 && status < 300 {
			d.outcome = OutcomeAccepted
			return d, false
		}
		if status < 500 {
			d.outcome = OutcomeRejected
			return d, false
		}
	}
	if probe || attempt >= c.cfg.maxRetries || ctx.Err() != nil {
		return delivery{outcome: OutcomeFailed, status: status, err: err}, false
	}
	return delivery{status: status}, true
}

// backoff is the wait before retry n (from 0): a random time between half and all of
// base × 2^n.
func (c *Client) backoff(attempt int) time.Duration {
	c.mu.Lock()
	r := c.rand.Float64()
	c.mu.Unlock()
	return jittered(c.cfg.retryBackoff, attempt, r)
}

func jittered(base time.Duration, attempt int, r float64) time.Duration {
	if attempt > 30 {
		attempt = 30
	}
	full := float64(base) * float64(int64(1)<<uint(attempt))
	return time.Duration(full * (0.5 + r/2))
}

// send makes one attempt. An error means there was no answer (network error or timeout).
func (c *Client) send(ctx context.Context, url string, body []byte) (int, []byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", c.auth)
	req.Header.Set("User-Agent", "vigil-go/"+Version)
	resp, err := c.cfg.httpClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	// The status decides what happens; a body cut short only loses the risk details.
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	return resp.StatusCode, answer, resp.Header, nil
}

// parseAnswer reads the risk decision of a 2xx answer and the error code of any other; a
// body that is not the expected JSON leaves them empty.
func parseAnswer(status int, body []byte) delivery {
	d := delivery{status: status}
	var parsed struct {
		Risk    *Risk  `json:"risk"`
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &parsed) != nil {
		return d
	}
	if status >= 200 && status < 300 {
		d.risk = parsed.Risk
	} else {
		d.code, d.message = parsed.Error, parsed.Message
	}
	return d
}

func firstOf(first, next *DeliveryError) *DeliveryError {
	if first != nil {
		return first
	}
	return next
}

func merge(into *BatchResult, from BatchResult) {
	into.Accepted += from.Accepted
	into.Rejected += from.Rejected
	into.Failed += from.Failed
	into.RateLimited += from.RateLimited
	into.Dropped += from.Dropped
	into.Buffered += from.Buffered
}

func batchError(res BatchResult, first *DeliveryError, errDropped bool) error {
	undelivered := res.Rejected + res.Failed + res.RateLimited
	if errDropped || (first != nil && first.closed) {
		// Drops are errors when asked for, and always after Close (a bug in the caller).
		undelivered += res.Dropped
	}
	if undelivered == 0 {
		return nil
	}
	if first == nil {
		first = &DeliveryError{Outcome: OutcomeFailed}
	}
	total := res.Rejected + res.Failed + res.RateLimited + res.Dropped + res.Accepted + res.Buffered
	return &BatchError{Undelivered: undelivered, Total: total, First: first}
}
