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
// attachedRoutes. The controller writes the listener status (SPEC revision 5), and each
// was run alone against it (CONFORMANCE_RUN_TESTS; docs/conformance.md, "The listener
// tests, run alone"): none passes as a whole, each for the reason given here (what the
// test expects, and what the controller writes). A Gateway-only test the suite adds that
// is in neither list fails the plan, so that it gets read too.
var listenerStatus = map[string]string{
	"GatewayListenerUnsupportedProtocol":        "for a Gateway with an HTTP and an unsupported listener, expects Accepted=True with reason ListenersNotValid (written: reason Accepted, SPEC section 3) and HTTPRoute in the HTTP listener's supportedKinds (written: L34Route); its subtest with no listener accepted passes",
	"GatewayInvalidRouteKind":                   "expects HTTPRoute in the supportedKinds of a listener whose allowedRoutes.kinds lists InvalidRoute and HTTPRoute (written: none, since L34Route is not listed); its subtest with InvalidRoute alone passes",
	"GatewayInvalidTLSConfiguration":            "expects ResolvedRefs=False InvalidCertificateRef for 4 invalid certificateRefs, and HTTPRoute in supportedKinds: the LB terminates no TLS and certificateRefs are not read (written: ResolvedRefs=True, supportedKinds L34Route)",
	"GatewayModifyListeners":                    "expects HTTPRoute in supportedKinds and its HTTPRoute counted in attachedRoutes (1): only L34Routes attach (written: supportedKinds L34Route, attachedRoutes 0)",
	"GatewaySecretInvalidReferenceGrant":        "expects ResolvedRefs=False RefNotPermitted for a certificateRef no ReferenceGrant permits, and HTTPRoute in supportedKinds: certificateRefs are not read (written: ResolvedRefs=True, supportedKinds L34Route)",
	"GatewaySecretMissingReferenceGrant":        "expects ResolvedRefs=False RefNotPermitted for a certificateRef to another namespace without a ReferenceGrant, and HTTPRoute in supportedKinds: certificateRefs are not read (written: ResolvedRefs=True, supportedKinds L34Route)",
	"GatewaySecretReferenceGrantAllInNamespace": "expects HTTPRoute in supportedKinds (written: L34Route); the listener's Programmed=True and ResolvedRefs=True it expects hold",
	"GatewaySecretReferenceGrantSpecific":       "expects HTTPRoute in supportedKinds (written: L34Route); the listener's Programmed=True and ResolvedRefs=True it expects hold",
	"GatewayPreserveForeignConditions":          "provisional, in no suite run here (neither v1.6.3 nor main-branch commit e0a549a8628d has it): not verified; it seeds a foreign condition on the Gateway and on a listener entry, which the controller keeps (SPEC section 6)",
}

// Row is one test of the suite and what this run does with it.
type Row struct {
	Test
	Run    bool   // run here: one of Applicable, or named in CONFORMANCE_RUN_TESTS
	Forced bool   // run here although the plan does not run it by default (named)
	Other  bool   // one of Applicable, not run here (the run names other tests)
	Skip   bool   // its features are all claimed: skipped by name (--skip-tests)
	Reason string // why it does not apply by default (empty for one of Applicable)
}

// Plan classifies every test of the suite. claimed are the features the run claims
// (the profile's core features included): a test needing only those and not applicable
// is skipped by name, any other one is left to the suite, which reports it not supported.
// run, when not empty, are the only tests the run runs (CONFORMANCE_RUN_TESTS), the plan
// notwithstanding: a test that does not apply runs too (Forced), its reason kept; each
// name must be one of the suite's tests.
func Plan(tests []Test, claimed []string, run []string) ([]Row, error) {
	has := map[string]bool{}
	for _, f := range claimed {
		has[f] = true
	}
	apply := map[string]bool{}
	for _, n := range Applicable {
		apply[n] = true
	}
	named := map[string]bool{}
	for _, n := range run {
		named[n] = true
	}
	var rows []Row
	var unread []string
	for _, t := range tests {
		r := Row{Test: t}
		all := true
		for _, f := range t.Features {
			all = all && has[f]
		}
		if !apply[t.Name] {
			r.Reason = reason(t)
			if r.Reason == "" {
				unread = append(unread, t.Name)
			}
		}
		switch {
		case named[t.Name]:
			r.Run = true
			r.Forced = !apply[t.Name]
			delete(named, t.Name)
		case apply[t.Name] && len(run) == 0:
			r.Run = true
		case apply[t.Name]:
			r.Other = true
		default:
			r.Skip = all
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	if len(named) > 0 {
		var missing []string
		for n := range named {
			missing = append(missing, n)
		}
		sort.Strings(missing)
		return rows, fmt.Errorf("CONFORMANCE_RUN_TESTS names tests the suite does not have: %s", strings.Join(missing, ", "))
	}
	if len(unread) > 0 {
		return rows, fmt.Errorf("tests of the suite that no rule classifies (read them, then list them in harness/plan.go): %s",
			strings.Join(unread, ", "))
	}
	return rows, nil
}

// RunTests are the tests CONFORMANCE_RUN_TESTS names (separated by commas or spaces), in
// its order, each once; none when it is unset or empty.
func RunTests() []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range strings.FieldsFunc(os.Getenv("CONFORMANCE_RUN_TESTS"), func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n'
	}) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
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
		case f == "GatewayStaticAddresses":
			return "feature " + f + ": spec.addresses are refused (Accepted=False UnsupportedAddress: the Gateway's addresses come from its L34Routes); run alone, the test fails at its second step, which expects Accepted=True once the invalid address is removed"
		case f == "GatewayAddressEmpty":
			return "feature " + f + ": a Gateway's status.addresses come from its L34Routes only (and the suite v1.6.3 creates the test's Gateway without its spec.addresses); run alone, the test fails waiting for an address"
		}
	}
	if what, ok := listenerStatus[t.Name]; ok {
		return "asserts status.listeners: " + what
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
	run, forced, skip, unsupported := 0, 0, 0, 0
	for _, r := range rows {
		switch {
		case r.Forced:
			forced++
		case r.Run, r.Other:
			run++
		case r.Skip:
			skip++
		default:
			unsupported++
		}
	}
	fmt.Fprintf(&b, "Every test of the suite %s (`tests.ConformanceTests`, %d tests): %d apply, %d skipped by name (`--skip-tests`: their features are claimed), %d left to the suite (a feature not claimed: `NOT_SUPPORTED`)",
		suiteVersion, len(rows), run, skip, unsupported)
	if forced > 0 {
		fmt.Fprintf(&b, ", %d that the plan does not run named in CONFORMANCE_RUN_TESTS (this run runs only the tests named there)", forced)
	}
	b.WriteString(".\n\n")
	b.WriteString("| test | features | in this run | why it does not apply |\n|---|---|---|---|\n")
	for _, r := range rows {
		what := "not supported"
		switch {
		case r.Forced:
			what = "**runs** (named in CONFORMANCE_RUN_TESTS)"
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
