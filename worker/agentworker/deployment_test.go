package agentworker

import (
	"strings"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/workflows"
)

// A deployment and a build id, from the options or the environment, make the worker a
// pinned version of that deployment; neither leaves it unversioned; anything else is an
// error naming what is missing or wrong.
func TestDeploymentOptions(t *testing.T) {
	pinned := worker.DeploymentOptions{
		UseVersioning:             true,
		Version:                   worker.WorkerDeploymentVersion{DeploymentName: "todoflow", BuildID: "b2"},
		DefaultVersioningBehavior: workflow.VersioningBehaviorPinned,
	}
	own := worker.DeploymentOptions{UseVersioning: true, Version: worker.WorkerDeploymentVersion{DeploymentName: "mine", BuildID: "x"}, DefaultVersioningBehavior: workflow.VersioningBehaviorAutoUpgrade}
	for _, tt := range []struct {
		name              string
		opts              Options
		envName, envBuild string
		want              worker.DeploymentOptions
		err               string
	}{
		{name: "none", want: worker.DeploymentOptions{}},
		{name: "options", opts: Options{Deployment: "todoflow", BuildID: "b2"}, want: pinned},
		{name: "environment", envName: "todoflow", envBuild: "b2", want: pinned},
		{name: "options win", opts: Options{Deployment: "todoflow", BuildID: "b2"}, envName: "other", envBuild: "b9", want: pinned},
		{name: "the SDK's own", opts: Options{Worker: worker.Options{DeploymentOptions: own}}, want: own},
		{name: "no build id", opts: Options{Deployment: "todoflow"}, err: `deployment "todoflow" without a build id`},
		{name: "no deployment", envBuild: "b2", err: `build id "b2" without a deployment`},
		{name: "twice", opts: Options{Deployment: "todoflow", BuildID: "b2", Worker: worker.Options{DeploymentOptions: own}}, err: `deployment "todoflow" set twice`},
		{name: "delimiter", opts: Options{Deployment: "todo:flow", BuildID: "b2"}, err: `may not contain '.' or ':'`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvDeployment, tt.envName)
			t.Setenv(EnvBuildID, tt.envBuild)
			got, err := deploymentOptions(tt.opts)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("deploymentOptions = %+v, %v; want an error with %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("deploymentOptions = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// An unversioned worker records a build id that says its protocol, unless its caller chose
// one; a version records its own. Each is the id the workflow is told is its own.
func TestRecordedBuild(t *testing.T) {
	var plain worker.Options
	if got := recordedBuild(&plain); got != plain.BuildID || !strings.HasPrefix(got, workflows.MarkBuild("")) || len(got) <= len(workflows.MarkBuild("")) {
		t.Errorf("unversioned: recorded %q, worker build id %q; want one MarkBuild made of the binary's digest", got, plain.BuildID)
	}
	chosen := worker.Options{BuildID: "mine"}
	if got := recordedBuild(&chosen); got != "mine" || chosen.BuildID != "mine" {
		t.Errorf("a chosen build id: recorded %q, worker build id %q; want it kept", got, chosen.BuildID)
	}
	versioned := worker.Options{DeploymentOptions: worker.DeploymentOptions{UseVersioning: true, Version: worker.WorkerDeploymentVersion{DeploymentName: "todoflow", BuildID: "b2"}}}
	if got := recordedBuild(&versioned); got != "b2" || versioned.BuildID != "" {
		t.Errorf("a version: recorded %q, worker build id %q; want its deployment's build id, the SDK's to set", got, versioned.BuildID)
	}
}
