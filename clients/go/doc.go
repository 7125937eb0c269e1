// Package vigil is the Go client for Vigil, the security event ingestion service.
//
// A Client sends security events (logins, role changes, exports, admin actions...) to
// POST /v1/events and POST /v1/events/batch and returns the service's risk decision to
// callers who wait for it. It uses nothing but the standard library.
//
//	client, err := vigil.New(os.Getenv("VIGIL_API_KEY"), vigil.WithBaseURL("https://vigil.example.com"))
//	if err != nil { ... }
//	defer client.Close(context.Background())
//	res, err := client.Track(ctx, vigil.Event{Event: "auth.login.success", ActorID: "alice"})
//
// # Delivery
//
// In direct mode (the default) Track sends the event at once and returns when the service
// answered, with the risk decision. With WithBuffering, Track puts the event in a buffer and
// returns at once; the buffer is sent through the batch endpoint when it is full, a flush
// interval after its first event, on Flush and on Close. TrackBatch sends events in chunks of
// the plan's batch size; a plan without a batch endpoint (Free, answered 403) makes the client
// send the same events one by one, now and from then on.
//
// Every event gets an event_id (a UUID version 7) unless it has one; retries resend the same
// body, so the service never counts an event twice. Answers 5xx, network errors and timeouts
// are retried a bounded number of times with jittered exponential backoff; other 4xx answers
// are not retried.
//
// # Pacing
//
// The client paces its requests to the rate-limit policies the service announces
// (RateLimit-Policy, RateLimit): a send that would go over one waits for room, at most
// WithMaxPacingDelay (default one second), and is otherwise dropped and counted
// (Stats.PacedDropped), so that a burst never meets a 429. Before the first answer it assumes
// the smallest plan.
//
// # Rate limiting (429)
//
// The first 429 starts a cooldown of exactly one hour, whatever Retry-After says. During the
// cooldown nothing is sent except probes: in each 5-minute period counted from the start of
// the cooldown (except the first) the first event produced is sent alone as the probe. A probe
// answered anything but 429 ends the cooldown at once; a probe answered 429 keeps it. Events
// produced during the cooldown are dropped and counted in Stats, never queued and sent later.
// Probing is driven by events, so a quiet application sends nothing at all.
//
// # Errors
//
// No method panics into the caller. Track and TrackBatch return what happened as a value
// (Result, BatchResult) and, when an event was not delivered, an error that callers may
// inspect with errors.Is (ErrRejected, ErrFailed, ErrRateLimited, ErrClosed, and ErrDropped
// for a client created WithErrDropped; otherwise a drop is no error) or
// errors.As (*DeliveryError) or simply ignore: a security signal never breaks the request
// that produced it.
//
// # net/http
//
// Client.Middleware records the end user's address (behind trusted proxies), user agent,
// method, path and response status of each request; Client.TrackRequest sends an event about
// the request with those fields filled, and ReportResponses sends one for chosen statuses.
//
// A Client is safe for concurrent use by multiple goroutines. Close it at shutdown: it sends
// what is buffered and waits for deliveries in progress.
package vigil
