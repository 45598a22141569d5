// Makes X.509 certificates: an RSA 2048 key from WebCrypto, an X.509 structure built and signed by node-forge. The
// protected port's self-signed certificate and the admission port's CA and serving certificates are all made here.

// @ts-types="@types/node-forge"
import type forgeModule from "node-forge";

/** node-forge, as {@linkcode loadForge} returns it. */
export type Forge = typeof forgeModule;

/** An RSA private key as node-forge signs with it. */
export type RsaPrivateKey = forgeModule.pki.rsa.PrivateKey;

/**
 * node-forge, loaded on first use rather than with the module: a hub given certificate files (or serving no TLS port)
 * never holds it.
 */
export async function loadForge(): Promise<Forge> {
  return (await import("node-forge")).default;
}

/** A fresh RSA 2048 key pair (WebCrypto: native, fast), as node-forge's key and as PKCS#8 PEM. */
export async function rsaKey(forge: Forge): Promise<{ key: RsaPrivateKey; pem: string }> {
  const pair = await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  ) as CryptoKeyPair;
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const pem = pemBlock("PRIVATE KEY", pkcs8);
  return { key: forge.pki.privateKeyFromPem(pem) as RsaPrivateKey, pem };
}

/** A certificate's subject or issuer: its distinguished name's fields. */
export type CertificateName = forgeModule.pki.CertificateField[];

/** What one certificate says and who signs it. */
export interface CertificateSpec {
  /** The key the certificate certifies (its public half goes in). */
  key: RsaPrivateKey;
  subject: CertificateName;
  /** The signer's subject. Default: `subject` (self-signed). */
  issuer?: CertificateName;
  /** The key that signs it. Default: `key` (self-signed). */
  signer?: RsaPrivateKey;
  /** Validity, ms since the epoch. */
  notBefore: number;
  notAfter: number;
  // deno-lint-ignore no-explicit-any
  extensions: any[];
}

/**
 * A certificate signed with SHA-256 under a random positive 16-byte serial number.
 *
 * Guarantees: the serial number's first bit is clear (X.509 serials are positive integers); nothing is read from
 * `spec` after the call returns.
 */
export function makeCertificate(forge: Forge, spec: CertificateSpec): forgeModule.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(spec.key.n, spec.key.e);
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = new Date(spec.notBefore);
  cert.validity.notAfter = new Date(spec.notAfter);
  cert.setSubject(spec.subject);
  cert.setIssuer(spec.issuer ?? spec.subject);
  cert.setExtensions(spec.extensions);
  cert.sign(spec.signer ?? spec.key, forge.md.sha256.create());
  return cert;
}

/**
 * The extensions of a TLS serving certificate (not a CA, `serverAuth`) valid for `dnsNames` and `ipAddresses`, DNS
 * names first, each list in its given order.
 */
// deno-lint-ignore no-explicit-any
export function servingExtensions(dnsNames: readonly string[], ipAddresses: readonly string[]): any[] {
  return [
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    {
      name: "subjectAltName",
      altNames: [...dnsNames.map((value) => ({ type: 2, value })), ...ipAddresses.map((ip) => ({ type: 7, ip }))],
    },
  ];
}

/** A random positive 16-byte serial number, hex. */
function serialNumber(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] &= 0x7f;
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function pemBlock(label: string, der: Uint8Array): string {
  let bin = "";
  for (const b of der) bin += String.fromCharCode(b);
  const lines = btoa(bin).match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}
