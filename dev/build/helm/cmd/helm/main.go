// Command helm is the unmodified helm v4 command line, built from helm.sh/helm/v4 for the chart tests.
//
// It only wires helm's own root command to the process: arguments in, exit code out.
package main

import (
	"errors"
	"fmt"
	"os"

	helmcmd "helm.sh/helm/v4/pkg/cmd"
	"helm.sh/helm/v4/pkg/kube"
	// Client auth plugins (exec, OIDC), as in the release binary.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

func main() {
	// The field manager helm records in managedFields, as the release binary does.
	kube.ManagedFieldsManager = "helm"
	root, err := helmcmd.NewRootCmd(os.Stdout, os.Args[1:], helmcmd.SetupLogging)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		os.Exit(1)
	}
	if err := root.Execute(); err != nil {
		var exit helmcmd.CommandError
		if errors.As(err, &exit) {
			os.Exit(exit.ExitCode)
		}
		os.Exit(1)
	}
}
