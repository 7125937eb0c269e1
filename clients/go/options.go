package vigil

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults of the options.
const (
	DefaultBaseURL       = "http://localhost:8080"
	DefaultTimeout       = 2 * time.Second
	DefaultMaxRetries    = 2
	DefaultRetryBackoff  = 200 * time.Millisecond
	DefaultBatchSize     = 100
	DefaultBufferSize    = 100
	DefaultFlushInterval = 5 * time.Second
	DefaultQueueLimit    = 10000
)

// Option configures a Client (see New).
type Option func(*config) error

type config struct {
	baseURL       string
	httpClient    *http.Client
	timeout       time.Duration
	maxRetries    int
	retryBackoff  time.Duration
	batchSize     int
	buffered      bool
	bufferSize    int
	flushInterval time.Duration
	queueLimit    int
	clock         Clock
	sleep         func(context.Context, time.Duration) error
	onError       func(error)
	maxPacing     time.Duration
	errDropped    bool
}

// WithBaseURL sets where the service listens (default DefaultBaseURL).
func WithBaseURL(baseURL string) Option {
	return func(c *config) error {
		u, err := url.Parse(baseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("vigil: base URL %q is not an http(s) URL", baseURL)
		}
		c.baseURL = strings.TrimRight(baseURL, "/")
		return nil
	}
}

// WithHTTPClient sets the HTTP client used for every request (default: a client of its own).
// Its Timeout, if any, applies on top of WithTimeout.
func WithHTTPClient(client *http.Client) Option {
	return func(c *config) error {
		if client == nil {
			return fmt.Errorf("vigil: nil HTTP client")
		}
		c.httpClient = client
		return nil
	}
}

// WithTimeout bounds each attempt, from sending the request to reading the answer (default
// DefaultTimeout). A timeout counts as a network error.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("vigil: timeout must be positive, got %v", d)
		}
		c.timeout = d
		return nil
	}
}

// WithMaxRetries sets how many times a request answered 5xx, or not answered, is retried
// after its first attempt (default DefaultMaxRetries; 0 disables retries).
func WithMaxRetries(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("vigil: max retries must be 0 or more, got %d", n)
		}
		c.maxRetries = n
		return nil
	}
}

// WithRetryBackoff sets the base of the retry delays: retry n (from 0) waits a random time
// between half and all of base × 2^n (default DefaultRetryBackoff).
func WithRetryBackoff(base time.Duration) Option {
	return func(c *config) error {
		if base < 0 {
			return fmt.Errorf("vigil: retry backoff must be 0 or more, got %v", base)
		}
		c.retryBackoff = base
		return nil
	}
}

// WithBatchSize sets how many events go in one batch request: the plan's batch size
// (Starter 50, Pro and Business 100; default DefaultBatchSize).
func WithBatchSize(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("vigil: batch size must be 1 or more, got %d", n)
		}
		c.batchSize = n
		return nil
	}
}

// WithBuffering switches the client to buffered mode: Track returns at once and events are
// sent in batches when size events wait, interval after the first event entered an empty
// buffer, on Flush and on Close. Zero values take DefaultBufferSize and DefaultFlushInterval.
func WithBuffering(size int, interval time.Duration) Option {
	return func(c *config) error {
		if size < 0 || interval < 0 {
			return fmt.Errorf("vigil: buffer size and flush interval must be 0 or more")
		}
		c.buffered = true
		if size > 0 {
			c.bufferSize = size
		}
		if interval > 0 {
			c.flushInterval = interval
		}
		return nil
	}
}

// WithQueueLimit bounds how many events wait for a background delivery (buffered batches,
// middleware reports) when the service answers slower than the application produces them;
// beyond it new events are dropped and counted (default DefaultQueueLimit).
func WithQueueLimit(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("vigil: queue limit must be 1 or more, got %d", n)
		}
		c.queueLimit = n
		return nil
	}
}

// WithClock sets the clock that decides cooldowns, probe periods and buffer flush times
// (default: the system clock). Tests inject a fake one to check the cooldown without waiting.
func WithClock(clock Clock) Option {
	return func(c *config) error {
		if clock == nil {
			return fmt.Errorf("vigil: nil clock")
		}
		c.clock = clock
		return nil
	}
}

// WithSleep sets how the client waits between retries (default: a timer that ends early
// when ctx is done, returning ctx.Err()).
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *config) error {
		if sleep == nil {
			return fmt.Errorf("vigil: nil sleep")
		}
		c.sleep = sleep
		return nil
	}
}

// WithErrorHandler sets a function called with the error of every event that was not
// delivered, including those sent in the background (buffered mode, middleware). It may be
// called from any goroutine and must not block for long.
func WithErrorHandler(handle func(error)) Option {
	return func(c *config) error {
		c.onError = handle
		return nil
	}
}

// WithMaxPacingDelay sets the longest a send waits for room in the rate-limit policies the
// service announces (RateLimit-Policy) before the event is dropped and counted PacedDropped
// (default DefaultMaxPacingDelay; 0 never waits).
func WithMaxPacingDelay(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("vigil: max pacing delay must be 0 or more, got %v", d)
		}
		c.maxPacing = d
		return nil
	}
}

// WithErrDropped makes Track and TrackBatch return an error matching ErrDropped for events
// dropped by a cooldown or by pacing. Without it a dropped event is a Result with
// OutcomeDropped and a nil error: a cooldown drops every event for an hour, and an
// `if err != nil { log }` would log each of them.
func WithErrDropped() Option {
	return func(c *config) error {
		c.errDropped = true
		return nil
	}
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
