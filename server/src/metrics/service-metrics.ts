import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Committed } from '../concierge/events/event.recorder.js';

/** What the gauges read at each scrape: this node's sockets, the store's open conversations and transcript backlog, and whether the store answers. */
export interface MetricsProbes {
  openSockets(): number;
  openConversations(): Promise<number>;
  outbox(): Promise<{ backlog: number; oldestAgeS: number }>;
  storeUp(): boolean;
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const REPLY_SECONDS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];

/**
 * The service's Prometheus metrics (README, Knowing how it goes), in a registry of its own: HTTP
 * requests by route template (never a raw path, so labels stay bounded), sockets, conversations,
 * turns by outcome, hook call and reply latency, the transcript outbox, the store, and prom-client's
 * process and event-loop metrics.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #requests = new Counter({
    name: 'concierge_http_requests_total',
    help: 'HTTP requests by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly #requestSeconds = new Histogram({
    name: 'concierge_http_request_duration_seconds',
    help: 'HTTP request duration by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  readonly #turns = new Counter({
    name: 'concierge_turns_total',
    help: 'Turns by outcome: accepted, resolved, or the reason they failed',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly #hookSeconds = new Histogram({
    name: 'concierge_hook_call_duration_seconds',
    help: "Each attempt of a turn's hook call",
    buckets: SECONDS,
    registers: [this.registry],
  });
  readonly #replySeconds = new Histogram({
    name: 'concierge_reply_latency_seconds',
    help: 'From a turn accepted to its reply',
    buckets: REPLY_SECONDS,
    registers: [this.registry],
  });

  constructor(probes: MetricsProbes) {
    const registers = [this.registry];
    new Gauge({
      name: 'concierge_open_sockets',
      help: 'Widget sockets this node holds',
      registers,
      collect() {
        this.set(probes.openSockets());
      },
    });
    new Gauge({
      name: 'concierge_store_up',
      help: '1 while the store answers, 0 during an outage',
      registers,
      collect() {
        this.set(probes.storeUp() ? 1 : 0);
      },
    });
    // Read from the store at each scrape; during an outage they read NaN (concierge_store_up says why).
    new Gauge({
      name: 'concierge_open_conversations',
      help: 'Open conversations in the store',
      registers,
      async collect() {
        this.set(await probes.openConversations().catch(() => Number.NaN));
      },
    });
    const backlog = new Gauge({
      name: 'concierge_transcript_outbox_backlog',
      help: 'Transcript events waiting to be delivered',
      registers,
    });
    new Gauge({
      name: 'concierge_transcript_outbox_oldest_age_seconds',
      help: 'Age of the oldest transcript event waiting',
      registers,
      async collect() {
        const outbox = await probes.outbox().catch(() => ({ backlog: Number.NaN, oldestAgeS: Number.NaN }));
        backlog.set(outbox.backlog);
        this.set(outbox.oldestAgeS);
      },
    });
    // Under their standard names (process_cpu_seconds_total, nodejs_eventloop_lag_seconds, ...), where stock dashboards look.
    collectDefaultMetrics({ register: this.registry });
  }

  /** One HTTP request as it finished: its route's template, or a fixed label where none matched. */
  request(route: string, method: string, status: number, seconds: number): void {
    const labels = { route, method, status: String(status) };
    this.#requests.inc(labels);
    this.#requestSeconds.observe(labels, seconds);
  }

  /** What committed: the turns' outcomes, hook attempts and reply latency it counted. */
  readonly committed = (list: readonly Committed[]): void => {
    for (const { tallies } of list) {
      for (const tally of tallies) {
        if (tally.turns) this.#turns.inc({ outcome: 'accepted' }, tally.turns);
        if (tally.resolvedAfterMs !== undefined) {
          this.#turns.inc({ outcome: 'resolved' });
          this.#replySeconds.observe(tally.resolvedAfterMs / 1000);
        }
        for (const reason of tally.failed ?? []) this.#turns.inc({ outcome: reason });
        for (const ms of tally.hookMs ?? []) this.#hookSeconds.observe(ms / 1000);
      }
    }
  };
}
