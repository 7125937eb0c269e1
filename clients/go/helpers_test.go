package vigil

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"
)

// repoRoot is the repository this module lives in (clients/go).
var repoRoot = func() string {
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		panic(err)
	}
	return dir
}()

// nodeProcess is a Node helper of the conformance kit, started with a stdin pipe it watches:
// closing the pipe stops it, so it never outlives the tests.
type nodeProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	line  []byte
}

// startNode runs `node script args...` from the repository root and returns once it printed
// its first line (the JSON that says where it listens).
func startNode(script string, args ...string) (*nodeProcess, error) {
	cmd := exec.Command("node", append([]string{script}, args...)...)
	cmd.Dir = repoRoot
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &nodeProcess{cmd: cmd, stdin: stdin}
	lines := make(chan []byte, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadBytes('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, r)
	}()
	select {
	case line := <-lines:
		if len(bytes.TrimSpace(line)) == 0 {
			p.stop()
			return nil, fmt.Errorf("%s printed nothing", script)
		}
		p.line = line
		return p, nil
	case <-time.After(60 * time.Second):
		p.stop()
		return nil, fmt.Errorf("%s did not start within 60 s", script)
	}
}

func (p *nodeProcess) stop() {
	_ = p.stdin.Close()
	done := make(chan struct{})
	go func() {
		_ = p.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// fakeClock is virtual time: Advance moves it and runs the timers that came due, in due order.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	nextID int
}

type fakeTimer struct {
	clock *fakeClock
	due   time.Time
	id    int
	f     func()
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.UnixMilli(1_800_000_000_000)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, due: c.now.Add(d), id: c.nextID, f: f}
	c.nextID++
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, other := range c.timers {
		if other == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return true
		}
	}
	return false
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	for {
		sort.SliceStable(c.timers, func(i, j int) bool {
			a, b := c.timers[i], c.timers[j]
			return a.due.Before(b.due) || (a.due.Equal(b.due) && a.id < b.id)
		})
		if len(c.timers) == 0 || c.timers[0].due.After(target) {
			break
		}
		next := c.timers[0]
		c.timers = c.timers[1:]
		c.now = next.due
		c.mu.Unlock()
		next.f()
		c.mu.Lock()
	}
	c.now = target
	c.mu.Unlock()
}

// controlClient talks to the scripted server's control routes.
type controlClient struct {
	base string
}

func (cc controlClient) post(path string, body any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	resp, err := http.Post(cc.base+path, "application/json", bytes.NewReader(data))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: HTTP %d", path, resp.StatusCode)
	}
	return nil
}

// requests returns the requests the server recorded since the previous call.
func (cc controlClient) requests() ([]map[string]any, error) {
	resp, err := http.Get(cc.base + "/__requests")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Requests []map[string]any `json:"requests"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, err
	}
	return out.Requests, nil
}

// scriptedServer is one scripted server shared by the tests of this package.
var scriptedServer = struct {
	once sync.Once
	proc *nodeProcess
	base string
	err  error
}{}

func scripted(t *testing.T) controlClient {
	t.Helper()
	s := &scriptedServer
	s.once.Do(func() {
		s.proc, s.err = startNode("clients/conformance/server.mjs")
		if s.err != nil {
			return
		}
		var info struct {
			Port int `json:"port"`
		}
		if s.err = json.Unmarshal(s.proc.line, &info); s.err == nil {
			s.base = fmt.Sprintf("http://127.0.0.1:%d", info.Port)
		}
	})
	if s.err != nil {
		t.Fatalf("scripted server: %v", s.err)
	}
	return controlClient{base: s.base}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if scriptedServer.proc != nil {
		scriptedServer.proc.stop()
	}
	os.Exit(code)
}
