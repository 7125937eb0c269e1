package vigil

import (
	"errors"
	"fmt"
)

// Outcome says what happened to an event.
type Outcome string

const (
	// OutcomeAccepted: the service answered 2xx.
	OutcomeAccepted Outcome = "accepted"
	// OutcomeRejected: the service answered a 4xx that is not retried (invalid event, bad key...).
	OutcomeRejected Outcome = "rejected"
	// OutcomeFailed: no delivery after the retries (5xx, network errors, timeouts), a probe
	// without answer, or not sent during an overload pause (503 with Retry-After).
	OutcomeFailed Outcome = "failed"
	// OutcomeRateLimited: the service answered 429; the client is in cooldown.
	OutcomeRateLimited Outcome = "rate_limited"
	// OutcomeDropped: not sent, because of a cooldown (or because the client is closed).
	OutcomeDropped Outcome = "dropped"
	// OutcomeBuffered: buffered mode took the event for delivery.
	OutcomeBuffered Outcome = "buffered"
)

// Risk actions, from the account's thresholds.
const (
	ActionAllow     = "allow"
	ActionChallenge = "challenge"
	ActionBlock     = "block"
)

// Risk is the service's risk decision for an accepted event.
type Risk struct {
	// Score is the composite risk score, 0 to 100.
	Score int `json:"score"`
	// Level is low, medium, high or critical.
	Level string `json:"level"`
	// Action is ActionAllow, ActionChallenge or ActionBlock.
	Action string `json:"action"`
	// Breakdown lists where the points came from.
	Breakdown []RiskFactor `json:"breakdown,omitempty"`
}

// RiskFactor is one contribution to a risk score.
type RiskFactor struct {
	Source string `json:"source"`
	Points int    `json:"points"`
}

// Result is what happened to one event.
type Result struct {
	Outcome Outcome
	// Status is the HTTP status of the last answer, 0 when there was none.
	Status int
	// Risk is the risk decision of an accepted event, nil when the answer had none.
	Risk *Risk
	// EventID is the event's event_id, given or generated.
	EventID string
}

// BatchResult counts the events of one TrackBatch call by outcome.
type BatchResult struct {
	Accepted    int
	Rejected    int
	Failed      int
	RateLimited int
	Dropped     int
	Buffered    int
}

func (b *BatchResult) add(o Outcome, n int) {
	outcomeCounters[int]{&b.Accepted, &b.Rejected, &b.Failed, &b.RateLimited, &b.Dropped, &b.Buffered}.add(o, n)
}

// Stats counts events since the client was created.
type Stats struct {
	Sent         int64 // events put on the wire (retries not counted again)
	Accepted     int64 // events answered 2xx
	Rejected     int64 // events answered a 4xx that is not retried
	Failed       int64 // events given up after the retries, probes without answer, events not sent during an overload pause
	RateLimited  int64 // events in requests answered 429
	Dropped      int64 // events not sent: cooldown, pacing, queue limit, or handed over after Close
	Paced        int64 // events that waited for room in the service's rate-limit policies, then went
	PacedDropped int64 // events dropped because room would come later than the pacing bound (also in Dropped)
	Retries      int64 // retry requests sent
	Probes       int64 // probe requests sent during cooldowns
	InCooldown   bool  // the client is in a cooldown now
}

func (s *Stats) add(o Outcome, n int64) {
	outcomeCounters[int64]{&s.Accepted, &s.Rejected, &s.Failed, &s.RateLimited, &s.Dropped, nil}.add(o, n)
}

// outcomeCounters points at the fields of a BatchResult or Stats that count each outcome; nil
// where the tally does not count one (Stats has no buffered count).
type outcomeCounters[T int | int64] struct {
	accepted, rejected, failed, rateLimited, dropped, buffered *T
}

func (c outcomeCounters[T]) add(o Outcome, n T) {
	var field *T
	switch o {
	case OutcomeAccepted:
		field = c.accepted
	case OutcomeRejected:
		field = c.rejected
	case OutcomeFailed:
		field = c.failed
	case OutcomeRateLimited:
		field = c.rateLimited
	case OutcomeDropped:
		field = c.dropped
	case OutcomeBuffered:
		field = c.buffered
	}
	if field != nil {
		*field += n
	}
}

// Errors that DeliveryError matches with errors.Is, one per outcome of an undelivered event.
var (
	ErrRejected    = errors.New("vigil: event rejected")
	ErrFailed      = errors.New("vigil: event not delivered")
	ErrRateLimited = errors.New("vigil: rate limited")
	// ErrDropped is returned only by a client created WithErrDropped.
	ErrDropped = errors.New("vigil: event dropped (cooldown or pacing)")
	ErrClosed  = errors.New("vigil: client closed")

	errOverloadPause         = errors.New("not sent: the service is overloaded and asked for a pause longer than the timeout")
	errBufferFullDuringPause = errors.New("not buffered: the buffer is full while the service asked for a pause")
)

// DeliveryError describes an event that was not delivered. It matches the Err* value of its
// outcome with errors.Is and unwraps to the network error, if there was one.
type DeliveryError struct {
	Outcome Outcome
	// Status is the HTTP status of the answer, 0 when there was none.
	Status int
	// Code and Message come from the service's error body, when it had one.
	Code    string
	Message string
	// Err is the network, timeout or encoding error, if any.
	Err    error
	closed bool
}

func (e *DeliveryError) Error() string {
	msg := "vigil: event " + string(e.Outcome)
	if e.closed {
		msg = ErrClosed.Error()
	}
	if e.Status != 0 {
		msg += fmt.Sprintf(" (HTTP %d", e.Status)
		if e.Code != "" {
			msg += " " + e.Code
		}
		msg += ")"
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// Is reports whether target is the Err* value of this error's outcome.
func (e *DeliveryError) Is(target error) bool {
	switch target {
	case ErrRejected:
		return e.Outcome == OutcomeRejected
	case ErrFailed:
		return e.Outcome == OutcomeFailed
	case ErrRateLimited:
		return e.Outcome == OutcomeRateLimited
	case ErrDropped:
		return e.Outcome == OutcomeDropped && !e.closed
	case ErrClosed:
		return e.closed
	}
	return false
}

// BatchError says how many events of a TrackBatch call were not delivered; it unwraps to the
// DeliveryError of the first of them.
type BatchError struct {
	Undelivered int
	Total       int
	First       *DeliveryError
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("vigil: %d of %d events not delivered: %v", e.Undelivered, e.Total, e.First)
}

func (e *BatchError) Unwrap() error { return e.First }
