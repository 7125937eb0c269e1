// Command quickstart sends one login to Vigil and prints the risk decision.
//
//	VIGIL_BASE_URL=http://localhost:8080 VIGIL_API_KEY=vgl_sk_… go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	vigil "github.com/vigil-security/vigil-go"
)

func main() {
	client, err := vigil.New(os.Getenv("VIGIL_API_KEY"), vigil.WithBaseURL(os.Getenv("VIGIL_BASE_URL")))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close(context.Background())

	res, err := client.Track(context.Background(), vigil.Event{
		Event:     "auth.login.success",
		ActorID:   "alice",
		IP:        "203.0.113.7",
		UserAgent: "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s (HTTP %d) event_id=%s\n", res.Outcome, res.Status, res.EventID)
	if res.Risk != nil {
		fmt.Printf("risk: score %d, level %s, action %s\n", res.Risk.Score, res.Risk.Level, res.Risk.Action)
		for _, f := range res.Risk.Breakdown {
			fmt.Printf("  %+4d %s\n", f.Points, f.Source)
		}
	}
}
