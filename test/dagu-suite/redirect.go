// Part of dagu-mcp-gateway (MIT), written for it: not a copy of any Dagu file.
//
// scripts/dagu-suite.ts adds this file to Dagu's conformance helper package (conformance/mcptest)
// through `go test -overlay`, in a build of the unmodified Dagu source, and renames the helper's own
// endpoint method to daguEndpoint in the overlay copy. The helper's MCP clients then connect to
// whatever this method returns:
//
//   - DAGU_SUITE_CONTROL unset: Dagu's own /mcp, unchanged;
//   - DAGU_SUITE_CONTROL set: the runner's control URL. The Dagu endpoint is posted there once per
//     test server; the runner starts a gateway in front of that Dagu and answers with the gateway's
//     MCP URL. Everything else the helper does (creating DAGs, starting runs, API keys) still talks
//     to Dagu's REST API directly.
package mcptest

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

var gatewayEndpoints sync.Map // *Server -> string

func (s *Server) endpoint() string {
	dagu := s.daguEndpoint()
	control := os.Getenv("DAGU_SUITE_CONTROL")
	if control == "" {
		return dagu
	}
	if known, ok := gatewayEndpoints.Load(s); ok {
		return known.(string)
	}
	gateway, err := startGateway(control, dagu)
	if err != nil {
		// An address that refuses connections at once, naming the failure: the test fails visibly
		// and never reaches Dagu's own /mcp by mistake.
		return "http://127.0.0.1:1/dagu-suite-control-failed/" + url.PathEscape(err.Error())
	}
	gatewayEndpoints.Store(s, gateway)
	return gateway
}

func startGateway(control, dagu string) (string, error) {
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Post(control, "text/plain", strings.NewReader(dagu))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	answer := strings.TrimSpace(string(body))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("control answered %d: %s", resp.StatusCode, answer)
	}
	return answer, nil
}
