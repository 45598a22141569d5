// A bearer token kept in a file that is rotated underneath us (projected service-account tokens, kubeconfig tokenFile).

import { AuthError } from "../errors.ts";

/**
 * Reads a token file and re-reads it as soon as it changes.
 *
 * Guarantees: every `read()` stats the file (following symlinks, so kubelet's atomic `..data`
 * swap is seen at once) and re-reads it when its inode, size or mtime changed, and in any case
 * when the last read is older than `maxAgeMs` (60 s, client-go's period) to survive coarse
 * mtimes. Errors name the file, never its content.
 */
export class TokenFile {
  readonly #cluster: string;
  readonly path: string;
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  #token: string | undefined;
  #stamp = "";
  #readAt = -Infinity;

  constructor(cluster: string, path: string, options: { maxAgeMs?: number; now?: () => number } = {}) {
    this.#cluster = cluster;
    this.path = path;
    this.#maxAgeMs = options.maxAgeMs ?? 60_000;
    this.#now = options.now ?? Date.now;
  }

  /** Forgets the cached token so the next read goes to disk. */
  invalidate(): void {
    this.#stamp = "";
  }

  async read(): Promise<string> {
    let stamp: string;
    try {
      const st = await Deno.stat(this.path);
      stamp = `${st.ino}:${st.size}:${st.mtime?.getTime()}`;
    } catch (err) {
      throw new AuthError(this.#cluster, `cannot read token file ${this.path}: ${fsReason(err)}`);
    }
    const now = this.#now();
    if (this.#token !== undefined && stamp === this.#stamp && now - this.#readAt < this.#maxAgeMs) {
      return this.#token;
    }
    let text: string;
    try {
      text = await Deno.readTextFile(this.path);
    } catch (err) {
      throw new AuthError(this.#cluster, `cannot read token file ${this.path}: ${fsReason(err)}`);
    }
    const token = text.trim();
    if (!token) throw new AuthError(this.#cluster, `token file ${this.path} is empty`);
    this.#token = token;
    this.#stamp = stamp;
    this.#readAt = now;
    return token;
  }
}

/** A short, content-free reason for a failed file operation, e.g. "not found". */
export function fsReason(err: unknown): string {
  if (err instanceof Deno.errors.NotFound) return "not found";
  if (err instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (err instanceof Deno.errors.NotCapable) return "no read permission (run Deno with --allow-read)";
  if (err instanceof Deno.errors.IsADirectory) return "is a directory";
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    if (code === "ENOENT") return "not found";
    if (code === "EACCES") return "permission denied";
    if (typeof code === "string") return code;
    return err.name;
  }
  return "unreadable";
}
