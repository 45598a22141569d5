// The admission port's certificates: made by the hub (its own CA, a serving certificate rotated before expiry) or read
// from a folder (cert-manager's mounted Secret: tls.crt, tls.key, ca.crt) and re-read when it changes.

import { type Clock, errorText, SystemClock } from "../../util/mod.ts";
import type { TlsPair } from "../http/tls_material.ts";
import {
  type CertificateName,
  loadForge,
  makeCertificate,
  rsaKey,
  type RsaPrivateKey,
  servingExtensions,
} from "../http/x509_certificates.ts";

/** What the webhook server serves and the installer puts into every webhook configuration. */
export interface WebhookCertificates {
  /** The serving pair in use now. */
  current(): TlsPair;
  /** The PEM CA bundle apiservers verify the serving certificate with. */
  caBundle(): string;
  /** Called after each change (a new serving pair, a new CA bundle), once the new material is in `current()`. */
  onChange(listener: () => void): void;
  /** Renews or re-reads until `signal` aborts. */
  start(signal: AbortSignal): Promise<void>;
}

/** The certificate material could not be made or read. */
export class WebhookCertificateError extends Error {
  override name = "WebhookCertificateError";
}

/** Options of {@linkcode SelfMadeCertificates}. */
export interface SelfMadeOptions {
  /** DNS names the serving certificate is valid for (besides `localhost`). */
  dnsNames?: string[];
  /** IP addresses it is valid for (besides 127.0.0.1 and ::1). */
  ipAddresses?: string[];
  /** The serving certificate's lifetime. Default 30 days. */
  servingLifetimeMs?: number;
  /** The CA's lifetime. Default 10 years: it lives in memory only, so a restart makes a new one anyway. */
  caLifetimeMs?: number;
  /** Called when a renewal fails (it is tried again after a thirtieth of the lifetime, at most a minute). */
  onError?(err: WebhookCertificateError): void;
  clock?: Clock;
}

/**
 * A CA made at start and a serving certificate it signs, renewed when two thirds of its lifetime passed
 * (cert-manager's default), without a restart.
 *
 * Guarantees:
 * - the CA bundle never changes while the process lives, so a configuration installed with it stays valid across every
 *   renewal of the serving certificate (only a restart makes a new CA, which the installer puts into every cluster);
 * - a renewed pair is in `current()` before `onChange` listeners run, a third of the lifetime before the old one
 *   expires;
 * - validity starts 5 minutes in the past (clock skew between the hub and an apiserver).
 */
export class SelfMadeCertificates implements WebhookCertificates {
  readonly #o: SelfMadeOptions;
  readonly #clock: Clock;
  readonly #listeners: (() => void)[] = [];
  #ca!: { subject: CertificateName; key: RsaPrivateKey; pem: string };
  #pair!: TlsPair;
  #notAfter = 0;
  #renewals = 0;

  private constructor(options: SelfMadeOptions) {
    this.#o = options;
    this.#clock = options.clock ?? new SystemClock();
  }

