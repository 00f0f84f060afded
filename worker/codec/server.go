package codec

import (
	"net/http"
	"slices"

	"go.temporal.io/sdk/converter"
)

// DefaultOrigins are the Web UI origins of the embedded dev server.
var DefaultOrigins = []string{"http://localhost:8233", "http://127.0.0.1:8233"}

// Handler is the codec server the Web UI calls to show encrypted payloads
// (its "Codec Server endpoint" setting): POST /encode and /decode with
// JSON payloads, as the SDK's converter.NewPayloadCodecHTTPHandler serves
// them. Browsers call it from the UI's origin, so it answers the CORS
// preflight and names the origin, for the origins given only: anyone who
// can call it can decrypt, so serve it on localhost or behind your proxy's
// authentication.
func Handler(c *Codec, origins []string) http.Handler {
	codec := converter.NewPayloadCodecHTTPHandler(c)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && slices.Contains(origins, origin) {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
			h.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		codec.ServeHTTP(w, r)
	})
}
