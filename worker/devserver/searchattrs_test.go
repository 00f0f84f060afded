package devserver

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
)

func TestParseType(t *testing.T) {
	tests := []struct {
		in      string
		want    enumspb.IndexedValueType
		wantErr bool
	}{
		{"Int", enumspb.INDEXED_VALUE_TYPE_INT, false},
		{"int", enumspb.INDEXED_VALUE_TYPE_INT, false},
		{"Keyword", enumspb.INDEXED_VALUE_TYPE_KEYWORD, false},
		{"KEYWORDLIST", enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST, false},
		{"Text", enumspb.INDEXED_VALUE_TYPE_TEXT, false},
		{"Bool", enumspb.INDEXED_VALUE_TYPE_BOOL, false},
		{"Double", enumspb.INDEXED_VALUE_TYPE_DOUBLE, false},
		{"Datetime", enumspb.INDEXED_VALUE_TYPE_DATETIME, false},
		{"Integer", 0, true},
		{"", 0, true},
	}
	for _, tt := range tests {
		got, err := parseType(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("parseType(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
	for name, typ := range enumspb.IndexedValueType_shorthandValue {
		if got, err := parseType(name); typ != 0 && (err != nil || got.String() != name) {
			t.Errorf("parseType(%q) = %v (%v), want %s", name, got, err, name)
		}
	}
}

// fakeOperator is a server's search attribute registry behind the operator service.
type fakeOperator struct {
	operatorservice.OperatorServiceClient // unimplemented methods panic

	mu     sync.Mutex
	custom map[string]enumspb.IndexedValueType
	addErr error // returned by AddSearchAttributes instead of adding
	// lag hides added attributes from this many listings, like a server's refresh delay.
	lag    int
	hidden map[string]enumspb.IndexedValueType
	adds   []map[string]enumspb.IndexedValueType
}

func (f *fakeOperator) ListSearchAttributes(_ context.Context, req *operatorservice.ListSearchAttributesRequest, _ ...grpc.CallOption) (*operatorservice.ListSearchAttributesResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lag > 0 {
		f.lag--
	} else {
		maps.Copy(f.custom, f.hidden)
		f.hidden = nil
	}
	return &operatorservice.ListSearchAttributesResponse{
		CustomAttributes: maps.Clone(f.custom),
		SystemAttributes: map[string]enumspb.IndexedValueType{"WorkflowType": enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	}, nil
}

func (f *fakeOperator) AddSearchAttributes(_ context.Context, req *operatorservice.AddSearchAttributesRequest, _ ...grpc.CallOption) (*operatorservice.AddSearchAttributesResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.adds = append(f.adds, maps.Clone(req.GetSearchAttributes()))
	if f.addErr != nil {
		return nil, f.addErr
	}
	if f.hidden == nil {
		f.hidden = map[string]enumspb.IndexedValueType{}
	}
	maps.Copy(f.hidden, req.GetSearchAttributes())
	return &operatorservice.AddSearchAttributesResponse{}, nil
}

type fakeClient struct {
	client.Client // unimplemented methods panic
	op            *fakeOperator
}

func (c fakeClient) OperatorService() operatorservice.OperatorServiceClient { return c.op }

func TestEnsureSearchAttributes(t *testing.T) {
	const (
		kw = enumspb.INDEXED_VALUE_TYPE_KEYWORD
		in = enumspb.INDEXED_VALUE_TYPE_INT
	)
	want := map[string]string{"TodoTotal": "Int", "TodoCurrent": "Keyword"}
	tests := []struct {
		name     string
		op       *fakeOperator
		attrs    map[string]string
		wantErr  []string // substrings; nil means success
		wantAdds []map[string]enumspb.IndexedValueType
	}{
		{
			name:  "all present: nothing added",
			op:    &fakeOperator{custom: map[string]enumspb.IndexedValueType{"TodoTotal": in, "TodoCurrent": kw, "Other": kw}},
			attrs: want,
		},
		{
			name:     "missing ones added in one call, then waited for",
			op:       &fakeOperator{custom: map[string]enumspb.IndexedValueType{"TodoTotal": in}, lag: 3},
			attrs:    want,
			wantAdds: []map[string]enumspb.IndexedValueType{{"TodoCurrent": kw}},
		},
		{
			name:  "type conflict",
			op:    &fakeOperator{custom: map[string]enumspb.IndexedValueType{"TodoTotal": kw}},
			attrs: want,
			wantErr: []string{`"TodoTotal" is Keyword, todoflow needs Int`,
				"temporal operator search-attribute remove --namespace default --name TodoTotal",
				"temporal operator search-attribute create --namespace default --name TodoTotal --type Int"},
		},
		{
			name:    "conflict with a system attribute",
			op:      &fakeOperator{custom: map[string]enumspb.IndexedValueType{}},
			attrs:   map[string]string{"WorkflowType": "Int"},
			wantErr: []string{`"WorkflowType" is Keyword, todoflow needs Int`},
		},
		{
			name:  "permission denied",
			op:    &fakeOperator{custom: map[string]enumspb.IndexedValueType{}, addErr: serviceerror.NewPermissionDenied("not allowed", "")},
			attrs: want,
			wantErr: []string{"refused to add search attributes TodoCurrent, TodoTotal", "not allowed",
				"temporal operator search-attribute create --namespace default --name TodoCurrent --type Keyword",
				"temporal operator search-attribute create --namespace default --name TodoTotal --type Int"},
			wantAdds: []map[string]enumspb.IndexedValueType{{"TodoCurrent": kw, "TodoTotal": in}},
		},
		{
			name: "added by someone else meanwhile",
			op: &fakeOperator{custom: map[string]enumspb.IndexedValueType{}, addErr: serviceerror.NewAlreadyExists("exists"),
				hidden: map[string]enumspb.IndexedValueType{"TodoCurrent": kw, "TodoTotal": in}, lag: 1},
			attrs:    want,
			wantAdds: []map[string]enumspb.IndexedValueType{{"TodoCurrent": kw, "TodoTotal": in}},
		},
		{
			name:    "unknown type",
			op:      &fakeOperator{custom: map[string]enumspb.IndexedValueType{}},
			attrs:   map[string]string{"X": "Number"},
			wantErr: []string{`search attribute "X": unknown search attribute type "Number"`},
		},
		{
			name: "nothing wanted",
			op:   nil, // never called
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := EnsureSearchAttributes(context.Background(), fakeClient{op: tt.op}, "default", tt.attrs)
			if tt.wantErr == nil && err != nil {
				t.Fatalf("EnsureSearchAttributes() = %v", err)
			}
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("EnsureSearchAttributes() error = %v; want it to contain %q", err, w)
				}
			}
			if tt.op == nil {
				return
			}
			if !slices.EqualFunc(tt.op.adds, tt.wantAdds, maps.Equal) {
				t.Errorf("AddSearchAttributes calls = %v, want %v", tt.op.adds, tt.wantAdds)
			}
			if err == nil {
				for name, typ := range tt.attrs {
					pt, _ := parseType(typ)
					if tt.op.custom[name] != pt {
						t.Errorf("after success %q is %v, want %v", name, tt.op.custom[name], pt)
					}
				}
			}
		})
	}
}
