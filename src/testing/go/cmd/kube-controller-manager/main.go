// Command kube-controller-manager is the real Kubernetes controller manager, built from k8s.io/kubernetes for local
// test clusters (namespace lifecycle, garbage collection, service accounts, workloads: everything without nodes).
package main

import (
	"os"
	_ "time/tzdata" // CronJob time zones, as upstream

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