  /** Makes the CA and the first serving certificate. */
  static async create(options: SelfMadeOptions = {}): Promise<SelfMadeCertificates> {
    const c = new SelfMadeCertificates(options);
    const forge = await loadForge();
    const now = c.#clock.now();
    const { key: caKey } = await rsaKey(forge);
    const caCert = makeCertificate(forge, {
      key: caKey,
      subject: [{ name: "commonName", value: "operator-hub webhook CA" }],
      notBefore: now - 5 * 60_000,
      notAfter: now + (options.caLifetimeMs ?? 10 * 365 * 24 * 3600_000),
      extensions: [
        { name: "basicConstraints", cA: true, critical: true },
        { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
        { name: "subjectKeyIdentifier" },
      ],
    });
    c.#ca = { subject: caCert.subject.attributes, key: caKey, pem: forge.pki.certificateToPem(caCert) };
    await c.#issue();
    return c;
  }

  current(): TlsPair {
    return this.#pair;
  }

  caBundle(): string {
    return this.#ca.pem;
  }

  /** When the serving certificate in use expires (ms since the epoch, on the options' clock). */
  get notAfter(): number {
    return this.#notAfter;
  }

  /** How many times the serving certificate was renewed. */
  get renewals(): number {
    return this.#renewals;
  }

  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  async start(signal: AbortSignal): Promise<void> {
    const lifetime = this.#o.servingLifetimeMs ?? 30 * 24 * 3600_000;
    while (!signal.aborted) {
      const renewAt = this.#notAfter - lifetime / 3;
      await this.#clock.sleep(Math.max(0, renewAt - this.#clock.now()), signal);
      if (signal.aborted) break;
      try {
        await this.#issue();
      } catch (err) {
        // Try again shortly: the pair in use is still valid for a third of its lifetime.
        this.#o.onError?.(
          new WebhookCertificateError(`cannot renew the webhook serving certificate: ${errorText(err)}`, {
            cause: err,
          }),
        );
        await this.#clock.sleep(Math.min(lifetime / 30, 60_000), signal);
        continue;
      }
      this.#renewals++;
      for (const l of this.#listeners) l();
    }
  }

  async #issue(): Promise<void> {
    const forge = await loadForge();
    const now = this.#clock.now();
    const { key } = await rsaKey(forge);
    const lifetime = this.#o.servingLifetimeMs ?? 30 * 24 * 3600_000;
    // X.509 times have whole seconds: the one written is the one renewed against (a short lifetime loses up to 1 s).
    const notAfter = Math.floor((now + lifetime) / 1000) * 1000;
    const dns = [...new Set(["localhost", ...(this.#o.dnsNames ?? [])])];
    const ips = [...new Set(["127.0.0.1", "::1", ...(this.#o.ipAddresses ?? [])])];
    const cert = makeCertificate(forge, {
      key,
      subject: [{ name: "commonName", value: "operator-hub webhook" }],
      issuer: this.#ca.subject,
      signer: this.#ca.key,
      notBefore: now - 5 * 60_000,
      notAfter,
      extensions: servingExtensions(dns, ips),
    });
    this.#pair = { cert: forge.pki.certificateToPem(cert), key: forge.pki.privateKeyToPem(key) };
    this.#notAfter = notAfter;
  }
}

/** Options of {@linkcode CertDirCertificates}. */
export interface CertDirOptions {
  /** Holds `tls.crt`, `tls.key` and, optionally, `ca.crt` (without it the bundle is `tls.crt`). */
  dir: string;
  /** How often the files are read. Default 10 s (controller-runtime's certwatcher polls every 10 s too). */
  intervalMs?: number;
  /** Called when the files cannot be read or are refused; the material in use stays. */
  onError?(err: WebhookCertificateError): void;
  /** Refuses a pair the TLS stack cannot use (unparsable, a key not matching); returns why, or undefined. */
  check?(pair: TlsPair): string | undefined;
  clock?: Clock;
}

/**
 * Certificates from a folder, as cert-manager mounts a Certificate's Secret (`tls.crt`, `tls.key`, `ca.crt`).
 *
 * Guarantees: `create` throws WebhookCertificateError naming the file when one cannot be read; afterwards the files are
 * compared every `intervalMs` and a change is taken only when the pair is whole and accepted by `check` (a Secret
 * updated in several steps is taken at the poll after the last one); a refused or unreadable state keeps the material
 * in use and is reported once per distinct problem.
 */
export class CertDirCertificates implements WebhookCertificates {
  readonly #o: CertDirOptions;
  readonly #clock: Clock;
  readonly #listeners: (() => void)[] = [];
  #pair: TlsPair;
  #ca: string;
  #lastProblem = "";

  private constructor(options: CertDirOptions, material: { pair: TlsPair; ca: string }) {
    this.#o = options;
    this.#clock = options.clock ?? new SystemClock();
    this.#pair = material.pair;
    this.#ca = material.ca;
  }

  static async create(options: CertDirOptions): Promise<CertDirCertificates> {
    const material = await readCertDir(options.dir);
    const refused = options.check?.(material.pair);
    if (refused) throw new WebhookCertificateError(`${options.dir}: tls.crt and tls.key refused: ${refused}`);
    return new CertDirCertificates(options, material);
  }

  current(): TlsPair {
    return this.#pair;
  }

  caBundle(): string {
    return this.#ca;
  }

  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  async start(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.#clock.sleep(this.#o.intervalMs ?? 10_000, signal);
      if (signal.aborted) break;
      await this.poll();
    }
  }

  /** Reads the folder once and takes a change; resolves with whether something changed. */
  async poll(): Promise<boolean> {
    let next: { pair: TlsPair; ca: string };
    try {
      next = await readCertDir(this.#o.dir);
      const refused = this.#o.check?.(next.pair);
      if (refused) throw new WebhookCertificateError(`${this.#o.dir}: tls.crt and tls.key refused: ${refused}`);
    } catch (err) {
      const e = err instanceof WebhookCertificateError ? err : new WebhookCertificateError(errorText(err));
      if (e.message !== this.#lastProblem) this.#o.onError?.(e);
      this.#lastProblem = e.message;
      return false;
    }
    this.#lastProblem = "";
    if (next.pair.cert === this.#pair.cert && next.pair.key === this.#pair.key && next.ca === this.#ca) return false;
    this.#pair = next.pair;
    this.#ca = next.ca;
    for (const l of this.#listeners) l();
    return true;
  }
}

async function readCertDir(dir: string): Promise<{ pair: TlsPair; ca: string }> {
  const read = async (name: string, marker: RegExp, optional = false): Promise<string | undefined> => {
    let text: string;
    try {
      text = await Deno.readTextFile(`${dir}/${name}`);
    } catch (err) {
      if (optional && err instanceof Deno.errors.NotFound) return undefined;
      throw new WebhookCertificateError(`cannot read ${dir}/${name}: ${errorText(err)}`, { cause: err });
    }
    if (!marker.test(text)) throw new WebhookCertificateError(`${dir}/${name} holds no PEM ${name}`);
    return text;
  };
  const cert = (await read("tls.crt", /-----BEGIN CERTIFICATE-----/))!;
  const key = (await read("tls.key", /-----BEGIN [A-Z ]*PRIVATE KEY-----/))!;
  const ca = await read("ca.crt", /-----BEGIN CERTIFICATE-----/, true);
  return { pair: { cert, key }, ca: ca ?? cert };
}
