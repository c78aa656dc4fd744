// The Gateway API conformance suite (sigs.k8s.io/gateway-api/conformance, the version
// go.mod pins, its tests and manifests unmodified) against a controller installed by the
// harness on the full control plane. Run it with e2e/conformance/run.sh; see
// docs/conformance.md.
package conformance

import (
	"testing"

	"sigs.k8s.io/gateway-api/conformance"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"

	"github.com/gateway-reconcile/e2e/conformance/harness"
)

func TestConformance(t *testing.T) {
	env := harness.FromEnv(t)
	harness.Install(t, env, harness.SettingsFeatures(t))
	run := harness.RunTests()
	opts := harness.Options(t, run, harness.ClassFeatures(t, env))
	if len(run) > 0 {
		harness.WatchGateways(t)
	}
	opts.Hook = func(t *testing.T, test suite.ConformanceTest, _ *suite.ConformanceTestSuite) {
		if !t.Skipped() {
			harness.Dump(t)
		}
	}
	conformance.RunConformanceWithOptions(t, opts)
}
