// The worker behind KubeconfigParser: parses one untrusted kubeconfig text per message, off the hub's event loop, and
// answers the document or a one-line error.
//
// Guarantees: the worker posts READY once its modules are loaded, then answers every request exactly once with its
// `id`, in order; an error answer is one line naming the request's `path`, never the text (parseKubeconfigYaml's
// ConfigError, or the name of any other error).

import { parseKubeconfigYaml } from "./kubeconfig_yaml.ts";

/** One text to parse. */
export interface ParseRequest {
  id: number;
  /** How errors name the text (`/secret ns/name`). */
  path: string;
  text: string;
  /** Overrides the untrusted size cap (tests). */
  maxBytes?: number;
}

/** The answer to one request: the document (plain data), or why it was refused. */
export type ParseAnswer = { id: number; doc: unknown } | { id: number; error: string };

/** What the worker posts once, first, when its modules are loaded: the time limit counts from then. */
export const READY = { ready: true } as const;

/** Answers `request`; never throws. */
export function answer(request: ParseRequest): ParseAnswer {
  try {
    return {
      id: request.id,
      doc: parseKubeconfigYaml(request.path, request.text, { untrusted: true, maxBytes: request.maxBytes }),
    };
  } catch (err) {
    const known = err instanceof Error && err.name === "ConfigError";
    return {
      id: request.id,
      error: known
        ? (err as Error).message
        : `invalid kubeconfig ${request.path}: cannot be parsed (${err instanceof Error ? err.name : typeof err})`,
    };
  }
}

/** The worker's global scope, as far as this module uses it. */
interface WorkerScope {
  onmessage: ((event: MessageEvent<ParseRequest>) => void) | null;
  postMessage(message: ParseAnswer | typeof READY): void;
}

// Only inside a worker (a module worker's global has no `window`); importing this file elsewhere (tests) does nothing.
if (typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== "undefined") {
  const scope = globalThis as unknown as WorkerScope;
  scope.onmessage = (event) => scope.postMessage(answer(event.data));
  scope.postMessage(READY);
}
