// The hub's --help, printed from the flag table (every flag, its value, default and section), and the did-you-mean
// for a misspelled flag, drawn from the same table. Pure.

import type { Flag } from "./flag_spec.ts";
import { FLAGS } from "./flag_table.ts";

/** The help's width, and the column each flag's description starts at. */
const WIDTH = 110;
const TEXT_COLUMN = 29;

const ROWS = Object.entries(FLAGS) as [string, Flag<unknown>][];

const USAGE = [
  "operator-hub: runs Kubernetes operators (built in: Uuid and Mirror) across many clusters from one process.",
  "",
  "Usage: deno task run --clusters prod,staging [flags] [OPERATOR_FILE.ts ...]",
  "",
  "Each OPERATOR_FILE is a module whose exported operators (defineOperator, defineHandlers) run beside the",
  "built-in ones, as `kopf run app.py` does; `--operators none` leaves only the files' operators.",
  "",
  "       deno task run cleanup --clusters prod,staging [cluster flags]   (operator-hub cleanup ...)",
  "removes the hub's finalizers from every object of those clusters, after the hub stopped (an uninstall);",
  "see `cleanup --help`.",
  "",
  "       deno run -A cli.ts init DIR [init flags]   (operator-hub init ...)",
  "writes a new operator project into DIR: its resource, handlers, a test on two clusters, deploy/;",
  "see `init --help`.",
  "",
  "       deno task crd FILE...   (operator-hub crd ...)",
  "prints the CRD of every resource the files define (defineResource); see `crd --help`.",
];

const EXIT_CODES =
  "Exit codes: 0 after a clean shutdown (SIGTERM/SIGINT), 1 on a crash, 2 on bad flags or kubeconfigs.";

/** The --help text: the usage, then every flag in the table's order under its section's heading, then the exit codes. */
export function helpText(): string {
  const lines = [...USAGE];
  let section: string | undefined | null = null;
  for (const [name, f] of ROWS) {
    if (f.section !== section) lines.push("", ...(f.section ? wrap(f.section, 0, WIDTH) : []));
    section = f.section;
    lines.push(...flagLines(name, f));
  }
  lines.push("", EXIT_CODES);
  return lines.join("\n");
}

/** `  --name ARG, -s ARG` then the description and its default, wrapped at TEXT_COLUMN. */
function flagLines(name: string, f: Flag<unknown>): string[] {
  const arg = f.arg === undefined ? "" : f.arg.startsWith("=") ? f.arg : ` ${f.arg}`;
  const label = `--${name}${arg}${f.short ? `, -${f.short}${arg}` : ""}`;
  const text = wrap(`${f.help}${defaultOf(f)}`, TEXT_COLUMN, WIDTH);
  if (label.length > TEXT_COLUMN - 3) return [`  ${label}`, ...text];
  return [`  ${label.padEnd(TEXT_COLUMN - 2)}${text[0].trimStart()}`, ...text.slice(1)];
}

/** ` (default: VALUE)`, ` (default: TEXT)` or ` (default: VALUE, TEXT)`; empty without either. */
function defaultOf(f: Flag<unknown>): string {
  const shown = [f.default, f.defaultText].filter((d) => d !== undefined);
  return shown.length ? ` (default: ${shown.join(", ")})` : "";
}

/** Words wrapped into lines of at most `width` characters (a longer word stands alone), each indented by `indent`. */
function wrap(paragraph: string, indent: number, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of paragraph.split(/\s+/)) {
    if (line && indent + line.length + 1 + word.length > width) {
      lines.push(" ".repeat(indent) + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(" ".repeat(indent) + line);
  return lines;
}

/** The known long flag closest to a misspelled one (edit distance ≤ 2, or a prefix either way), if any. */
export function didYouMean(flag: string): string | undefined {
  const name = flag.replace(/^-+/, "").split("=")[0];
  let best: { flag: string; score: number } | undefined;
  for (const [known] of ROWS) {
    const score = known.startsWith(name) || name.startsWith(known) ? 1 : editDistance(name, known);
    if (score <= 2 && (!best || score < best.score)) best = { flag: known, score };
  }
  return best ? `--${best.flag}` : undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = row[j];
      row[j] = next;
    }
  }
  return row[b.length];
}
