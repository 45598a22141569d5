// Operator files on the command line, as `kopf run app.py`: import each module and collect the operators it exports.

import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Operator } from "../runtime/mod.ts";
import { defineOperator, OperatorDefinitionError } from "./define_operator.ts";

/** An operator file that cannot be hosted; the message names the file and the problem on one line. */
export class OperatorFileError extends Error {
  override name = "OperatorFileError";
}

/**
 * Imports each file (relative to `cwd`) and returns every exported operator (a value with `name`, `resource` and a
 * `reconciler`, as defineOperator and defineHandlers make), in file and export order.
 *
 * Guarantees: a file that does not load, exports no operator, or whose operator definition is invalid (also when
 * defineOperator threw while the module loaded) throws an OperatorFileError naming the file; no file is skipped.
 */
export async function loadOperatorFiles(files: readonly string[], cwd: string): Promise<Operator[]> {
  const out: Operator[] = [];
  for (const file of files) {
    const path = isAbsolute(file) ? file : resolve(cwd, file);
    let module: Record<string, unknown>;
    try {
      module = await import(pathToFileURL(path).href);
    } catch (err) {
      if (err instanceof OperatorDefinitionError || (err as Error)?.name === "OperatorDefinitionError") {
        throw new OperatorFileError(`operator file ${file}: invalid operator definition: ${oneLine(err)}`, {
          cause: err,
        });
      }
      throw new OperatorFileError(`operator file ${file} does not load: ${oneLine(err)}`, { cause: err });
    }
    const found = Object.entries(module).filter(([, v]) => looksLikeOperator(v));
    if (found.length === 0) {
      const names = Object.keys(module);
      throw new OperatorFileError(
        `operator file ${file} exports no operator (exports: ${names.length ? names.join(", ") : "none"}): ` +
          "export the result of defineOperator() or defineHandlers()",
      );
    }
    for (const [exported, value] of found) {
      const op = value as Operator & { reconciler?: { reconcile?: unknown } };
      try {
        // Validates as defineOperator does, for operators built by hand.
        defineOperator({
          ...op,
          verbs: [...(op.verbs ?? [])],
          uses: [...(op.uses ?? [])],
          reconcile: op.reconciler?.reconcile as Operator["reconciler"]["reconcile"],
        });
      } catch (err) {
        throw new OperatorFileError(
          `operator file ${file}: export ${exported} is an invalid operator definition: ${oneLine(err)}`,
          { cause: err },
        );
      }
      out.push(op);
    }
  }
  return out;
}

function looksLikeOperator(v: unknown): boolean {
  return v !== null && typeof v === "object" && "reconciler" in v && "resource" in v && "name" in v;
}

function oneLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split("\n").map((l) => l.trim()).filter(Boolean).slice(0, 2).join(" ");
}
