// Command local-pki writes the client CA of the local test clusters and client certificates signed by it.
//
// Usage: local-pki -ca-cert F -ca-key F -cert F -key F -cn NAME [-o GROUP]
//
// The CA (ECDSA P-256, self-signed) is created only when its files are missing; the client certificate is (re)written
// when it is missing, was not signed by the current CA, or names another subject. Keys are written with mode 0600.
// Certificates are valid for ten years: these clusters live on one machine for tests and demos.
package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

const validity = 10 * 365 * 24 * time.Hour

func main() {
	caCert := flag.String("ca-cert", "", "CA certificate file (PEM); created with -ca-key when missing")
	caKey := flag.String("ca-key", "", "CA private key file (PEM)")
	cert := flag.String("cert", "", "client certificate file to write (PEM)")
	key := flag.String("key", "", "client private key file to write (PEM)")
	cn := flag.String("cn", "", "client common name (the Kubernetes user name)")
	org := flag.String("o", "", "client organization (a Kubernetes group), optional")
	flag.Parse()
	if *caCert == "" || *caKey == "" || *cert == "" || *key == "" || *cn == "" {
		fmt.Fprintln(os.Stderr, "local-pki: -ca-cert, -ca-key, -cert, -key and -cn are required")
		os.Exit(2)
	}
	ca, signer, err := ensureCA(*caCert, *caKey)
	if err != nil {
		fmt.Fprintf(os.Stderr, "local-pki: %v\n", err)
		os.Exit(1)
	}
	if err := ensureClient(ca, signer, *cert, *key, *cn, *org); err != nil {
		fmt.Fprintf(os.Stderr, "local-pki: %v\n", err)
		os.Exit(1)
	}
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

func ensureCA(certFile, keyFile string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	if _, err := os.Stat(certFile); err == nil {
		return loadPair(certFile, keyFile)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: "operator-hub-local-client-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	if err := writePair(certFile, keyFile, der, key); err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func ensureClient(ca *x509.Certificate, caKey *ecdsa.PrivateKey, certFile, keyFile, cn, org string) error {
	if existing, _, err := loadPair(certFile, keyFile); err == nil {
		sameSubject := existing.Subject.CommonName == cn &&
			((org == "" && len(existing.Subject.Organization) == 0) ||
				(len(existing.Subject.Organization) == 1 && existing.Subject.Organization[0] == org))
		if sameSubject && existing.CheckSignatureFrom(ca) == nil && time.Now().Before(existing.NotAfter) {
			return nil
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	sn, err := serial()
	if err != nil {
		return err
	}
	subject := pkix.Name{CommonName: cn}
	if org != "" {
		subject.Organization = []string{org}
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber: sn,
		Subject:      subject,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	return writePair(certFile, keyFile, der, key)
}

func loadPair(certFile, keyFile string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, fmt.Errorf("%s or %s is not PEM", certFile, keyFile)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", certFile, err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", keyFile, err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, nil, errors.New(keyFile + " does not match " + certFile)
	}
	return cert, key, nil
}

func writePair(certFile, keyFile string, der []byte, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writeAtomic(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})); err != nil {
		return err
	}
	return writeAtomic(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".local-pki-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if existing, err := os.ReadFile(path); err == nil && bytes.Equal(existing, data) {
		return nil
	}
	return os.Rename(tmp.Name(), path)
}
