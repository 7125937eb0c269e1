package vigil

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// The conformance kit's scenarios (clients/conformance/scenarios), replayed against this
// client and the kit's scripted server: one subtest per scenario file, named after it.

const conformanceAPIKey = "vgl_pk_conformance0123456789abcdef"

type scenario struct {
	Name        string                     `json:"name"`
	Description string                     `json:"description"`
	Client      map[string]json.RawMessage `json:"client"`
	Steps       []map[string]json.RawMessage
}

func loadScenarios(t *testing.T) []scenario {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "clients", "conformance", "scenarios", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files in clients/conformance/scenarios (%v)", err)
	}
	sort.Strings(files)
	var out []scenario
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s scenario
		dec := json.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(&s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, s)
	}
	return out
}

func TestConformance(t *testing.T) {
	server := scripted(t)
	for _, s := range loadScenarios(t) {
		s := s
		t.Run(s.Name, func(t *testing.T) {
			if err := replay(s, server); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// clientFor builds the client a scenario describes, on the fake clock and an instant sleep.
func clientFor(options map[string]json.RawMessage, base string, clock Clock) (*Client, error) {
	number := func(key string) (float64, bool, error) {
		raw, ok := options[key]
		if !ok {
			return 0, false, nil
		}
		var v float64
		return v, true, json.Unmarshal(raw, &v)
	}
	apiKey := conformanceAPIKey
	if raw, ok := options["api_key"]; ok {
		if err := json.Unmarshal(raw, &apiKey); err != nil {
			return nil, err
		}
	}
	opts := []Option{
		WithBaseURL(base),
		WithClock(clock),
		WithSleep(func(context.Context, time.Duration) error { return nil }),
	}
	known := map[string]bool{"api_key": true, "mode": true, "buffer_size": true, "flush_interval_ms": true}
	for key, apply := range map[string]func(float64) Option{
		"timeout_ms":  func(v float64) Option { return WithTimeout(time.Duration(v) * time.Millisecond) },
		"max_retries": func(v float64) Option { return WithMaxRetries(int(v)) },
		"batch_size":  func(v float64) Option { return WithBatchSize(int(v)) },
		"max_pacing_delay_ms": func(v float64) Option {
			return WithMaxPacingDelay(time.Duration(v) * time.Millisecond)
		},
	} {
		known[key] = true
		v, ok, err := number(key)
		if err != nil {
			return nil, fmt.Errorf("option %s: %v", key, err)
		}
		if ok {
			opts = append(opts, apply(v))
		}
	}
	for key := range options {
		if !known[key] {
			return nil, fmt.Errorf("unknown client option %q", key)
		}
	}
	var mode string
	if raw, ok := options["mode"]; ok {
		if err := json.Unmarshal(raw, &mode); err != nil {
			return nil, err
		}
	}
	if mode == "buffered" {
		size, _, err := number("buffer_size")
		if err != nil {
			return nil, err
		}
		interval, _, err := number("flush_interval_ms")
		if err != nil {
			return nil, err
		}
		opts = append(opts, WithBuffering(int(size), time.Duration(interval)*time.Millisecond))
	} else if mode != "" && mode != "direct" {
		return nil, fmt.Errorf("unknown mode %q", mode)
	}
	return New(apiKey, opts...)
}

// eventFrom reads a scenario's event into an Event and checks that nothing was lost on the way.
func eventFrom(raw json.RawMessage) (Event, error) {
	var e Event
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, err
	}
	back, err := json.Marshal(e)
	if err != nil {
		return e, err
	}
	var want, got any
	_ = json.Unmarshal(raw, &want)
	_ = json.Unmarshal(back, &got)
	if !reflect.DeepEqual(want, got) {
		return e, fmt.Errorf("the scenario's event %s does not survive the Event type (%s)", raw, back)
	}
	return e, nil
}

// asJSON turns a Go value into what JSON would decode it to, for comparisons.
func asJSON(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

func resultJSON(r Result) any {
	out := map[string]any{"outcome": string(r.Outcome), "status": nil, "risk": nil, "event_id": r.EventID}
	if r.Status != 0 {
		out["status"] = r.Status
	}
	if r.Risk != nil {
		out["risk"] = map[string]any{"score": r.Risk.Score, "level": r.Risk.Level, "action": r.Risk.Action}
	}
	return asJSON(out)
}

func batchJSON(b BatchResult) any {
	return asJSON(map[string]int{
		"accepted": b.Accepted, "rejected": b.Rejected, "failed": b.Failed,
		"rate_limited": b.RateLimited, "dropped": b.Dropped, "buffered": b.Buffered,
	})
}

func statsJSON(s Stats) any {
	return asJSON(map[string]any{
		"accepted": s.Accepted, "rejected": s.Rejected, "failed": s.Failed, "rate_limited": s.RateLimited,
		"dropped": s.Dropped, "retries": s.Retries, "probes": s.Probes, "in_cooldown": s.InCooldown,
		"sent": s.Sent, "paced": s.Paced, "paced_dropped": s.PacedDropped,
	})
}

// missing stands for an absent key, which matches neither null nor "<any>".
var missing = &struct{ absent bool }{true}

// mismatch compares an expected value of a scenario with an actual one (the kit's matching
// rules: subset of object keys, arrays element by element, "<any>", "<id:NAME>" bindings).
func mismatch(expected, actual any, where string, ids map[string]string) string {
	if s, ok := expected.(string); ok {
		if s == "<any>" {
			if actual == missing {
				return where + ": missing"
			}
			return ""
		}
		if strings.HasPrefix(s, "<id:") && strings.HasSuffix(s, ">") {
			name := s[4 : len(s)-1]
			got, ok := actual.(string)
			if !ok || got == "" {
				return fmt.Sprintf("%s: expected an id, got %v", where, actual)
			}
			if bound, ok := ids[name]; ok {
				if bound != got {
					return fmt.Sprintf("%s: expected the id bound to %s (%s), got %s", where, name, bound, got)
				}
				return ""
			}
			for other, value := range ids {
				if value == got {
					return fmt.Sprintf("%s: id %s is already bound to %s, expected a new one for %s", where, got, other, name)
				}
			}
			ids[name] = got
			return ""
		}
	}
	switch want := expected.(type) {
	case []any:
		got, ok := actual.([]any)
		if !ok || len(got) != len(want) {
			return fmt.Sprintf("%s: expected %d items, got %v", where, len(want), actual)
		}
		for i := range want {
			if p := mismatch(want[i], got[i], fmt.Sprintf("%s[%d]", where, i), ids); p != "" {
				return p
			}
		}
		return ""
	case map[string]any:
		got, ok := actual.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: expected an object, got %v", where, actual)
		}
		keys := make([]string, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			value, present := got[k]
			if !present {
				value = missing
			}
			if p := mismatch(want[k], value, where+"."+k, ids); p != "" {
				return p
			}
		}
		return ""
	}
	if !reflect.DeepEqual(expected, actual) {
		return fmt.Sprintf("%s: expected %v, got %v", where, expected, actual)
	}
	return ""
}

// replay runs every step of a scenario; after each step it waits until the client has no
// request in flight and no flush pending.
func replay(s scenario, server controlClient) error {
	clock := newFakeClock()
	client, err := clientFor(s.Client, server.base, clock)
	if err != nil {
		return fmt.Errorf("%s: client options: %v", s.Name, err)
	}
	defer client.Close(context.Background())
	if err := server.post("/__reset", map[string]any{}); err != nil {
		return err
	}
	ctx := context.Background()
	ids := map[string]string{}
	var last any
	for i, step := range s.Steps {
		var op string
		if err := json.Unmarshal(step["op"], &op); err != nil {
			return err
		}
		where := fmt.Sprintf("%s step %d (%s)", s.Name, i+1, op)
		field := func(name string) any {
			var v any
			_ = json.Unmarshal(step[name], &v)
			return v
		}
		switch op {
		case "script":
			if err := server.post("/__script", map[string]any{"responses": field("responses")}); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
		case "track":
			e, err := eventFrom(step["event"])
			if err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			r, _ := client.Track(ctx, e)
			last = resultJSON(r)
		case "track_batch":
			var raws []json.RawMessage
			if err := json.Unmarshal(step["events"], &raws); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			events := make([]Event, len(raws))
			for j, raw := range raws {
				if events[j], err = eventFrom(raw); err != nil {
					return fmt.Errorf("%s: %v", where, err)
				}
			}
			r, _ := client.TrackBatch(ctx, events)
			last = batchJSON(r)
		case "advance":
			var ms int64
			if err := json.Unmarshal(step["ms"], &ms); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			clock.Advance(time.Duration(ms) * time.Millisecond)
		case "flush":
			if err := client.Flush(ctx); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
		case "expect_requests":
			got, err := server.requests()
			if err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			want, _ := field("requests").([]any)
			if len(got) != len(want) {
				seen := make([]string, len(got))
				for j, r := range got {
					seen[j] = fmt.Sprintf("%v %v", r["method"], r["path"])
				}
				return fmt.Errorf("%s: expected %d requests, got %d (%s)", where, len(want), len(got), strings.Join(seen, ", "))
			}
			for j := range want {
				if p := mismatch(want[j], asJSON(got[j]), fmt.Sprintf("%s: request %d", where, j+1), ids); p != "" {
					return fmt.Errorf("%s", p)
				}
			}
		case "expect_result":
			if p := mismatch(field("result"), last, where+": result", ids); p != "" {
				return fmt.Errorf("%s", p)
			}
		case "expect_stats":
			if p := mismatch(field("stats"), statsJSON(client.Stats()), where+": stats", ids); p != "" {
				return fmt.Errorf("%s", p)
			}
		default:
			return fmt.Errorf("%s: unknown op", where)
		}
		if err := client.waitIdle(ctx); err != nil {
			return err
		}
	}
	return nil
}
