package testsuite

import (
	"context"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"
)

// loadCompose loads docker-compose.yml the way `docker compose` does (compose-go, schema
// and interpolation included), since these machines have no Docker engine to run it.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("TODOFLOW_PAYLOAD_KEY", "key-from-the-environment")
	opts, err := cli.NewProjectOptions([]string{"../docker-compose.yml"}, cli.WithOsEnv, cli.WithWorkingDirectory(".."))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("docker-compose.yml does not load: %v", err)
	}
	return p
}

func service(t *testing.T, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	s, err := p.GetService(name)
	if err != nil {
		t.Fatalf("service %s: %v", name, err)
	}
	return s
}

func env(s types.ServiceConfig, k string) string {
	if v := s.Environment[k]; v != nil {
		return *v
	}
	return ""
}

// TestComposeFile checks the layout of the Temporal server samples' PostgreSQL compose
// file: PostgreSQL, a schema step with the admin tools' temporal-sql-tool, the plain
// server image, a namespace step, the Web UI and our worker, each started only once
// what it needs is healthy or done; and no deprecated auto-setup image.
func TestComposeFile(t *testing.T) {
	p := loadCompose(t)
	raw, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "image: temporalio/auto-setup") {
		t.Error("docker-compose.yml uses the deprecated temporalio/auto-setup image")
	}
	if strings.Contains(string(raw), "sk-") {
		t.Error("docker-compose.yml holds what looks like an API key")
	}

	images := map[string]string{
		"postgresql":         "postgres:",
		"temporal-schema":    "temporalio/admin-tools:",
		"temporal":           "temporalio/server:",
		"temporal-namespace": "temporalio/admin-tools:",
		"temporal-ui":        "temporalio/ui:",
	}
	for name, prefix := range images {
		s := service(t, p, name)
		tag, ok := strings.CutPrefix(s.Image, prefix)
		if !ok || tag == "" || tag == "latest" {
			t.Errorf("%s: image %q; want %s with a pinned tag", name, s.Image, prefix)
		}
	}
	for _, s := range p.Services {
		if strings.Contains(s.Image, "auto-setup") {
			t.Errorf("%s uses the deprecated image %s", s.Name, s.Image)
		}
	}
	if got, want := slices.Sorted(slices.Values(p.ServiceNames())), []string{"postgresql", "temporal", "temporal-namespace", "temporal-schema", "temporal-ui", "worker"}; !slices.Equal(got, want) {
		t.Errorf("services %v; want %v", got, want)
	}

	// Who waits for whom, and for what.
	deps := []struct{ service, on, condition string }{
		{"temporal-schema", "postgresql", types.ServiceConditionHealthy},
		{"temporal", "temporal-schema", types.ServiceConditionCompletedSuccessfully},
		{"temporal-namespace", "temporal", types.ServiceConditionHealthy},
		{"temporal-ui", "temporal", types.ServiceConditionHealthy},
		{"worker", "temporal", types.ServiceConditionHealthy},
		{"worker", "temporal-namespace", types.ServiceConditionCompletedSuccessfully},
	}
	for _, d := range deps {
		got, ok := service(t, p, d.service).DependsOn[d.on]
		if !ok || got.Condition != d.condition {
			t.Errorf("%s depends on %s with %+v; want condition %s", d.service, d.on, got, d.condition)
		}
	}
	// Every condition can be met: a service waited for as healthy has a health check,
	// and one waited for as completed is a one-shot that exits.
	for _, s := range p.Services {
		for on, d := range s.DependsOn {
			dep := service(t, p, on)
			switch d.Condition {
			case types.ServiceConditionHealthy:
				if dep.HealthCheck == nil || len(dep.HealthCheck.Test) == 0 || dep.HealthCheck.Disable {
					t.Errorf("%s waits for %s to be healthy, which has no health check", s.Name, on)
				}
			case types.ServiceConditionCompletedSuccessfully:
				if dep.Restart == types.RestartPolicyAlways || dep.Restart == types.RestartPolicyUnlessStopped {
					t.Errorf("%s waits for %s to complete, which restarts %s", s.Name, on, dep.Restart)
				}
			}
		}
	}

	// The server on PostgreSQL, with our dynamic config mounted where it reads it.
	srv := service(t, p, "temporal")
	for k, want := range map[string]string{"DB": "postgres12", "DB_PORT": "5432", "POSTGRES_SEEDS": "postgresql", "BIND_ON_IP": "0.0.0.0"} {
		if got := env(srv, k); got != want {
			t.Errorf("temporal: %s=%q; want %q", k, got, want)
		}
	}
	dynPath := env(srv, "DYNAMIC_CONFIG_FILE_PATH")
	dyn := mountedConfig(t, p, srv, path.Join("/etc/temporal", dynPath))
	var dynamic map[string][]struct {
		Value       any            `yaml:"value"`
		Constraints map[string]any `yaml:"constraints"`
	}
	if err := yaml.Unmarshal([]byte(dyn), &dynamic); err != nil {
		t.Errorf("the dynamic config is not the server's format: %v\n%s", err, dyn)
	}
	if v := dynamic["system.enableActivityEagerExecution"]; len(v) != 1 || v[0].Value != true {
		t.Errorf("the dynamic config does not turn eager activities on: %v", dynamic)
	}
	if v := dynamic["system.forceSearchAttributesCacheRefreshOnRead"]; len(v) != 1 || v[0].Value != true {
		t.Errorf("the dynamic config does not make new search attributes usable at once: %v", dynamic)
	}
	// Neither the frontend nor the Web UI authenticates anyone: the host's loopback only.
	if !publishedOnLoopback(srv, "7233", 7233) {
		t.Errorf("temporal publishes %+v; want 7233 on 127.0.0.1 only", srv.Ports)
	}

	// The schema step: both databases created and brought to the shipped schema.
	schema := service(t, p, "temporal-schema")
	script := mountedConfig(t, p, schema, entrypointScript(t, schema))
	for _, want := range []string{
		"temporal-sql-tool --plugin postgres12 --ep postgresql -p 5432 -u temporal",
		"--db temporal create", "--db temporal setup-schema -v 0.0", "--db temporal update-schema -d $schema/temporal/versioned",
		"--db temporal_visibility create", "--db temporal_visibility setup-schema -v 0.0",
		"--db temporal_visibility update-schema -d $schema/visibility/versioned",
		"schema=/etc/temporal/schema/postgresql/v12", "set -eu",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("the schema script lacks %q:\n%s", want, script)
		}
	}
	if env(schema, "SQL_PASSWORD") != "temporal" {
		t.Errorf("temporal-schema has no SQL_PASSWORD for temporal-sql-tool")
	}

	// The namespace step.
	ns := service(t, p, "temporal-namespace")
	nsScript := mountedConfig(t, p, ns, entrypointScript(t, ns))
	if env(ns, "TEMPORAL_ADDRESS") != "temporal:7233" || !strings.Contains(nsScript, "temporal operator namespace create --namespace default") {
		t.Errorf("temporal-namespace does not create the default namespace on temporal:7233:\n%s", nsScript)
	}

	ui := service(t, p, "temporal-ui")
	if env(ui, "TEMPORAL_ADDRESS") != "temporal:7233" {
		t.Errorf("temporal-ui: TEMPORAL_ADDRESS=%q", env(ui, "TEMPORAL_ADDRESS"))
	}
	if !publishedOnLoopback(ui, "8233", 8080) {
		t.Errorf("temporal-ui publishes %+v; want 8233 on 127.0.0.1 only", ui.Ports)
	}

	// The worker: built from the repository, configured from the environment.
	w := service(t, p, "worker")
	if env(w, "TEMPORAL_ADDRESS") != "temporal:7233" || env(w, "TEMPORAL_NAMESPACE") != "default" || env(w, "OPENAI_API_KEY") != "sk-from-the-environment" {
		t.Errorf("worker environment = %v", w.Environment)
	}
	// The payload key, the way to keep prompts out of the server's database, from the
	// environment of `docker compose`.
	if got := env(w, "TODOFLOW_PAYLOAD_KEY"); got != "key-from-the-environment" {
		t.Errorf("the worker's TODOFLOW_PAYLOAD_KEY is %q, not the one of the environment", got)
	}
	if w.Restart != types.RestartPolicyUnlessStopped {
		t.Errorf("the worker does not come back after the server drops it: restart %q", w.Restart)
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
}

