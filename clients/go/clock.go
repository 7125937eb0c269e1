package vigil

import "time"

// Clock is the time source of a Client.
type Clock interface {
	Now() time.Time
	// AfterFunc runs f in its own goroutine (or at least not from within AfterFunc) once d has
	// passed, unless the returned timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending call scheduled by Clock.AfterFunc.
type Timer interface {
	// Stop cancels the call; it reports false when the call already ran or started.
	Stop() bool
}

// SystemClock is the real clock.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now() }

func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
