package workflows

import "github.com/todoflow/todoflow/todo"

func todoPolicy(p string) todo.Config { return todo.Config{InProgressPolicy: todo.Policy(p)} }
