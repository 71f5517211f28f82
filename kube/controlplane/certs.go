package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// pki is the control plane's own certificates, made fresh at every start:
// a CA, the API server's serving certificate for the loopback address, an
// administrator's client certificate (group system:masters) and the
// service-account signing key. Nothing is read from anywhere.
type pki struct {
	caPEM          []byte
	servingPEM     []byte
	servingKeyPEM  []byte
	adminPEM       []byte
	adminKeyPEM    []byte
	serviceKeyPEM  []byte
	caFile         string
	servingFile    string
	servingKeyFile string
	serviceKeyFile string
}

// newPKI makes the certificates and writes the ones the API server reads
// from files into dir.
func newPKI(dir string, host net.IP) (*pki, error) {
	ca, caKey, err := newCA("wasched-kube-ca")
	if err != nil {
		return nil, err
	}
	serving, servingKey, err := signLeaf(ca, caKey, cert.Config{
		CommonName: "kube-apiserver",
		AltNames: cert.AltNames{
			DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
			IPs:      []net.IP{host, net.ParseIP(firstServiceIP)},
		},
		Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return nil, err
	}
	admin, adminKey, err := signLeaf(ca, caKey, cert.Config{
		CommonName:   "wasched-admin",
		Organization: []string{"system:masters"},
		Usages:       []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	p := &pki{
		caPEM:          pemCerts(ca),
		servingPEM:     pemCerts(serving, ca),
		adminPEM:       pemCerts(admin),
		caFile:         filepath.Join(dir, "ca.crt"),
		servingFile:    filepath.Join(dir, "apiserver.crt"),
		servingKeyFile: filepath.Join(dir, "apiserver.key"),
		serviceKeyFile: filepath.Join(dir, "service-account.key"),
	}
	if p.servingKeyPEM, err = keyutil.MarshalPrivateKeyToPEM(servingKey); err != nil {
		return nil, err
	}
	if p.adminKeyPEM, err = keyutil.MarshalPrivateKeyToPEM(adminKey); err != nil {
		return nil, err
	}
	if p.serviceKeyPEM, err = keyutil.MakeEllipticPrivateKeyPEM(); err != nil {
		return nil, err
	}
	for file, data := range map[string][]byte{
		p.caFile:         p.caPEM,
		p.servingFile:    p.servingPEM,
		p.servingKeyFile: p.servingKeyPEM,
		p.serviceKeyFile: p.serviceKeyPEM,
	} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			return nil, fmt.Errorf("cannot write %s: %w", file, err)
		}
	}
	return p, nil
}

func newCA(name string) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	ca, err := cert.NewSelfSignedCACert(cert.Config{CommonName: name}, key)
	return ca, key, err
}

// signLeaf makes a key and a certificate for it signed by ca (client-go
// has no helper for this; Kubernetes' own lives in test utilities).
func signLeaf(ca *x509.Certificate, caKey crypto.Signer, config cert.Config) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	template := x509.Certificate{
		Subject:      pkix.Name{CommonName: config.CommonName, Organization: config.Organization},
		DNSNames:     config.AltNames.DNSNames,
		IPAddresses:  config.AltNames.IPs,
		SerialNumber: serial.Add(serial, big.NewInt(1)),
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  config.Usages,
	}
	der, err := x509.CreateCertificate(rand.Reader, &template, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	return leaf, key, err
}

func pemCerts(certs ...*x509.Certificate) []byte {
	data, err := cert.EncodeCertificates(certs...)
	if err != nil {
		panic(err) // encoding parsed certificates cannot fail
	}
	return data
}
