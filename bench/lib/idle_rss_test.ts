// Unit tests of the idle RSS readings' pure parts: /proc status parsing, the medians per variant, the table and JSON.

import assert from "node:assert/strict";
import { idleRssJson, idleRssRow, idleRssTable, parseProcStatus, procStatusMb } from "./idle_rss.ts";

const STATUS = `Name:\tdeno
VmPeak:\t 1234567 kB
VmHWM:\t  120000 kB
VmRSS:\t   81920 kB
RssAnon:\t   32768 kB
RssFile:\t   49152 kB
RssShmem:\t       0 kB
Threads:\t12
`;

Deno.test("a status text gives VmRSS, RssFile and RssAnon in MB, not VmHWM", () => {
  assert.deepEqual(parseProcStatus(STATUS), { rss: 80, file: 48, anon: 32 });
});

Deno.test("one field reads by its whole name: VmHWM, not a field that merely ends or starts alike", () => {
  assert.deepEqual(procStatusMb(STATUS, "VmHWM"), 120000 / 1024);
  assert.deepEqual(procStatusMb(STATUS, "HWM"), NaN);
  assert.deepEqual(procStatusMb(STATUS, "Rss"), NaN);
});

Deno.test("a field the status text lacks reads as NaN, not zero", () => {
  const r = parseProcStatus("Name:\tdeno\nVmRSS:\t 1024 kB\n");
  assert.deepEqual(r.rss, 1);
  assert.deepEqual(Number.isNaN(r.file), true);
  assert.deepEqual(Number.isNaN(r.anon), true);
});

Deno.test("a variant's row is the median of its processes, each field on its own", () => {
  const row = idleRssRow("--http2", [
    { rss: 90, file: 50, anon: 40, ready: true },
    { rss: 80, file: 48, anon: 30, ready: true },
    { rss: 85, file: 52, anon: 35, ready: true },
  ]);
  assert.deepEqual([row.rss.median, row.rss.min, row.rss.max], [85, 80, 90]);
  assert.deepEqual([row.file.median, row.anon.median], [50, 35]);
  assert.deepEqual(row.ready, true);
});

Deno.test("a row is not ready when one process never answered /readyz, nor when none ran", () => {
  const one = idleRssRow("x", [{ rss: 1, file: 1, anon: 0, ready: true }, { rss: 1, file: 1, anon: 0, ready: false }]);
  assert.deepEqual(one.ready, false);
  assert.deepEqual(idleRssRow("x", []).ready, false);
});

Deno.test("the table gives each row's medians to one decimal", () => {
  const row = idleRssRow("off (default operators)", [{ rss: 83.04, file: 49.01, anon: 34.36, ready: true }]);
  const lines = idleRssTable([row]).split("\n");
  assert.deepEqual(lines.length, 3);
  assert.deepEqual(lines[2], "| off (default operators) | 83 | 49 | 34.4 | yes |");
});

Deno.test("the JSON names the first row idle_rss_mb and lists every row by feature", () => {
  const base = idleRssRow("off (default operators)", [{ rss: 80, file: 48, anon: 32, ready: true }]);
  const shard = idleRssRow("--shard", [{ rss: 78, file: 49, anon: 29, ready: false }]);
  const out = idleRssJson([base, shard]) as {
    idle_rss_mb: { median: number };
    idle_rss_file_mb: { median: number };
    idle_rss_anon_mb: { median: number };
    idle_rss_by_feature: { feature: string; rss_mb: { median: number }; ready: boolean }[];
  };
  assert.deepEqual([out.idle_rss_mb.median, out.idle_rss_file_mb.median, out.idle_rss_anon_mb.median], [80, 48, 32]);
  assert.deepEqual(out.idle_rss_by_feature.map((r) => [r.feature, r.rss_mb.median, r.ready]), [
    ["off (default operators)", 80, true],
    ["--shard", 78, false],
  ]);
});

Deno.test("the JSON of no rows is refused with the reason", () => {
  assert.throws(() => idleRssJson([]), /no idle RSS rows/);
});
