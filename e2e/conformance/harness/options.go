package harness

import (
	"os"
	"testing"

	"sigs.k8s.io/gateway-api/conformance"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// Options are the suite's options for this project: the harness's GatewayClass, the
// GATEWAY-HTTP profile (the one whose core holds the Gateway tests), the features the
// controller claims besides the profile's core (GatewayInfrastructure: the Gateway's
// infrastructure labels and annotations on the LB Pods), every test that does not apply
// and whose features are claimed skipped by name, the implementation named honestly.
// The suite's own flags, given to the test binary, keep their effect for what these do
// not set (--report-output, --run-test, --debug, --timeout-config-overrides, ...); the
// class, profile, features, mode and implementation are these. only, when not empty, is
// the one test to run (--run-test).
func Options(t *testing.T, only string) suite.ConformanceOptions {
	t.Helper()
	opts := conformance.DefaultOptions(t)
	opts.GatewayClassName = GatewayClass
	opts.ConformanceProfiles = []suite.ConformanceProfileName{suite.GatewayHTTPConformanceProfileName}
	infra := infrastructureFeature(t)
	opts.SupportedFeatures = []features.FeatureName{features.SupportGateway, infra}
	claimed := []string{string(features.SupportGateway), string(infra),
		string(features.SupportHTTPRoute), string(features.SupportReferenceGrant)}

	var all []Test
	for _, c := range tests.ConformanceTests {
		var fs []string
		for _, f := range c.Features {
			fs = append(fs, string(f))
		}
		all = append(all, Test{Name: c.ShortName, Features: fs, Provisional: c.Provisional})
	}
	rows, err := Plan(all, claimed, only)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(os.Getenv("CONFORMANCE_TABLE"), os.Getenv("CONFORMANCE_SUITE_VERSION"), rows); err != nil {
		t.Fatal(err)
	}
	if only == "" {
		opts.SkipTests = append(opts.SkipTests, SkipNames(rows)...)
	} else {
		opts.RunTest = only
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

// infrastructureFeature is the feature of the Gateway's infrastructure labels and
// annotations on the generated resources: GatewayInfrastructure up to v1.6,
// GatewayInfrastructurePropagation on the suite's main branch.
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
