// The folder provider: kubeconfig files in --cluster-dir and every --kubeconfig file, watched; each context is a cluster.

import { basename, dirname, join, resolve } from "node:path";
import {
  ConfigError,
  type CredentialPolicy,
  type EnvSource,
  KubeconfigParser,
  kubeconfigTooLarge,
  loadContexts,
  MAX_UNTRUSTED_KUBECONFIG_BYTES,
  parseKubeconfigText,
  STRICT_CREDENTIAL_POLICY,
} from "../../../kube/mod.ts";
import { errorText, type Logger } from "../../../util/mod.ts";
import type { ClusterOffer } from "../cluster_offer.ts";
import type { ClusterRegistry } from "../registry.ts";

export interface FolderProviderOptions {
  registry: ClusterRegistry;
  /** The folder whose `*.yaml` files are kubeconfigs (`--cluster-dir`); may not exist yet. */
  dir?: string;
  /** Single kubeconfig files (`--kubeconfig`), watched too: trusted, even when they sit in the folder. */
  files?: string[];
  /** Passed to exec credential plugins (only PATH and HOME of it for untrusted files). */
  env?: EnvSource;
  /** What the folder's other files (untrusted) may hold. Default: inline credentials, https, no exec plugin. */
  policy?: CredentialPolicy;
  /** A burst of file events is read once this long after the last one. Default 100 ms. */
  debounceMs?: number;
  /** Everything is re-read this often anyway, for events a file system does not deliver. Default 10 s. */
  resyncMs?: number;
  /**
   * Parses the folder's (untrusted) files off the event loop once started, in a worker with a time limit; whoever
   * passes it starts it. Default: a KubeconfigParser of this provider's own, started and stopped with `start()` (the
   * start-up `scan()` before it parses on the caller's thread, under the same linear-time rules).
   */
  parser?: KubeconfigParser;
  logger: Logger;
}

interface Known {
  digest: string;
  names: string[];
}

/**
 * Keeps the registry in step with kubeconfig files.
 *
 * Guarantees: a `*.yaml` file added to the folder (or a `--kubeconfig` file that appears) is offered, context by
 * context; a file removed is withdrawn; a changed file is re-read and offered again, so the registry can tell a
 * credentials-only change from a server change. A file that stops parsing keeps its last good offers (an editor
 * mid-write must not disengage anything), is logged and named in the `providers.folder` section of /status. Names starting with `.` are skipped (Kubernetes' `..data`
 * links in a mounted Secret), and the folder is not searched recursively.
 *
 * Trust: the `--kubeconfig` files are the user's own, trusted as kubectl trusts them (their names are reserved); every
 * other file in the folder is untrusted (anyone who can write there): its contexts are held to `policy`, and one that
 * breaks it is offered with the refusal as its error, so it is shown and never engaged.
 *
 * Assumptions: inotify-style events may be coalesced or lost, so every file is also re-read every `resyncMs`; a file
 * whose bytes did not change is not parsed again.
 */
export class FolderProvider {
  readonly #o: FolderProviderOptions;
  readonly #dir: string | undefined;
  readonly #files: string[];
  readonly #known = new Map<string, Known>();
  /** The digest of each file that did not parse: not parsed again until its bytes change (a hostile file is slow). */
  readonly #invalid = new Map<string, string>();
  #scanning: Promise<void> | undefined;
  #again = false;
  /** Why the folder could not be listed at the last read, if it could not. */
  #listError: string | null = null;
  /** Why a folder is re-read on a timer only (no file events), if so. */
  #watchError: string | null = null;
  /** Whether a scan completed (start-up scans once before the hub starts, so in practice from the start). */
  #scanned = false;
  readonly #parser: KubeconfigParser;

