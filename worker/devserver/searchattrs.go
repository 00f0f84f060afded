package devserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// parseType maps a type name, in any letter case as the CLI accepts it, to its enum, whose
// String gives the API's spelling (Keyword, KeywordList) back.
func parseType(name string) (enumspb.IndexedValueType, error) {
	for n, t := range enumspb.IndexedValueType_shorthandValue {
		if t != 0 && strings.EqualFold(n, name) {
			return enumspb.IndexedValueType(t), nil
		}
	}
	return 0, fmt.Errorf("unknown search attribute type %q (want one of Text, Keyword, Int, Double, Bool, Datetime, KeywordList)", name)
}

// registerWait bounds the wait for added attributes to be listed; a cluster with
// Elasticsearch visibility can take a few seconds.
const registerWait = 30 * time.Second

// EnsureSearchAttributes makes sure namespace has the search attributes attrs (name to type,
// as in Options.SearchAttributes), on the dev server or any other Temporal server. Missing
// ones are added through the operator service; an attribute that exists with another type,
// or a server that refuses the change (no permission, Temporal Cloud), is an error naming
// the attributes and the command to run instead. It returns once they are all listed.
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string, attrs map[string]string) error {
	if len(attrs) == 0 {
		return nil
	}
	want := make(map[string]enumspb.IndexedValueType, len(attrs))
	for name, typ := range attrs {
		t, err := parseType(typ)
		if err != nil {
			return fmt.Errorf("search attribute %q: %w", name, err)
		}
		want[name] = t
	}
	have, err := listedAttrs(ctx, c, namespace)
	if err != nil {
		return err
	}
	missing, err := missingAttrs(namespace, want, have)
	if err != nil || len(missing) == 0 {
		return err
	}
	req := &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: map[string]enumspb.IndexedValueType{}}
	for _, name := range missing {
		req.SearchAttributes[name] = want[name]
	}
	// AlreadyExists: another worker or starter added them a moment ago, the listing decides.
	if _, err := c.OperatorService().AddSearchAttributes(ctx, req); err != nil && !errors.As(err, new(*serviceerror.AlreadyExists)) {
		return fmt.Errorf("the server refused to add search attributes %s to namespace %q: %w; "+
			"ask its administrator to run %s (on Temporal Cloud, add them in the namespace settings or with tcld)",
			strings.Join(missing, ", "), namespace, err, createCommands(namespace, missing, want))
	}
	// Attributes are served from a cache that some servers refresh only periodically.
	ctx, cancel := context.WithTimeout(ctx, registerWait)
	defer cancel()
	for {
		if have, err = listedAttrs(ctx, c, namespace); err == nil {
			if missing, err = missingAttrs(namespace, want, have); err != nil || len(missing) == 0 {
				return err
			}
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("still not listed: %s", strings.Join(missing, ", "))
			}
			return fmt.Errorf("added search attributes to namespace %q, but they did not show up (%v): %w", namespace, err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// listedAttrs returns the custom and system attributes of namespace together: a wanted name
// that is a system attribute's conflicts as much as a custom one.
func listedAttrs(ctx context.Context, c client.Client, namespace string) (map[string]enumspb.IndexedValueType, error) {
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("listing the search attributes of namespace %q: %w", namespace, err)
	}
	have := map[string]enumspb.IndexedValueType{}
	maps.Copy(have, resp.GetSystemAttributes())
	maps.Copy(have, resp.GetCustomAttributes())
	return have, nil
}

// missingAttrs returns the wanted names that have lacks, sorted, or an error naming every
// attribute that exists with another type: those cannot be fixed by adding.
func missingAttrs(namespace string, want, have map[string]enumspb.IndexedValueType) ([]string, error) {
	var missing, wrong, conflicts, fix []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		switch got, ok := have[name]; {
		case !ok:
			missing = append(missing, name)
		case got != want[name]:
			wrong = append(wrong, name)
			conflicts = append(conflicts, fmt.Sprintf("%q is %s, todoflow needs %s", name, got, want[name]))
			fix = append(fix, fmt.Sprintf("`temporal operator search-attribute remove --namespace %s --name %s`", namespace, name))
		}
	}
	if len(wrong) > 0 {
		return nil, fmt.Errorf("search attributes of namespace %q have the wrong type: %s; a type cannot be changed in place: "+
			"remove them (%s, if nothing else uses them), then run %s, or use another namespace",
			namespace, strings.Join(conflicts, "; "), strings.Join(fix, ", "), createCommands(namespace, wrong, want))
	}
	return missing, nil
}

// createCommands spells out the CLI commands that create names.
func createCommands(namespace string, names []string, want map[string]enumspb.IndexedValueType) string {
	cmds := make([]string, len(names))
	for i, n := range names {
		cmds[i] = fmt.Sprintf("`temporal operator search-attribute create --namespace %s --name %s --type %s`", namespace, n, want[n])
	}
	return strings.Join(cmds, ", ")
}
