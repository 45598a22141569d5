// expiring-token-plugin: a client.authentication.k8s.io exec credential plugin for the tests, in the shape of the
// cluster inventory API's secretreader plugin (sigs.k8s.io/cluster-inventory-api@v0.1.0 plugins/secretreader), but
// with a short expirationTimestamp, which secretreader never sets.
//
// It reads KUBERNETES_EXEC_INFO (the consumer must set provideClusterInfo), takes spec.cluster.config.clusterName
// (the ClusterProfile's client.authentication.k8s.io/exec extension, as secretreader does), prints the token stored
// in --token-dir/<clusterName>, valid for --expires-in, and appends one JSON line per run to --log (when, which
// cluster, which expiry it issued) so a test can tell when the consumer refreshed. Standard library only.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

type execInfo struct {
	APIVersion string `json:"apiVersion"`
	Spec       struct {
		Cluster *struct {
			Config struct {
				ClusterName string `json:"clusterName"`
			} `json:"config"`
		} `json:"cluster"`
	} `json:"spec"`
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "expiring-token-plugin: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	tokenDir := flag.String("token-dir", "", "folder holding one token file per cluster name")
	expiresIn := flag.Duration("expires-in", time.Minute, "how long each token is declared valid")
	logFile := flag.String("log", "", "file to append one JSON line per run to")
	flag.Parse()
	var info execInfo
	if err := json.Unmarshal([]byte(os.Getenv("KUBERNETES_EXEC_INFO")), &info); err != nil {
		fail("KUBERNETES_EXEC_INFO is not ExecCredential JSON: %v", err)
	}
	if info.Spec.Cluster == nil || info.Spec.Cluster.Config.ClusterName == "" {
		fail("missing spec.cluster.config.clusterName (set provideClusterInfo and the exec extension)")
	}
	name := info.Spec.Cluster.Config.ClusterName
	if strings.ContainsAny(name, "/\\") || name == "." || name == ".." {
		fail("clusterName %q is not a plain name", name)
	}
	token, err := os.ReadFile(filepath.Join(*tokenDir, name))
	if err != nil {
		fail("cannot read the token of %q: %v", name, err)
	}
	now := time.Now().UTC()
	expiry := now.Add(*expiresIn)
	if *logFile != "" {
		line, _ := json.Marshal(map[string]any{
			"at": now.Format(time.RFC3339Nano), "cluster": name, "expires": expiry.Format(time.RFC3339Nano),
		})
		f, err := os.OpenFile(*logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			_, _ = f.Write(append(line, '\n'))
			_ = f.Close()
		}
	}
	apiVersion := info.APIVersion
	if apiVersion == "" {
		apiVersion = "client.authentication.k8s.io/v1"
	}
	out, _ := json.Marshal(map[string]any{
		"apiVersion": apiVersion,
		"kind":       "ExecCredential",
		"status": map[string]any{
			"token":               strings.TrimSpace(string(token)),
			"expirationTimestamp": expiry.Format(time.RFC3339Nano),
		},
	})
	os.Stdout.Write(out)
}