  constructor(options: FolderProviderOptions) {
    this.#o = options;
    this.#parser = options.parser ?? new KubeconfigParser();
    this.#dir = options.dir === undefined ? undefined : resolve(options.dir);
    this.#files = [...new Set((options.files ?? []).map((f) => resolve(f)))];
    const watches = [...(this.#dir ? [this.#dir] : []), ...this.#files];
    if (watches.length > 0) {
      options.registry.attach("folder", () => ({
        state: this.#listError ? "unreachable" : "watching",
        synced: this.#scanned,
        watches,
        lastError: this.#listError ?? this.#watchError,
      }));
    }
  }

  /** Every file read so far. */
  files(): string[] {
    return [...this.#known.keys()].sort();
  }

  /** Context names offered by the last read, by file. */
  names(): Map<string, string[]> {
    return new Map([...this.#known].map(([f, k]) => [f, k.names]));
  }

  /**
   * Reads everything once. With `strict` (start-up), an unreadable or invalid file, or a missing `--kubeconfig`
   * file, throws ConfigError (the CLI exits 2, as kubectl would fail); otherwise it is logged and skipped.
   */
  async scan(options: { strict?: boolean } = {}): Promise<void> {
    const paths = new Set(this.#files);
    for (const f of await this.#folderFiles(options.strict === true)) paths.add(f);
    for (const path of paths) {
      let text: string;
      try {
        // A dropped file is untrusted: one over the size a kubeconfig may have is refused without reading it.
        const size = this.#files.includes(path) ? 0 : (await Deno.stat(path)).size;
        if (size > MAX_UNTRUSTED_KUBECONFIG_BYTES) {
          this.#o.registry.unusable("folder", path, `invalid kubeconfig ${path}: ${kubeconfigTooLarge(size)}`);
          continue;
        }
        text = await Deno.readTextFile(path);
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) {
          if (options.strict && this.#files.includes(path)) {
            throw new ConfigError(`cannot read kubeconfig ${path}: not found`);
          }
          this.#forget(path);
          continue;
        }
        // kube's loader words the reason exactly as at start-up before (e.g. the --allow-read to add).
        if (options.strict) await loadContexts({ files: [path] });
        this.#o.logger.error("cannot read kubeconfig file", { file: path, error: errorText(err) });
        this.#o.registry.unusable("folder", path, `cannot read kubeconfig ${path}: ${errorText(err)}`);
        continue;
      }
      await this.#read(path, text, options.strict === true);
    }
    for (const path of [...this.#known.keys()]) if (!paths.has(path)) this.#forget(path);
    this.#scanned = true;
  }

  /**
   * The parser of the folder's files, which `start()` starts when this provider made it: the other providers of
   * untrusted kubeconfigs (Secrets, Cluster API) may share it, so the hub runs one parse worker, not one each.
   */
  get parser(): KubeconfigParser {
    return this.#parser;
  }

  /** Watches until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    const parsing = this.#o.parser ? undefined : this.#parser.start(signal);
    const debounceMs = this.#o.debounceMs ?? 100;
    const resyncMs = this.#o.resyncMs ?? 10_000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.#rescan(), debounceMs);
    };
    const resync = setInterval(() => this.#rescan(), resyncMs);
    const watchers: Promise<void>[] = [];
    const dirs = [...new Set([...(this.#dir ? [this.#dir] : []), ...this.#files.map((f) => dirname(f))])];
    const fsWatchers: Deno.FsWatcher[] = [];
    for (const d of dirs) {
      try {
        const w = Deno.watchFs(d, { recursive: false });
        fsWatchers.push(w);
        watchers.push(
          (async () => {
            for await (const _ of w) soon();
          })().catch((err) => this.#o.logger.warn("folder watch stopped", { dir: d, error: errorText(err) })),
        );
      } catch (err) {
        // A folder that does not exist yet is picked up by the periodic re-read once it does.
        if (!(err instanceof Deno.errors.NotFound)) {
          this.#o.logger.warn("cannot watch folder; re-reading it periodically", { dir: d, error: errorText(err) });
          // E.g. fs.inotify.max_user_instances used up: changes are still seen, only later.
          this.#watchError = `cannot watch ${d} (${errorText(err)}); re-reading it every ${resyncMs / 1000} s instead`;
        }
      }
    }
    await new Promise<void>((r) => {
      if (signal.aborted) return r();
      signal.addEventListener("abort", () => r(), { once: true });
    });
    clearTimeout(timer);
    clearInterval(resync);
    for (const w of fsWatchers) w.close();
    await Promise.all(watchers);
    await this.#scanning;
    await parsing;
  }

  /** One re-read at a time; a request during a read runs once more afterwards. */
  #rescan(): void {
    if (this.#scanning) {
      this.#again = true;
      return;
    }
    this.#scanning = this.scan().catch((err) => {
      this.#o.logger.error("cannot read the cluster folder", { dir: this.#dir, error: errorText(err) });
    }).finally(() => {
      this.#scanning = undefined;
      if (this.#again) {
        this.#again = false;
        this.#rescan();
      }
    });
  }

  async #folderFiles(strict: boolean): Promise<string[]> {
    if (!this.#dir) return [];
    const out: string[] = [];
    try {
      for await (const e of Deno.readDir(this.#dir)) {
        if (e.name.startsWith(".") || !e.name.endsWith(".yaml") || e.isDirectory) continue;
        out.push(join(this.#dir, e.name));
      }
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) {
        this.#listError = null;
        return [];
      }
      if (strict) throw new ConfigError(`cannot list --cluster-dir ${this.#dir}: ${errorText(err)}`, { cause: err });
      this.#o.logger.error("cannot list the cluster folder", { dir: this.#dir, error: errorText(err) });
      this.#listError = `cannot list --cluster-dir ${this.#dir}: ${errorText(err)}`;
      return [...this.#known.keys()].filter((f) => dirname(f) === this.#dir);
    }
    this.#listError = null;
    return out.sort();
  }

  async #read(path: string, text: string, strict: boolean): Promise<void> {
    const digest = await sha256(text);
    if (this.#invalid.get(path) === digest) return; // its error stands as it was shown
    if (this.#known.get(path)?.digest === digest) {
      // Back to the bytes last offered (e.g. after an editor's partial write): nothing to re-offer, but the error goes.
      this.#o.registry.unusable("folder", path, undefined);
      return;
    }
    let doc;
    try {
      doc = await parseKubeconfigText(text, {
        source: path,
        env: this.#o.env,
        untrusted: this.#files.includes(path) ? undefined : this.#o.policy ?? STRICT_CREDENTIAL_POLICY,
        parser: this.#parser,
      });
    } catch (err) {
      if (strict) throw err;
      this.#invalid.set(path, digest);
      this.#o.logger.error("kubeconfig file is invalid; keeping what it registered before", {
        file: basename(path),
        error: errorText(err),
      });
      const kept = this.#known.get(path)?.names ?? [];
      this.#o.registry.unusable(
        "folder",
        path,
        `${errorText(err)}; ${
          kept.length ? `still serving what it registered before (${kept.join(", ")})` : "nothing registered from it"
        }`,
      );
      return;
    }
    this.#invalid.delete(path);
    this.#o.registry.unusable("folder", path, undefined);
    const offers: ClusterOffer[] = doc.contexts.map((c) => ({
      name: c.name,
      access: c.access,
      error: c.error,
      endpointDigest: c.endpointDigest,
      credentialsDigest: c.credentialsDigest,
    }));
    this.#known.set(path, { digest, names: offers.map((o) => o.name) });
    this.#o.registry.offer("folder", path, offers, this.#files.includes(path));
  }

  #forget(path: string): void {
    this.#invalid.delete(path);
    this.#o.registry.unusable("folder", path, undefined);
    if (!this.#known.delete(path)) return;
    this.#o.registry.withdraw("folder", path);
  }
}

async function sha256(text: string): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("");
}