// publishedOnLoopback says whether s publishes one port, target as published, on the
// host's 127.0.0.1 only.
func publishedOnLoopback(s types.ServiceConfig, published string, target uint32) bool {
	return len(s.Ports) == 1 && s.Ports[0].HostIP == "127.0.0.1" && s.Ports[0].Published == published && s.Ports[0].Target == target
}

// entrypointScript is the script a one-shot service runs: `/bin/sh FILE`.
func entrypointScript(t *testing.T, s types.ServiceConfig) string {
	t.Helper()
	if len(s.Entrypoint) != 2 || s.Entrypoint[0] != "/bin/sh" {
		t.Fatalf("%s: entrypoint %q; want /bin/sh SCRIPT", s.Name, s.Entrypoint)
	}
	return s.Entrypoint[1]
}

// mountedConfig is the content of the config that s mounts at target.
func mountedConfig(t *testing.T, p *types.Project, s types.ServiceConfig, target string) string {
	t.Helper()
	for _, c := range s.Configs {
		if c.Target == target {
			cfg, ok := p.Configs[c.Source]
			if !ok || cfg.Content == "" {
				t.Fatalf("%s mounts config %q at %s, which has no content", s.Name, c.Source, target)
			}
			return cfg.Content
		}
	}
	t.Fatalf("%s mounts nothing at %s (configs %+v)", s.Name, target, s.Configs)
	return ""
}
