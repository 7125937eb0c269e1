package vigil

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The sources are gofmt-formatted and go vet finds nothing: both run with the tests, so CI runs them.
func TestGofmtAndGoVetAreClean(t *testing.T) {
	out, err := exec.Command("gofmt", "-l", ".").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("gofmt -l: %v\n%s", err, out)
	}
	out, err = exec.Command("go", "vet", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go vet: %v\n%s", err, out)
	}
}

// The README's install path works today: an empty module that requires this one through a
// replace directive to the checkout (the README's commands), built offline, runs the quick start
// (examples/quickstart, which the README shows) against the real service.
func TestTheReadmeInstallPathBuildsAndRunsTheQuickStart(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	quickstart, err := os.ReadFile(filepath.Join("examples", "quickstart", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), string(quickstart)) {
		t.Fatal("the README's quick start is not examples/quickstart/main.go")
	}
	checkout, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	app := t.TempDir()
	commands := regexp.MustCompile(`(?m)^go mod .*$`).FindAllString(string(readme), -1)
	if len(commands) < 2 {
		t.Fatalf("the README has no go mod commands: %v", commands)
	}
	run := func(args ...string) string {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = app
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	for _, line := range commands {
		line = strings.ReplaceAll(line, "/path/to/vigil/clients/go", checkout)
		run(strings.Fields(line)...)
	}
	if err := os.WriteFile(filepath.Join(app, "main.go"), quickstart, 0o644); err != nil {
		t.Fatal(err)
	}
	run("go", "build", "-o", "quickstart", ".")

	base, accounts := service(t)
	cmd := exec.CommandContext(context.Background(), filepath.Join(app, "quickstart"))
	cmd.Env = append(os.Environ(), "VIGIL_API_KEY="+accounts["free"].Secret, "VIGIL_BASE_URL="+base)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "accepted (HTTP 202)") || !strings.Contains(string(out), "risk: score ") {
		t.Fatalf("quick start: %v\n%s", err, out)
	}
	var mod struct{ Module struct{ Path string } }
	if raw, err := exec.Command("go", "mod", "edit", "-json").Output(); err != nil || json.Unmarshal(raw, &mod) != nil || mod.Module.Path != "github.com/vigil-security/vigil-go" {
		t.Fatalf("module path %q", mod.Module.Path)
	}
}
