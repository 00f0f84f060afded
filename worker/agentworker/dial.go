package agentworker

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"

	"github.com/todoflow/todoflow/worker/codec"
)

// Dial connects to a Temporal server the way the `temporal` CLI does: the
// SDK's environment configuration (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
// TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE and the profiles of
// the config file) decides, and a non-empty address or namespace given here
// (a command-line flag) wins over it. It returns the client and the
// namespace in use.
//
// local skips the environment configuration: the embedded server wants
// none of a cluster's TLS or API key.
func Dial(ctx context.Context, address, namespace string, local bool, logger sdklog.Logger) (client.Client, string, error) {
	return DialWith(ctx, DialOptions{Address: address, Namespace: namespace, Local: local, Logger: logger})
}

// DialOptions are Dial's arguments, and what a client may carry besides:
// the metrics handler and the interceptors (see package worker/telemetry).
type DialOptions struct {
	// Address and Namespace win over the environment configuration when
	// set.
	Address, Namespace string
	// Local skips the environment configuration (the embedded server).
	Local  bool
	Logger sdklog.Logger
	// MetricsHandler receives the SDK's metrics and todoflow's own: the
	// activities report through the handler of the client their worker
	// was built on. Nil reports none.
	MetricsHandler client.MetricsHandler
	// Interceptors are added to the client; those that are worker
	// interceptors too (the SDK's tracing interceptor) also serve the
	// workers built on it.
	Interceptors []interceptor.ClientInterceptor
}

// DialWith is Dial with a metrics handler and interceptors.
func DialWith(ctx context.Context, o DialOptions) (client.Client, string, error) {
	var opts client.Options
	if !o.Local {
		var err error
		opts, err = envconfig.LoadDefaultClientOptions()
		if err != nil {
			return nil, "", fmt.Errorf("read the Temporal client configuration (TEMPORAL_* variables, %s): %w", envconfig.DefaultConfigFilePath(), err)
		}
	}
	opts.HostPort = cmp.Or(o.Address, opts.HostPort, client.DefaultHostPort)
	opts.Namespace = cmp.Or(o.Namespace, opts.Namespace, client.DefaultNamespace)
	if opts.ConnectionOptions.GrpcCompression == nil {
		comp, err := compressionSetting(os.Getenv(EnvGrpcCompression), opts.HostPort, o.Local)
		if err != nil {
			return nil, "", err
		}
		opts.ConnectionOptions.GrpcCompression = comp
	}
	opts.Logger = o.Logger
	opts.MetricsHandler = o.MetricsHandler
	opts.Interceptors = append(opts.Interceptors, o.Interceptors...)
	// With TODOFLOW_PAYLOAD_KEY set, every payload this client sends is
	// sealed, and the ones it reads are opened (see package codec).
	sealer, err := codec.FromEnv()
	if err != nil {
		return nil, "", err
	}
	if sealer != nil {
		opts.DataConverter = sealer.DataConverter()
		opts.FailureConverter = sealer.FailureConverter()
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, "", fmt.Errorf("connect to Temporal at %s (namespace %s): %w", opts.HostPort, opts.Namespace, err)
	}
	return c, opts.Namespace, nil
}

// EnvGrpcCompression overrides the choice of Compression: "gzip" (for a
// tunnel on localhost to a remote server) or "none" (for a server across a
// fast private network); "auto" or unset leaves it to Compression.
const EnvGrpcCompression = "TODOFLOW_GRPC_COMPRESSION"

// compressionSetting is the compression DialWith uses, given the value of
// EnvGrpcCompression.
func compressionSetting(value, hostPort string, local bool) (client.GrpcCompression, error) {
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "", "auto":
		return Compression(hostPort, local), nil
	case "gzip":
		return &client.GrpcCompressionGzip{}, nil
	case "none":
		return &client.GrpcCompressionNone{}, nil
	}
	return nil, fmt.Errorf("%s=%q: want gzip, none or auto", EnvGrpcCompression, value)
}

// Compression is the gRPC compression for a connection to the server at
// hostPort: none for the embedded server (local) or any server on a
// loopback address, the SDK's default (gzip) otherwise. Over loopback,
// gzip saves no time on the wire and costs CPU on both ends: the server
// answers in the compression it was asked in, so it compresses every
// workflow task, history page and result it sends back. A todoflow run
// moves its transcript through those payloads, which makes compression
// its largest avoidable cost on one machine (see BENCHMARKS.md).
func Compression(hostPort string, local bool) client.GrpcCompression {
	if local || loopback(hostPort) {
		return &client.GrpcCompressionNone{}
	}
	return nil
}

// loopback says whether hostPort names this machine by a loopback address
// or as localhost. A name that must be resolved is not taken for one: a
// lookup here would slow every dial and could be wrong by the time the
// connection is made.
func loopback(hostPort string) bool {
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		host = hostPort
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
