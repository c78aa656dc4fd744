package harness

import (
	"os"
	"strings"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/conformance"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// Options are the suite's options for this project: the harness's GatewayClass, the
// GATEWAY-HTTP profile (the one whose core holds the Gateway tests), the features the
// controller publishes in the class's status.supportedFeatures (published: what
// ClassFeatures read from the class; the suite reads them from the class itself when it
// runs every test, and is given them when it runs named tests, since it infers them only
// for a whole run), every test that does not apply and whose features are claimed
// skipped by name, the implementation named honestly. Meridio-2 publishes no features:
// for its run the features are given by hand (ClassFeatures says so). The suite's own
// flags, given to the test binary, keep their effect for what these do not set
// (--report-output, --debug, --timeout-config-overrides, ...); the class, profile,
// features, mode, implementation and the tests run are these.
//
// run, when not empty (CONFORMANCE_RUN_TESTS), are the only tests to run, whatever the
// plan says of them: one test is the suite's own --run-test (the suite then runs it
// whatever its features); several are every other test of the suite skipped by name,
// with the features of the named tests that the class does not publish given by hand
// besides the class's, so that the suite does not set them aside as not supported. Such
// a run is a diagnosis, not a conformance claim: run.sh writes its files under other
// names. For GatewayStaticAddresses, which needs them, the suite's usable and unusable
// address pools (its --usable-address and --unusable-address) default to two
// documentation addresses (RFC 5737) when not given.
func Options(t *testing.T, run []string, published Features) suite.ConformanceOptions {
	t.Helper()
	opts := conformance.DefaultOptions(t)
	opts.GatewayClassName = GatewayClass
	opts.ConformanceProfiles = []suite.ConformanceProfileName{suite.GatewayHTTPConformanceProfileName}
	if !published.FromClass || len(run) > 0 {
		opts.SupportedFeatures = published.Names
	}
	claimed := []string{string(featuresHTTPRoute), string(featuresReferenceGrant)}
	for _, f := range published.Names {
		claimed = append(claimed, string(f))
	}

	var all []Test
	byName := map[string]suite.ConformanceTest{}
	for _, c := range tests.ConformanceTests {
		var fs []string
		for _, f := range c.Features {
			fs = append(fs, string(f))
		}
		all = append(all, Test{Name: c.ShortName, Features: fs, Provisional: c.Provisional})
		byName[c.ShortName] = c
	}
	rows, err := Plan(all, claimed, run)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(os.Getenv("CONFORMANCE_TABLE"), os.Getenv("CONFORMANCE_SUITE_VERSION"), rows); err != nil {
		t.Fatal(err)
	}
	switch {
	case len(run) == 0:
		opts.SkipTests = append(opts.SkipTests, SkipNames(rows)...)
	case len(run) == 1:
		opts.RunTest = run[0]
	default:
		named := map[string]bool{}
		for _, n := range run {
			named[n] = true
		}
		for _, r := range rows {
			if !named[r.Name] {
				opts.SkipTests = append(opts.SkipTests, r.Name)
			}
		}
		has := map[features.FeatureName]bool{}
		for _, f := range opts.SupportedFeatures {
			has[f] = true
		}
		for _, n := range run {
			for _, f := range byName[n].Features {
				if !has[f] {
					has[f] = true
					opts.SupportedFeatures = append(opts.SupportedFeatures, f)
					t.Logf("harness: feature %s given to the suite by hand (test %s is named in CONFORMANCE_RUN_TESTS; the class does not publish it)", f, n)
				}
			}
		}
	}
	for _, n := range run {
		if n == "GatewayStaticAddresses" {
			if len(opts.UsableNetworkAddresses) == 0 {
				opts.UsableNetworkAddresses = []gatewayv1.GatewaySpecAddress{{Type: ptr(gatewayv1.IPAddressType), Value: "192.0.2.10"}}
			}
			if len(opts.UnusableNetworkAddresses) == 0 {
				opts.UnusableNetworkAddresses = []gatewayv1.GatewaySpecAddress{{Type: ptr(gatewayv1.IPAddressType), Value: "198.51.100.10"}}
			}
			t.Logf("harness: GatewayStaticAddresses: usable address %v, unusable address %v",
				opts.UsableNetworkAddresses, opts.UnusableNetworkAddresses)
		}
	}
	if len(run) > 0 {
		t.Logf("harness: CONFORMANCE_RUN_TESTS: only %s run, whatever the plan says of them", strings.Join(run, ", "))
	}
	if out := os.Getenv("CONFORMANCE_REPORT"); out != "" && opts.ReportOutputPath == "" {
		opts.ReportOutputPath = out
	}
	opts.Mode = "default"
	opts.Implementation = confv1.Implementation{
		Organization: "gateway-reconcile",
		Project:      "gateway-reconcile",
		URL:          "none: not published; the gateway-reconcile repository",
		Version:      "0.1.0",
		Contact:      []string{"the gateway-reconcile repository (no external contact)"},
	}
	if c := os.Getenv("CONFORMANCE_CONTROLLER"); c == "meridio-2" {
		opts.Implementation = confv1.Implementation{
			Organization: "Nordix",
			Project:      "meridio-2 (its controller-manager, run by the gateway-reconcile repository for comparison)",
			URL:          "none recorded: built from a copy of its source",
			Version:      "unknown (source copy)",
			Contact:      []string{"none: run by the gateway-reconcile repository, not by its authors"},
		}
	}
	return opts
}

// featuresHTTPRoute and featuresReferenceGrant are claimed for the plan only: the tests
// that need them are skipped by name with their reason (the controller serves L34Routes).
const (
	featuresHTTPRoute      = features.SupportHTTPRoute
	featuresReferenceGrant = features.SupportReferenceGrant
)

// Features are the features the suite runs with, and where they come from.
type Features struct {
	Names []features.FeatureName
	// FromClass: read from the GatewayClass's status.supportedFeatures (ours); false:
	// given by hand (Meridio-2, which publishes none).
	FromClass bool
}

// SettingsFeatures are the names ours is configured to publish (its settings'
// supportedFeatures), as the suite's release spells them: the Gateway, and the Gateway's
// infrastructure labels and annotations on the generated resources
// (GatewayInfrastructure up to v1.6, GatewayInfrastructurePropagation in v1.5 and on the
// suite's main branch).
func SettingsFeatures(t *testing.T) []features.FeatureName {
	t.Helper()
	return []features.FeatureName{features.SupportGateway, infrastructureFeature(t)}
}

// infrastructureFeature is the suite's name of the infrastructure feature.
func infrastructureFeature(t *testing.T) features.FeatureName {
	t.Helper()
	for _, f := range features.AllFeatures.UnsortedList() {
		if f.Name == "GatewayInfrastructure" || f.Name == "GatewayInfrastructurePropagation" {
			return f.Name
		}
	}
	t.Fatal("the suite has no GatewayInfrastructure(Propagation) feature")
	return ""
}

func ptr[T any](v T) *T { return &v }
