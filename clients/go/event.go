package vigil

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Event is one security event as the service accepts it. Only Event (the event type, for
// example "auth.login.failure") is required; empty fields are not sent.
type Event struct {
	// Event is the event type: 2 to 4 lowercase dot-separated segments.
	Event string `json:"event"`
	// EventID makes delivery idempotent. Track fills it with a UUID version 7 when empty.
	EventID string `json:"event_id,omitempty"`
	// Timestamp is when the event happened; zero means when the service receives it.
	Timestamp time.Time `json:"-"`
	// ActorID is the user or principal the event is about.
	ActorID string `json:"actor_id,omitempty"`
	Email   string `json:"email,omitempty"`
	// IP is the end user's address, UserAgent their user agent (see TrackRequest).
	IP        string `json:"ip,omitempty"`
	UserAgent string `json:"user_agent,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// Host is a host name, for events about servers.
	Host    string       `json:"host,omitempty"`
	Request *RequestInfo `json:"request,omitempty"`
	// Metadata is free-form; keys such as role, permission or mfa activate detections.
	Metadata map[string]any `json:"metadata,omitempty"`
	// PasswordSHA1 is the hex SHA-1 of a password, checked against breached lists and then
	// discarded by the service.
	PasswordSHA1 string `json:"password_sha1,omitempty"`
}

// RequestInfo describes the HTTP request an event is about.
type RequestInfo struct {
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	// Status is the response status, when the event is sent after the answer is known.
	Status int    `json:"status,omitempty"`
	Query  string `json:"query,omitempty"`
}

// MarshalJSON writes the event as the service reads it; Timestamp is sent in ISO 8601 (UTC,
// milliseconds) and left out when zero.
func (e Event) MarshalJSON() ([]byte, error) {
	type fields Event // the same fields without this method
	var timestamp string
	if !e.Timestamp.IsZero() {
		timestamp = e.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	return json.Marshal(struct {
		fields
		Timestamp string `json:"timestamp,omitempty"`
	}{fields(e), timestamp})
}

// UnmarshalJSON reads an event written by MarshalJSON (or by another client).
func (e *Event) UnmarshalJSON(data []byte) error {
	type fields Event
	var in struct {
		fields
		Timestamp json.RawMessage `json:"timestamp,omitempty"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*e = Event(in.fields)
	if len(in.Timestamp) > 0 && string(in.Timestamp) != "null" {
		var text string
		if err := json.Unmarshal(in.Timestamp, &text); err == nil {
			t, err := time.Parse(time.RFC3339Nano, text)
			if err != nil {
				return err
			}
			e.Timestamp = t
		} else {
			var ms int64
			if err := json.Unmarshal(in.Timestamp, &ms); err != nil {
				return err
			}
			e.Timestamp = time.UnixMilli(ms).UTC()
		}
	}
	return nil
}

// newEventID returns a UUID version 7: 48 bits of Unix milliseconds then random bits, so ids
// sort by creation time.
func newEventID(now time.Time) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; the time prefix and the
		// nanoseconds keep ids distinct if it ever does.
		ns := now.UnixNano()
		for i := 6; i < 16; i++ {
			b[i] = byte(ns >> (8 * (i % 8)))
		}
	}
	ms := now.UnixMilli()
	if ms < 0 {
		ms = 0
	}
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	b[6] = 0x70 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}
