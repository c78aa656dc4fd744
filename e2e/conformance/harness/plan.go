package harness

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// Test is what the plan needs of one of the suite's tests (suite.ConformanceTest).
type Test struct {
	Name        string
	Features    []string
	Provisional bool
}

// Applicable are the suite's tests that apply to a controller that programs no listener
// and no HTTP, GRPC, TLS, TCP or UDP route: the class's and the Gateway's own status, and
// what the Gateway's infrastructure puts on the generated Pods.
var Applicable = []string{
	"GatewayClassObservedGenerationBump",
	"GatewayObservedGenerationBump",
	"GatewayInfrastructureMetadata", // up to v1.6
	"GatewayInfrastructure",         // its name on the suite's main branch
	"GatewayInvalidParametersRef",
	"GatewayNameMaximumLength",
}

// listenerStatus are the suite's tests whose only features are the Gateway's (and
// ReferenceGrant, for a listener's certificate) but which assert status.listeners: each
// listener's conditions (Accepted, ResolvedRefs, Programmed), its supportedKinds or its
// attachedRoutes. Read one by one; a Gateway-only test the suite adds that is in neither
// list fails the plan, so that it gets read too.
var listenerStatus = map[string]string{
	"GatewayListenerUnsupportedProtocol":        "a listener's Accepted=False UnsupportedProtocol, the Gateway's Accepted=False ListenersNotValid",
	"GatewayInvalidRouteKind":                   "a listener's ResolvedRefs=False InvalidRouteKinds and its supportedKinds",
	"GatewayInvalidTLSConfiguration":            "a listener's ResolvedRefs=False for an invalid certificateRef",
	"GatewayModifyListeners":                    "the listeners' status after listeners are added and removed",
	"GatewaySecretInvalidReferenceGrant":        "a listener's ResolvedRefs=False RefNotPermitted",
	"GatewaySecretMissingReferenceGrant":        "a listener's ResolvedRefs=False RefNotPermitted",
	"GatewaySecretReferenceGrantAllInNamespace": "a listener's ResolvedRefs=True with a ReferenceGrant",
	"GatewaySecretReferenceGrantSpecific":       "a listener's ResolvedRefs=True with a ReferenceGrant",
	"GatewayPreserveForeignConditions":          "a foreign condition on status.listeners (it waits for the listener's status entry first)",
}

// Row is one test of the suite and what this run does with it.
type Row struct {
	Test
	Run    bool   // one of Applicable, run here
	Other  bool   // one of Applicable, not run here (only the test the run names runs)
	Skip   bool   // its features are all claimed: skipped by name (--skip-tests)
	Reason string // why it does not apply (empty when Run)
}

// Plan classifies every test of the suite. claimed are the features the run claims
// (the profile's core features included): a test needing only those and not applicable
// is skipped by name, any other one is left to the suite, which reports it not supported.
// only, when not empty, is the one test the run runs (the suite's --run-test).
func Plan(tests []Test, claimed []string, only string) ([]Row, error) {
	has := map[string]bool{}
	for _, f := range claimed {
		has[f] = true
	}
	apply := map[string]bool{}
	for _, n := range Applicable {
		apply[n] = true
	}
	var rows []Row
	var unread []string
	for _, t := range tests {
		r := Row{Test: t}
		all := true
		for _, f := range t.Features {
			all = all && has[f]
		}
		switch {
		case apply[t.Name] && (only == "" || only == t.Name):
			r.Run = true
		case apply[t.Name]:
			r.Other = true
		default:
			r.Reason = reason(t)
			if r.Reason == "" {
				unread = append(unread, t.Name)
			}
			r.Skip = all
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	if len(unread) > 0 {
		return rows, fmt.Errorf("tests of the suite that no rule classifies (read them, then list them in harness/plan.go): %s",
			strings.Join(unread, ", "))
	}
	return rows, nil
}

// reason: why a test does not apply, from its features (the first rule that matches),
// or from the list of tests that assert listener status.
func reason(t Test) string {
	for _, f := range t.Features {
		if strings.HasPrefix(f, "Mesh") {
			return "feature Mesh: not a service mesh"
		}
	}
	for _, f := range t.Features {
		for _, kind := range []string{"HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute"} {
			if strings.HasPrefix(f, kind) {
				return "feature " + f + ": no " + kind + " is programmed (this controller's routes are L34Routes)"
			}
		}
	}
	for _, f := range t.Features {
		switch {
		case strings.HasPrefix(f, "BackendTLSPolicy"):
			return "feature " + f + ": no route backend is programmed"
		case f == "ListenerSet":
			return "feature ListenerSet: no listener is programmed"
		case strings.HasPrefix(f, "GatewayFrontendClientCertificateValidation"), f == "GatewayHTTPListenerIsolation", f == "GatewayPort8080":
			return "feature " + f + ": a listener's behaviour; no listener is programmed"
		case f == "GatewayStaticAddresses", f == "GatewayAddressEmpty":
			return "feature " + f + ": the Gateway's spec.addresses are not read (its addresses are those of its L34Routes)"
		}
	}
	if what, ok := listenerStatus[t.Name]; ok {
		return "asserts status.listeners (" + what + "): no listener is programmed, no listener status written"
	}
	return ""
}

// SkipNames are the tests to skip by name.
func SkipNames(rows []Row) []string {
	var out []string
	for _, r := range rows {
		if r.Skip {
			out = append(out, r.Name)
		}
	}
	return out
}

// WriteTable writes the plan as a Markdown table to path (nothing when path is empty).
func WriteTable(path, suiteVersion string, rows []Row) error {
	if path == "" {
		return nil
	}
	var b strings.Builder
	run, skip, unsupported := 0, 0, 0
	for _, r := range rows {
		switch {
		case r.Run, r.Other:
			run++
		case r.Skip:
			skip++
		default:
			unsupported++
		}
	}
	fmt.Fprintf(&b, "Every test of the suite %s (`tests.ConformanceTests`, %d tests): %d apply, %d skipped by name (`--skip-tests`: their features are claimed), %d left to the suite (a feature not claimed: `NOT_SUPPORTED`).\n\n",
		suiteVersion, len(rows), run, skip, unsupported)
	b.WriteString("| test | features | in this run | why it does not apply |\n|---|---|---|---|\n")
	for _, r := range rows {
		what := "not supported"
		switch {
		case r.Run:
			what = "**runs**"
		case r.Other:
			what = "applies; not run here"
		case r.Skip:
			what = "skipped by name"
		}
		name := r.Name
		if r.Provisional {
			name += " (provisional)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, strings.Join(r.Features, ", "), what, r.Reason)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
