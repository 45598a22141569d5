// Posts Kubernetes Events at or above a level, aggregating repeats by count instead of flooding.

import { resourcePath } from "../kube/mod.ts";
import { type Clock, errorText, type Logger, SystemClock } from "../util/mod.ts";
import type { ApiClient } from "./reconciler.ts";

export type EventLevel = "Normal" | "Warning";

export interface EventRecorderOptions {
  api: ApiClient;
  /** Reported as the event's source component, e.g. "operator-hub". */
  component: string;
  /** Events below this level are not posted. Default "Warning", as in the seed's Kopf settings. */
  minLevel?: EventLevel;
  /** Repeats within this window bump `count` on the first event. Default 10 minutes. */
  aggregateWindowMs?: number;
  /** Remembered series at most; the oldest is forgotten first. Default 1000. */
  maxSeries?: number;
  clock?: Clock;
  logger?: Logger;
}

interface Series {
  namespace: string;
  name: string;
  count: number;
  firstAt: number;
  lastAt: number;
}

/**
 * Records events through the core/v1 Events API.
 *
 * Guarantees: `record` never throws (an event is a courtesy, not part of reconciliation), and the
 * same object, reason and message within the window produce one Event whose count grows.
 */
export class EventRecorder {
  readonly #o: EventRecorderOptions;
  readonly #clock: Clock;
  /** Made with the first Event: most clusters of a many-cluster hub never record one. */
  #series: Map<string, Series> | undefined;

  constructor(options: EventRecorderOptions) {
    this.#o = options;
    this.#clock = options.clock ?? new SystemClock();
  }

  async record(
    object: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; uid?: string } },
    type: EventLevel,
    reason: string,
    message: string,
  ): Promise<void> {
    if ((this.#o.minLevel ?? "Warning") === "Warning" && type === "Normal") return;
    const namespace = object.metadata.namespace ?? "default";
    const seriesKey = `${namespace}/${object.metadata.name}/${object.metadata.uid}/${type}/${reason}/${message}`;
    const now = this.#clock.now();
    const window = this.#o.aggregateWindowMs ?? 600_000;
    const series = this.#series ??= new Map();
    const existing = series.get(seriesKey);
    const ts = new Date(now).toISOString();
    try {
      if (existing && now - existing.firstAt < window) {
        existing.count++;
        existing.lastAt = now;
        await this.#o.api.request("PATCH", eventsPath(namespace, existing.name), {
          body: { count: existing.count, lastTimestamp: ts },
          contentType: "application/merge-patch+json",
        });
        return;
      }
      const name = `${object.metadata.name}.${now.toString(16)}${Math.floor(Math.random() * 0xffff).toString(16)}`;
      await this.#o.api.request("POST", eventsPath(namespace), {
        body: {
          apiVersion: "v1",
          kind: "Event",
          metadata: { name, namespace },
          involvedObject: {
            apiVersion: object.apiVersion,
            kind: object.kind,
            name: object.metadata.name,
            namespace,
            uid: object.metadata.uid,
          },
          type,
          reason,
          message,
          count: 1,
          firstTimestamp: ts,
          lastTimestamp: ts,
          source: { component: this.#o.component },
          reportingComponent: this.#o.component,
          reportingInstance: this.#o.component,
        },
      });
      series.delete(seriesKey);
      series.set(seriesKey, { namespace, name, count: 1, firstAt: now, lastAt: now });
      while (series.size > (this.#o.maxSeries ?? 1000)) {
        series.delete(series.keys().next().value!);
      }
    } catch (err) {
      if (existing) series.delete(seriesKey);
      this.#o.logger?.warn("could not post event", { reason, error: errorText(err) });
    }
  }
}

function eventsPath(namespace: string, name?: string): string {
  return resourcePath({ group: "", version: "v1", plural: "events", namespace, name });
}
