package agentworker

import (
	"fmt"
	"os"
	"strings"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/workflows"
)

// Environment variables of Options.Deployment and Options.BuildID.
const (
	EnvDeployment = "TODOFLOW_DEPLOYMENT"
	EnvBuildID    = "TODOFLOW_BUILD_ID"
)

// deploymentOptions are the SDK's Worker Versioning options of the shared queue's worker:
// with a deployment and a build id (opts, else the environment), the worker is that
// version of that worker deployment and the sessions it starts are pinned to it; with
// neither, opts.Worker's own (unversioned unless the caller set them). One without the
// other is an error, and so is a deployment named both ways.
//
// Pinned, because a session's history must replay on the build that wrote it: a session
// runs to its end on the version that started it, and a build whose command sequence
// differs only takes new sessions (docs/protocol.md, "Versions and upgrades").
func deploymentOptions(opts Options) (worker.DeploymentOptions, error) {
	name, build := strings.TrimSpace(opts.Deployment), strings.TrimSpace(opts.BuildID)
	if name == "" && build == "" {
		name, build = strings.TrimSpace(os.Getenv(EnvDeployment)), strings.TrimSpace(os.Getenv(EnvBuildID))
	}
	switch {
	case name == "" && build == "":
		return opts.Worker.DeploymentOptions, nil
	case name == "":
		return worker.DeploymentOptions{}, fmt.Errorf("build id %q without a deployment: set both (--deployment and --build-id, or %s and %s)", build, EnvDeployment, EnvBuildID)
	case build == "":
		return worker.DeploymentOptions{}, fmt.Errorf("deployment %q without a build id: set both (--deployment and --build-id, or %s and %s)", name, EnvDeployment, EnvBuildID)
	case opts.Worker.DeploymentOptions.UseVersioning:
		return worker.DeploymentOptions{}, fmt.Errorf("deployment %q set twice: in Options.Deployment (or %s) and in Options.Worker.DeploymentOptions; keep one", name, EnvDeployment)
	case strings.ContainsAny(name, ".:"):
		// The server writes a version as "<deployment>:<build id>" (before 1.29, with a dot).
		return worker.DeploymentOptions{}, fmt.Errorf("deployment %q: a deployment name may not contain '.' or ':'", name)
	}
	return worker.DeploymentOptions{
		UseVersioning:             true,
		Version:                   worker.WorkerDeploymentVersion{DeploymentName: name, BuildID: build},
		DefaultVersioningBehavior: workflow.VersioningBehaviorPinned,
	}, nil
}

// recordedBuild sets the build id an unversioned worker records in the workflow tasks it
// completes to one that says its protocol (workflows.MarkBuild), unless the caller chose
// one, and returns the id the worker records: a worker of another build that replays the
// session's history reads there which protocol started it (workflows/protocol.go). A
// version of a deployment records its own build id.
func recordedBuild(w *worker.Options) string {
	if w.DeploymentOptions.UseVersioning {
		return w.DeploymentOptions.Version.BuildID
	}
	if w.BuildID == "" {
		w.BuildID = workflows.MarkBuild(workflows.DefaultBuildID())
	}
	return w.BuildID
}
