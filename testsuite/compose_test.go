package testsuite

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// TestComposeFile loads docker-compose.yml the way `docker compose` does
// (compose-go, schema and interpolation included), since these machines
// have no Docker engine: the services are there, wired to each other, and
// the worker's secrets come from the environment, never from the file.
func TestComposeFile(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	opts, err := cli.NewProjectOptions([]string{"../docker-compose.yml"}, cli.WithOsEnv, cli.WithWorkingDirectory(".."))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("docker-compose.yml does not load: %v", err)
	}
	for _, name := range []string{"postgresql", "temporal", "temporal-ui", "worker"} {
		if _, err := p.GetService(name); err != nil {
			t.Errorf("service %s: %v", name, err)
		}
	}
	w, _ := p.GetService("worker")
	env := func(k string) string {
		if v := w.Environment[k]; v != nil {
			return *v
		}
		return ""
	}
	if env("TEMPORAL_ADDRESS") != "temporal:7233" || env("OPENAI_API_KEY") != "sk-from-the-environment" {
		t.Errorf("worker environment = %v", w.Environment)
	}
	if _, ok := w.DependsOn["temporal"]; !ok || w.Restart != types.RestartPolicyUnlessStopped {
		t.Errorf("the worker neither follows the server nor restarts until it answers: %+v, restart %q", w.DependsOn, w.Restart)
	}
	if w.Build == nil {
		t.Fatal("the worker is not built from the repository")
	}
	docker, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(docker), "go build -trimpath -o /out/worker ./worker") {
		t.Error("the Dockerfile does not build ./worker")
	}
	raw, _ := os.ReadFile("../docker-compose.yml")
	if strings.Contains(string(raw), "sk-") {
		t.Error("docker-compose.yml holds what looks like an API key")
	}
}
