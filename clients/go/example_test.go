package vigil_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"time"

	vigil "github.com/vigil-security/vigil-go"
)

// fakeVigil stands in for the service in the examples: it accepts every event with a fixed
// risk decision, or answers 429 when limited is true.
func fakeVigil(limited bool) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if limited {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprint(w, `{"status":"accepted","risk":{"score":72,"level":"high","action":"challenge"}}`)
	}))
}

func Example() {
	service := fakeVigil(false)
	defer service.Close()

	client, err := vigil.New("vgl_sk_example", vigil.WithBaseURL(service.URL))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close(context.Background())

	res, err := client.Track(context.Background(), vigil.Event{Event: "auth.login.failure", ActorID: "alice"})
	if err != nil {
		log.Print(err) // the event was not delivered; the application goes on
	}
	fmt.Println(res.Outcome, res.Risk.Score, res.Risk.Action)
	// Output: accepted 72 challenge
}

func ExampleClient_Track_rateLimited() {
	service := fakeVigil(true)
	defer service.Close()
	client, _ := vigil.New("vgl_sk_example", vigil.WithBaseURL(service.URL))

	_, err := client.Track(context.Background(), vigil.Event{Event: "auth.login.failure"})
	fmt.Println(errors.Is(err, vigil.ErrRateLimited))
	// For the next hour events are dropped (one probe per 5 minutes excepted), not queued.
	res, err := client.Track(context.Background(), vigil.Event{Event: "auth.login.failure"})
	fmt.Println(res.Outcome, err == nil, client.Stats().InCooldown) // a drop is no error unless WithErrDropped
	// Output:
	// true
	// dropped true true
}

func ExampleClient_Middleware() {
	service := fakeVigil(false)
	defer service.Close()
	client, _ := vigil.New("vgl_sk_example", vigil.WithBaseURL(service.URL))
	defer client.Close(context.Background())

	login := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// ... the password was wrong:
		res, _ := client.TrackRequest(r, vigil.Event{Event: "auth.login.failure", ActorID: r.FormValue("user")})
		if res.Risk != nil && res.Risk.Action != vigil.ActionAllow {
			http.Error(w, "please solve the challenge", http.StatusForbidden)
			return
		}
		http.Error(w, "wrong password", http.StatusUnauthorized)
	})
	mux := http.NewServeMux()
	mux.Handle("/login", login)
	// The load balancer in 10.0.0.0/8 sets X-Forwarded-For; responses 401, 403 and 429 are
	// reported as api.request events.
	handler := client.Middleware(
		vigil.TrustProxies(netip.MustParsePrefix("10.0.0.0/8")),
		vigil.ReportResponses("api.request", func(status int) bool { return status == 401 || status == 403 || status == 429 }),
	)(mux)

	app := httptest.NewServer(handler)
	defer app.Close()
	resp, _ := http.PostForm(app.URL+"/login", map[string][]string{"user": {"alice"}})
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output: 403
}

func ExampleWithBuffering() {
	service := fakeVigil(false)
	defer service.Close()
	client, _ := vigil.New("vgl_sk_example", vigil.WithBaseURL(service.URL),
		vigil.WithBuffering(100, 5*time.Second))

	res, _ := client.Track(context.Background(), vigil.Event{Event: "data.exported", ActorID: "bob"})
	fmt.Println(res.Outcome)
	// Close sends what is buffered; call it at shutdown.
	_ = client.Close(context.Background())
	fmt.Println(client.Stats().Accepted)
	// Output:
	// buffered
	// 1
}
