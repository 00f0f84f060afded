package testsuite

import (
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/api"

	"go.yaml.in/yaml/v3"

	"github.com/todoflow/todoflow/internal/localcluster"
)

// The tests of this file keep deploy/cluster.sh and docker-compose.yml on one server
// configuration, so that what the cluster tests run is what compose runs. They need no
// cluster.

// clusterServerBin is where deploy/cluster.sh caches temporal-server.
func clusterServerBin(t *testing.T) string {
	t.Helper()
	dir, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no cache folder: %v", err)
	}
	return filepath.Join(dir, "todoflow", "temporal-server-v1.29.1", "temporal-server")
}

// cluster.sh creates the search attributes the workflows need, no more, no fewer.
func TestClusterSearchAttributes(t *testing.T) {
	script, err := os.ReadFile("../deploy/cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^search_attributes=\(([^)]*)\)`).FindSubmatch(script)
	if m == nil {
		t.Fatal("deploy/cluster.sh has no search_attributes=(...) line")
	}
	got := map[string]string{}
	for _, kv := range strings.Fields(string(m[1])) {
		name, typ, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("search_attributes: %q is not NAME=TYPE", kv)
		}
		got[name] = typ
	}
	if want := api.SearchAttributes(); !maps.Equal(got, want) {
		t.Errorf("deploy/cluster.sh creates %v; the workflows need %v", got, want)
	}
}

// The compose file's server runs deploy/temporal/todoflow.yaml and the dynamic config of
// deploy/temporal/dynamicconfig.yaml, as cluster.sh does.
func TestComposeRunsTheClusterConfig(t *testing.T) {
	p := loadCompose(t)
	srv := service(t, p, "temporal")

	// The entrypoint reads ROOT/CONFIG/ENV.yaml; that file is the template of deploy/.
	args := []string(srv.Entrypoint)
	flag := func(name string) string {
		i := slices.Index(args, name)
		if i < 0 || i+1 >= len(args) {
			t.Fatalf("temporal's entrypoint %q has no %s", args, name)
		}
		return args[i+1]
	}
	if len(args) == 0 || args[0] != "temporal-server" || args[len(args)-1] != "start" {
		t.Fatalf("temporal's entrypoint %q; want temporal-server ... start", args)
	}
	target := path.Join(flag("--root"), flag("--config"), flag("--env")+".yaml")
	var source string
	for _, c := range srv.Configs {
		if c.Target == target {
			source = c.Source
		}
	}
	if source == "" {
		t.Fatalf("temporal mounts nothing at %s, which its entrypoint reads (configs %+v)", target, srv.Configs)
	}
	want, err := filepath.Abs("../deploy/temporal/todoflow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Configs[source].File; got != want {
		t.Errorf("temporal's server configuration is %q; want the file %s", got, want)
	}

	// The dynamic config, inline in compose, says what deploy/'s file says.
	dyn := mountedConfig(t, p, srv, path.Join(srv.WorkingDir, env(srv, "DYNAMIC_CONFIG_FILE_PATH")))
	file, err := os.ReadFile("../deploy/temporal/dynamicconfig.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var inCompose, inDeploy map[string]any
	if err := yaml.Unmarshal([]byte(dyn), &inCompose); err != nil {
		t.Fatalf("compose's dynamic config: %v", err)
	}
	if err := yaml.Unmarshal(file, &inDeploy); err != nil {
		t.Fatalf("deploy/temporal/dynamicconfig.yaml: %v", err)
	}
	if !reflect.DeepEqual(inCompose, inDeploy) {
		t.Errorf("compose's dynamic config and deploy/temporal/dynamicconfig.yaml differ:\ncompose: %v\ndeploy:  %v", inCompose, inDeploy)
	}

	// The server renders the template from compose's environment (with the binary that
	// cluster.sh builds, when it is there).
	t.Run("rendered", func(t *testing.T) {
		bin := clusterServerBin(t)
		if _, err := os.Stat(bin); err != nil {
			// Where the cluster tests are asked for (CI), the build must have happened.
			if localcluster.Requested() {
				t.Fatalf("no temporal-server built by deploy/cluster.sh (%s), though %s is set: deploy/cluster.sh build", bin, localcluster.RequestVar)
			}
			t.Skipf("no temporal-server built by deploy/cluster.sh (%s): deploy/cluster.sh build", bin)
		}
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "cfg"), 0o755); err != nil {
			t.Fatal(err)
		}
		tmpl, err := os.ReadFile(want)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "cfg", "todoflow.yaml"), tmpl, 0o644); err != nil {
			t.Fatal(err)
		}
		// render-config reads --config from the working folder (start joins it to --root).
		cmd := exec.Command(bin, "--root", root, "--config", "cfg", "--env", "todoflow", "render-config")
		cmd.Dir = root
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		for k, v := range srv.Environment {
			if v != nil {
				cmd.Env = append(cmd.Env, k+"="+*v)
			}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("temporal-server render-config with compose's environment: %v\n%s", err, out)
		}
		for _, want := range []string{
			"pluginName: postgres12", "connectAddr: postgresql:5432", "databaseName: temporal_visibility",
			"numHistoryShards: 4", "visibilityStore: visibility", "bindOnIP: 0.0.0.0",
			"broadcastAddress: 127.0.0.1", "filepath: config/dynamicconfig/todoflow.yaml", "grpcPort: 7233",
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("the rendered configuration lacks %q:\n%s", want, out)
			}
		}
	})
}
