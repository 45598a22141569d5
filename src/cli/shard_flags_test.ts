// Unit tests of the --shard* flags, through parseFlags as main.ts calls it.

import assert from "node:assert/strict";
import { FlagError, helpText, parseFlags } from "./flags.ts";
import { SHARD_DEFAULTS } from "./shard_flags.ts";

const base = ["--clusters", "prod"];

Deno.test("parseFlags() leaves sharding off by default and applies the shard defaults", () => {
  const f = parseFlags(base).shard;
  assert.equal(f.enabled, false);
  assert.equal(f.leaseDurationMs, SHARD_DEFAULTS.leaseDurationMs);
  assert.equal(f.renewDeadlineMs, 10_000);
});

Deno.test("parseFlags() reads --shard, --shard-warm, --shard-weight and the timing flags", () => {
  const f = parseFlags([
    ...base,
    "--shard",
    "--shard-warm",
    "--shard-weight",
    "2.5",
    "--shard-id",
    "team-a",
    "--shard-lease-duration",
    "12",
    "--shard-renew-deadline",
    "8",
    "--shard-renew-period",
    "1",
  ]).shard;
  assert.deepEqual(f, {
    enabled: true,
    warm: true,
    weight: 2.5,
    id: "team-a",
    leaseDurationMs: 12_000,
    renewDeadlineMs: 8_000,
    renewPeriodMs: 1_000,
  });
});

Deno.test("parseFlags() rejects bad shard flags with a one-line error naming the flag and the value", () => {
  const bad: [string[], RegExp][] = [
    [["--shard", "--shard-weight", "0"], /invalid --shard-weight "0": must be a number above 0/],
    [["--shard", "--shard-weight", "x"], /invalid --shard-weight "x"/],
    [
      ["--shard", "--shard-lease-duration", "10"],
      /--shard-lease-duration 10: it must be greater than --shard-renew-deadline/,
    ],
    [
      ["--shard", "--shard-renew-period", "6"],
      /--shard-renew-deadline 10: it must be greater than 2 × --shard-renew-period/,
    ],
    [["--shard", "--shard-lease-duration", "12.5"], /--shard-lease-duration 12.5: a Lease holds whole seconds/],
    [["--shard", "--shard-id", "Bad_Id"], /invalid --shard-id "Bad_Id"/],
    [["--shard-warm"], /--shard-warm needs --shard/],
    [["--shard", "--leader-elect"], /--shard and --leader-elect exclude each other/],
  ];
  for (const [args, message] of bad) {
    assert.throws(() => parseFlags([...base, ...args]), (err: Error) => {
      assert.ok(err instanceof FlagError, `${args.join(" ")}: ${err}`);
      assert.match(err.message, message);
      assert.doesNotMatch(err.message, /\n/);
      return true;
    });
  }
});

Deno.test("helpText() documents every shard flag", () => {
  for (
    const flag of [
      "--shard ",
      "--shard-id",
      "--shard-warm",
      "--shard-weight",
      "--shard-lease-duration",
      "--shard-renew-deadline",
      "--shard-renew-period",
    ]
  ) assert.ok(helpText().includes(flag), flag);
});
