package workflows

import (
	"errors"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/todo"
)

func todoPolicy(p string) todo.Config { return todo.Config{InProgressPolicy: todo.Policy(p)} }

func asContinueAsNew(err error, target **workflow.ContinueAsNewError) bool {
	return errors.As(err, target)
}
