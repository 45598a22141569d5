// The protected port's certificate: PEM files watched for rotation, or a self-signed one made at start.

import { type Clock, errorText, SystemClock } from "../../util/mod.ts";
import { loadForge, makeCertificate, rsaKey, servingExtensions } from "./x509_certificates.ts";

/** A certificate chain and its private key, PEM-encoded: what Deno.serve takes as `cert` and `key`. */
export interface TlsPair {
  cert: string;
  key: string;
}

/** A certificate or key file is missing, unreadable or not PEM. */
export class TlsMaterialError extends Error {
  override name = "TlsMaterialError";
}

/** Reads `--tls-cert-file` and `--tls-private-key-file`. Throws TlsMaterialError naming the file and the reason. */
export async function readTlsFiles(certFile: string, keyFile: string): Promise<TlsPair> {
  const read = async (file: string, flag: string, marker: RegExp, what: string) => {
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch (err) {
      throw new TlsMaterialError(`cannot read ${flag} ${file}: ${errorText(err)}`, { cause: err });
    }
    if (!marker.test(text)) throw new TlsMaterialError(`${flag} ${file} holds no PEM ${what}`);
    return text;
  };
  return {
    cert: await read(certFile, "--tls-cert-file", /-----BEGIN CERTIFICATE-----/, "certificate"),
    key: await read(keyFile, "--tls-private-key-file", /-----BEGIN [A-Z ]*PRIVATE KEY-----/, "private key"),
  };
}

/**
 * A self-signed serving certificate, as controller-runtime makes when no files are given: RSA 2048, valid for a
 * year, `serverAuth`, for `localhost`, `127.0.0.1`, `::1` and the given names. Clients verify it only if told to
 * trust it; Prometheus scrapes it with `insecure_skip_verify`, as with kubebuilder's default.
 *
 * Made by x509_certificates.ts (a WebCrypto key pair, node-forge loaded on first use for the X.509 structure): a hub
 * given certificate files (or no protected port) never holds node-forge.
 */
export async function selfSignedTls(hostnames: string[] = []): Promise<TlsPair> {
  const forge = await loadForge();
  const { key, pem } = await rsaKey(forge);
  const now = Date.now();
  const subject = [{ name: "commonName", value: "operator-hub" }, { name: "organizationName", value: "operator-hub" }];
  const cert = makeCertificate(forge, {
    key,
    subject,
    notBefore: now - 5 * 60_000,
    notAfter: now + 365 * 24 * 3600_000,
    extensions: servingExtensions([...new Set(["localhost", ...hostnames])], ["127.0.0.1", "::1"]),
  });
  return { cert: forge.pki.certificateToPem(cert), key: pem };
}

export interface TlsFileWatchOptions {
  certFile: string;
  keyFile: string;
  /** The pair already in use, so only a change is reported. */
  current: TlsPair;
  /** Called with each new pair (both files read after the change); returns whether the pair was taken into use. */
  onChange(pair: TlsPair): boolean | Promise<boolean>;
  /** Called when the files cannot be read; the pair in use stays. */
  onError(err: TlsMaterialError): void;
  /** How often the files are read. Default 10 s (controller-runtime's certwatcher polls every 10 s too). */
  intervalMs?: number;
  clock?: Clock;
}

/**
 * Re-reads the certificate and key files until `signal` aborts, reporting each change of content.
 *
 * Why polling, not a file watcher: Kubernetes updates mounted Secrets by swapping a `..data` symlink, which
 * inotify-based watchers see only on the directory, and cert-manager or kubelet may rewrite in several steps;
 * comparing content every few seconds sees every rotation whatever the mechanism. A half-written pair (a new
 * certificate with the old key) is reported as a change; when `onChange` refuses it, the next poll offers it again.
 */
export async function watchTlsFiles(options: TlsFileWatchOptions, signal: AbortSignal): Promise<void> {
  const clock = options.clock ?? new SystemClock();
  let current = options.current;
  while (!signal.aborted) {
    await clock.sleep(options.intervalMs ?? 10_000, signal);
    if (signal.aborted) break;
    try {
      const next = await readTlsFiles(options.certFile, options.keyFile);
      if (next.cert === current.cert && next.key === current.key) continue;
      if (await options.onChange(next)) current = next;
    } catch (err) {
      if (err instanceof TlsMaterialError) options.onError(err);
      else throw err;
    }
  }
}
